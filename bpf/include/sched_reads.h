/* SPDX-License-Identifier: (GPL-2.0-only OR MIT) */
/*
 * The scheduler-fence and scheduler-job reads through CO-RE, once for both record modes:
 * the event records of sched.c and the dependency edges of jobs.c (record_sched_job,
 * record_sched_fence), the per-job records of jobs.c and the driver hooks of drivers.c
 * and funcs.c (the sched_* readers). A scheduler field that changes across kernels
 * changes here only.
 *
 * The sched_* readers write only what the kernel has: a member a kernel lacks
 * (drm_sched_job.id since 6.17, drm_sched_fence.drm_client_id before 6.17) and a hardware
 * fence not yet set leave the destination as it was.
 */
#pragma once

#include "ghostdriver.h"
#include "drm_types.h"
#include "sched_names.h"

/* The job's finished fence (context, seqno): the key both record modes join on. */
static __always_inline void sched_finished_key(struct drm_sched_fence___gd *sf, __u64 *ctx, __u64 *seqno)
{
	*ctx = BPF_CORE_READ(sf, finished.context);
	*seqno = BPF_CORE_READ(sf, finished.seqno);
}

/* The hardware fence (s_fence->parent), set once run_job has returned: whether it was. */
static __always_inline bool sched_hw_fence(struct drm_sched_fence___gd *sf, __u64 *ctx, __u64 *seqno)
{
	struct dma_fence *hw = BPF_CORE_READ(sf, parent);
	if (!hw)
		return false;
	read_fence(hw, ctx, seqno);
	return true;
}

/* The DRM client id (6.17+). */
static __always_inline void sched_client_id(struct drm_sched_fence___gd *sf, __u64 *id)
{
	if (bpf_core_field_exists(sf->drm_client_id))
		*id = BPF_CORE_READ(sf, drm_client_id);
}

/* The scheduler job id (<= 6.16). */
static __always_inline void sched_job_id(struct drm_sched_job___gd *job, __u64 *id)
{
	if (bpf_core_field_exists(job->id))
		*id = BPF_CORE_READ(job, id);
}

/* A struct record's scheduler fence: finished fence, hardware fence, client id. */
static __always_inline void record_sched_fence(struct record *r, struct drm_sched_fence___gd *sf)
{
	if (!sf)
		return;
	sched_finished_key(sf, &r->fence_ctx, &r->fence_seqno);
	r->flags |= RF_FENCE_WIDE | RF_HAS_FENCE;
	if (sched_hw_fence(sf, &r->hw_ctx, &r->hw_seqno))
		r->flags |= RF_HW_FENCE;
	sched_client_id(sf, &r->client_id);
}

/* A struct record's scheduler job: pointer, entity, id, its fences and its scheduler's names. */
static __always_inline void record_sched_job(struct record *r, struct drm_sched_job___gd *job)
{
	if (!job)
		return;
	r->ptr = (__u64)job;
	r->entity = (__u64)BPF_CORE_READ(job, entity);
	sched_job_id(job, &r->job_id);
	record_sched_fence(r, BPF_CORE_READ(job, s_fence));
	struct drm_gpu_scheduler___gd *s = BPF_CORE_READ(job, sched);
	if (s)
		read_sched_names(s, r->ring, sizeof(r->ring), r->dev, sizeof(r->dev));
}
