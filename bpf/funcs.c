//go:build ignore
// SPDX-License-Identifier: (GPL-2.0-only OR MIT)
/*
 * Generic fentry/fexit programs for functions named in the configuration: buffer-object
 * validation (t0 -> t1) and the driver's run_job callback (te). Compiled once against
 * a placeholder target; the loader copies the ProgramSpec, sets AttachTo to each
 * configured function and func_id to its index, and loads one copy per function.
 * bpf_get_func_arg/ret make the body independent of the target's signature.
 */
#include "ghostdriver.h"
#include "drm_types.h"
#include "sched_reads.h"

char __license[] SEC("license") = "Dual MIT/GPL";

/* Index of the function in Config.BOValidationFuncs / RunJobFuncs (set per copy). */
const volatile __u16 func_id = 0;

SEC("fentry/ttm_bo_validate")
int fentry_bo_validate(void *ctx)
{
	struct record *r = rec_reserve(HOOK_BO_VALIDATE_ENTER);
	if (!r)
		return 0;
	r->func = func_id;
	rec_submit(r);
	return 0;
}

SEC("fexit/ttm_bo_validate")
int fexit_bo_validate(void *ctx)
{
	__u64 ret = 0;
	bpf_get_func_ret(ctx, &ret);
	struct record *r = rec_reserve(HOOK_BO_VALIDATE_EXIT);
	if (!r)
		return 0;
	r->func = func_id;
	r->ret = (__s64)ret;
	rec_submit(r);
	return 0;
}

/* run_job(struct drm_sched_job *) -> struct dma_fence * (the hardware fence or ERR_PTR) */
SEC("fexit/drm_sched_run_job_placeholder")
int fexit_run_job(void *ctx)
{
	__u64 arg0 = 0, ret = 0;
	bpf_get_func_arg(ctx, 0, &arg0);
	bpf_get_func_ret(ctx, &ret);
	struct record *r = rec_reserve(HOOK_RUN_JOB_EXIT);
	if (!r)
		return 0;
	r->func = func_id;
	r->ret = (__s64)ret;
	struct drm_sched_job___gd *job = (void *)arg0;
	r->ptr = arg0;
	if (job) {
		struct drm_sched_fence___gd *sf = BPF_CORE_READ(job, s_fence);
		if (sf) {
			sched_finished_key(sf, &r->fence_ctx, &r->fence_seqno);
			r->flags |= RF_FENCE_WIDE | RF_HAS_FENCE;
		}
	}
	/* ERR_PTR values are the top 4095 addresses. */
	if (ret && ret < (__u64)-4095) {
		read_fence((struct dma_fence *)ret, &r->hw_ctx, &r->hw_seqno);
		r->flags |= RF_HW_FENCE;
	}
	rec_submit(r);
	return 0;
}
