/* SPDX-License-Identifier: (GPL-2.0-only OR MIT) */
/*
 * Where an application trace context read in the kernel came from. The tiers are defined
 * in internal/ctxtier (user space adds 3 = TRACEPARENT); internal/probe's
 * TestContextTierMatchesBPF checks this enum against it. Shared by the DRM families
 * (record.ctx_tier) and the CUDA object (cuda_record.ctx_tier).
 */
#pragma once

enum ctx_tier {
	CTX_TIER_NONE = 0,
	CTX_TIER_OTEP4947 = 1, /* otel_thread_ctx_v1 TLS record of the calling thread */
	CTX_TIER_OBI = 2,      /* OBI's pinned traces_ctx_v1 map, by pid_tgid */
};

/*
 * Why a record that could have carried a context carries none (ioctl_enter_record.ctx_error,
 * cuda_record.flags CUDA_F_CTX_UNREADABLE). 0: nothing went wrong (no context published, or
 * none looked for).
 */
enum ctx_error {
	CTX_ERR_NONE = 0,
	/*
	 * The process has an OTEP 4947 recipe and reading the thread's record faulted: its
	 * memory was not mapped at that instant (the kernel collapsing it into a huge page or
	 * migrating it), or the recipe points nowhere. User space counts these
	 * (kernel_drops{reason=thread_context_unreadable}).
	 */
	CTX_ERR_UNREADABLE = 1,
};
