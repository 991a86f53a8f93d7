//go:build ignore
// SPDX-License-Identifier: (GPL-2.0-only OR MIT)
/*
 * dma_fence core events: every driver's fences. tp_btf gives the fence itself, so the
 * key is read at full 64 bits (the tracepoint's own fields are truncated to 32).
 * Rungs: tp_btf > raw_tp (same body) > classic tracepoint (32-bit context/seqno at the
 * fixed offsets every kernel since 4.10 uses).
 *
 * These hooks see every dma_fence of the host (display, media, sync files, other GPUs).
 * With fence_filter on (Config.FenceFilter) an event is sent only when its context is
 * in `fence_ctxs`, which user space fills with the contexts it sees in GPU jobs (the
 * scheduler's, dependencies', hardware fences'); the others are counted
 * (KC_FENCE_PASSED_OVER) and cost one hash lookup instead of a record. A context is
 * followed from the moment user space has read its first job, so that job's own earlier
 * fence events may be passed over (counted too). Drivers without a scheduler name no fence
 * context in their job events (virtio_gpu's commands carry only the fence's seqno), so the
 * kernel learns those itself: a fence emitted (dma_fence_emit) by a thread inside a followed
 * ioctl is a submitted job's, and its context is followed from that emit on (where the
 * ioctl entries wait in task storage: in_followed_ioctl).
 */
#include "ghostdriver.h"
#include "kcounters.h"

char __license[] SEC("license") = "Dual MIT/GPL";

const volatile __u32 fence_filter = 0;

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64);  /* dma_fence context */
	__type(value, __u8); /* unused */
} fence_ctxs SEC(".maps");

/* Whether an event of this context is sent (always, with the filter off). */
static __always_inline bool fence_followed(__u16 hook, __u64 ctx)
{
	if (!fence_filter)
		return true;
	if (bpf_map_lookup_elem(&fence_ctxs, &ctx))
		return true;
	if (hook == HOOK_DMA_FENCE_EMIT && in_followed_ioctl()) {
		__u8 one = 1;
		bpf_map_update_elem(&fence_ctxs, &ctx, &one, BPF_ANY);
		return true;
	}
	kcount(KC_FENCE_PASSED_OVER);
	return false;
}

static __always_inline int on_fence(__u16 hook, struct dma_fence *f)
{
	if (fence_filter) {
		__u64 ctx = 0, seqno = 0;
		read_fence(f, &ctx, &seqno);
		if (!fence_followed(hook, ctx))
			return 0;
	}
	struct fence_record *r = fence_reserve(hook);
	if (!r)
		return 0;
	r->ptr = (__u64)f;
	if (f) {
		read_fence(f, &r->fence_ctx, &r->fence_seqno);
		r->flags = RF_FENCE_WIDE | RF_HAS_FENCE;
	}
	ring_submit(r);
	return 0;
}

/* trace_event_raw_dma_fence: common(8) driver(loc 4) timeline(loc 4) context(u32) seqno(u32) */
struct dma_fence_tp_args {
	__u64 common;
	__u32 driver_loc;
	__u32 timeline_loc;
	__u32 context;
	__u32 seqno;
};

static __always_inline int on_fence_tp(__u16 hook, struct dma_fence_tp_args *ctx)
{
	if (!fence_followed(hook, ctx->context))
		return 0;
	struct fence_record *r = fence_reserve(hook);
	if (!r)
		return 0;
	r->fence_ctx = ctx->context;
	r->fence_seqno = ctx->seqno;
	r->flags = RF_HAS_FENCE;
	ring_submit(r);
	return 0;
}

#define FENCE_EVENT(ev, hook)                                                               \
	SEC("tp_btf/dma_fence_" #ev)                                                        \
	int BPF_PROG(tpbtf_dma_fence_##ev, struct dma_fence *f)                             \
	{                                                                                   \
		return on_fence(hook, f);                                                   \
	}                                                                                   \
	SEC("raw_tp/dma_fence_" #ev)                                                        \
	int BPF_PROG(rawtp_dma_fence_##ev, struct dma_fence *f)                             \
	{                                                                                   \
		return on_fence(hook, f);                                                   \
	}                                                                                   \
	SEC("tracepoint/dma_fence/dma_fence_" #ev)                                          \
	int tp_dma_fence_##ev(struct dma_fence_tp_args *ctx)                                \
	{                                                                                   \
		return on_fence_tp(hook, ctx);                                              \
	}

/*
 * dma_fence_enable_signal and dma_fence_destroy have no program: the assembler uses neither
 * (a fence's signal, not its callbacks or its release, bounds a stage), and both run for
 * every fence of the host. Their hook numbers stay: enum hook is append-only.
 */
FENCE_EVENT(init, HOOK_DMA_FENCE_INIT)
FENCE_EVENT(emit, HOOK_DMA_FENCE_EMIT)
FENCE_EVENT(signaled, HOOK_DMA_FENCE_SIGNALED)
FENCE_EVENT(wait_start, HOOK_DMA_FENCE_WAIT_START)
FENCE_EVENT(wait_end, HOOK_DMA_FENCE_WAIT_END)
