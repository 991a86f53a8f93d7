/* SPDX-License-Identifier: (GPL-2.0-only OR MIT) */
/*
 * One hook body, two programs: a tp_btf program (preferred: BTF-typed arguments) and its
 * raw_tp twin (where tp_btf cannot attach; also what BPF_PROG_TEST_RUN runs in the unit
 * tests, which cannot run tp_btf). The loader's hook tables name them
 * <prefix>tpbtf_<event> and <prefix>rawtp_<event>. Used by the scheduler hooks of both
 * record modes: sched.c (prefix empty) and jobs.c (prefix jobs_).
 *
 * The shapes are the gpu_scheduler and dma_fence tracepoints' arguments; `fn` is the body,
 * called with the leading arguments given and then the tracepoint's own.
 */
#pragma once

#include "drm_types.h"

#define TWIN_PROGS(prefix, ev, call, ...)                                                   \
	SEC("tp_btf/" #ev)                                                                  \
	int BPF_PROG(prefix##tpbtf_##ev, __VA_ARGS__)                                       \
	{                                                                                   \
		return call;                                                                \
	}                                                                                   \
	SEC("raw_tp/" #ev)                                                                  \
	int BPF_PROG(prefix##rawtp_##ev, __VA_ARGS__)                                       \
	{                                                                                   \
		return call;                                                                \
	}

/* queue / run: (struct drm_sched_job *, struct drm_sched_entity *) */
#define TWIN_SCHED_JOB(prefix, ev, fn, ...)                                                 \
	TWIN_PROGS(prefix, ev, fn(__VA_ARGS__, job, entity), struct drm_sched_job___gd *job, void *entity)

/* done / process_job: (struct drm_sched_fence *) */
#define TWIN_SCHED_DONE(prefix, ev, fn, ...)                                                \
	TWIN_PROGS(prefix, ev, fn(__VA_ARGS__, sf), struct drm_sched_fence___gd *sf)

/* add_dep / unschedulable / wait_dep: (struct drm_sched_job *, struct dma_fence *dep) */
#define TWIN_SCHED_DEP(prefix, ev, fn, ...)                                                 \
	TWIN_PROGS(prefix, ev, fn(__VA_ARGS__, job, dep), struct drm_sched_job___gd *job, struct dma_fence *dep)

/* dma_fence events: (struct dma_fence *) */
#define TWIN_FENCE(prefix, ev, fn, ...) TWIN_PROGS(prefix, ev, fn(__VA_ARGS__, f), struct dma_fence *f)
