//go:build ignore
// SPDX-License-Identifier: (GPL-2.0-only OR MIT)
/*
 * gpu_scheduler events of both generations. Every handler reads the job's *finished*
 * fence (context, seqno) through CO-RE, so <= 6.16 events (which only print pointers)
 * join on the same 64-bit key as 6.17+ events. The hardware fence (s_fence->parent)
 * is read where already set (run/done), the DRM client id where the kernel has it. The
 * reads are bpf/include/sched_reads.h's, shared with jobs.c.
 *
 * Each event has a tp_btf program (preferred) and a raw_tp twin with the same body
 * (bpf/include/twin_progs.h); raw_tp also serves BPF_PROG_TEST_RUN in the unit tests.
 * Both need CO-RE with the gpu-sched module's BTF; the last rung, a classic tracepoint, needs neither: it copies
 * the raw trace entry (ghostdriver.h, raw_copy) and user space decodes it with the
 * event's tracefs format, so it only has what the event prints (pointers on <= 6.16).
 */
#include "ghostdriver.h"
#include "drm_types.h"
#include "sched_reads.h"
#include "twin_progs.h"

char __license[] SEC("license") = "Dual MIT/GPL";

/* (struct drm_sched_job *, struct drm_sched_entity *): queue / run */
static __always_inline int on_job(__u16 hook, struct drm_sched_job___gd *job, void *entity)
{
	struct record *r = rec_reserve(hook);
	if (!r)
		return 0;
	record_sched_job(r, job);
	if (entity)
		r->entity = (__u64)entity;
	rec_submit(r);
	return 0;
}

/* (struct drm_sched_fence *): done / process_job */
static __always_inline int on_done(__u16 hook, struct drm_sched_fence___gd *sf)
{
	struct record *r = rec_reserve(hook);
	if (!r)
		return 0;
	r->ptr = (__u64)sf;
	record_sched_fence(r, sf);
	rec_submit(r);
	return 0;
}

/* (struct drm_sched_job *, struct dma_fence *dep): add_dep / unschedulable / wait_dep */
static __always_inline int on_dep(__u16 hook, struct drm_sched_job___gd *job, struct dma_fence *dep)
{
	struct record *r = rec_reserve(hook);
	if (!r)
		return 0;
	record_sched_job(r, job);
	if (dep) {
		read_fence(dep, &r->dep_ctx, &r->dep_seqno);
		r->flags |= RF_DEP_WIDE | RF_HAS_DEP;
	}
	rec_submit(r);
	return 0;
}

/* <= 6.16 */
TWIN_SCHED_JOB(, drm_sched_job, on_job, HOOK_DRM_SCHED_JOB)
TWIN_SCHED_JOB(, drm_run_job, on_job, HOOK_DRM_RUN_JOB)
TWIN_SCHED_DONE(, drm_sched_process_job, on_done, HOOK_DRM_SCHED_PROCESS_JOB)
TWIN_SCHED_DEP(, drm_sched_job_wait_dep, on_dep, HOOK_DRM_SCHED_JOB_WAIT_DEP)
/* 6.17+ */
TWIN_SCHED_JOB(, drm_sched_job_queue, on_job, HOOK_DRM_SCHED_JOB_QUEUE)
TWIN_SCHED_JOB(, drm_sched_job_run, on_job, HOOK_DRM_SCHED_JOB_RUN)
TWIN_SCHED_DONE(, drm_sched_job_done, on_done, HOOK_DRM_SCHED_JOB_DONE)
TWIN_SCHED_DEP(, drm_sched_job_add_dep, on_dep, HOOK_DRM_SCHED_JOB_ADD_DEP)
TWIN_SCHED_DEP(, drm_sched_job_unschedulable, on_dep, HOOK_DRM_SCHED_JOB_UNSCHEDULABLE)

/* Classic tracepoints: the raw entry, decoded in user space from the tracefs format. */
RAW_TRACEPOINT_COPY(gpu_scheduler, drm_sched_job, HOOK_DRM_SCHED_JOB)
RAW_TRACEPOINT_COPY(gpu_scheduler, drm_run_job, HOOK_DRM_RUN_JOB)
RAW_TRACEPOINT_COPY(gpu_scheduler, drm_sched_process_job, HOOK_DRM_SCHED_PROCESS_JOB)
RAW_TRACEPOINT_COPY(gpu_scheduler, drm_sched_job_wait_dep, HOOK_DRM_SCHED_JOB_WAIT_DEP)
RAW_TRACEPOINT_COPY(gpu_scheduler, drm_sched_job_queue, HOOK_DRM_SCHED_JOB_QUEUE)
RAW_TRACEPOINT_COPY(gpu_scheduler, drm_sched_job_run, HOOK_DRM_SCHED_JOB_RUN)
RAW_TRACEPOINT_COPY(gpu_scheduler, drm_sched_job_done, HOOK_DRM_SCHED_JOB_DONE)
RAW_TRACEPOINT_COPY(gpu_scheduler, drm_sched_job_add_dep, HOOK_DRM_SCHED_JOB_ADD_DEP)
RAW_TRACEPOINT_COPY(gpu_scheduler, drm_sched_job_unschedulable, HOOK_DRM_SCHED_JOB_UNSCHEDULABLE)
