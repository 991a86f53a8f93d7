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
