/* SPDX-License-Identifier: (GPL-2.0-only OR MIT) */
/*
 * Application trace context of the current thread, read in the kernel
 * (docs/design.md "Linking to application traces"). Used at a submit ioctl's entry
 * (syscalls.c) and at a CUDA API call's entry (cuda.c): the calling thread is stopped there, which is when OTEP 4947 allows
 * reading its otel_thread_ctx_v1 record. The in-kernel tiers are tried in ctx_order:
 *  - OTEP 4947: user space (internal/enrich via tenant's ThreadContextTLS) pushes the
 *    per-process recipe into `procs`; we follow it from the task's user thread pointer
 *    (arch.h: thread.fsbase on x86-64, thread.uw.tp_value on arm64) with
 *    bpf_probe_read_user and copy the 28-byte header when valid == 1;
 *  - OBI: OBI's pinned traces_ctx_v1 map (the loader passes it in as a replacement of
 *    the placeholder below), looked up by pid_tgid.
 * TRACEPARENT (process environment) is applied in user space.
 *
 * Each object that includes this file has its own `procs` table, and must delete a
 * process's row at its exec and exit itself (a recipe must not outlive the address
 * space it points into).
 */
#pragma once

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "arch.h"
#include "ctx_tier.h"

#define MAX_CTX_TIERS 2

/* In-kernel tiers in lookup order, CTX_TIER_NONE-terminated. Set by the CUDA loader. */
const volatile __u8 ctx_order[MAX_CTX_TIERS] = {CTX_TIER_OTEP4947, CTX_TIER_OBI};

/*
 * How the programs read the order: the .rodata array above, unless the object defines
 * CTX_ORDER before including this file (syscalls.c reads link-time constants, link_const.h,
 * on the path every followed ioctl runs, and the loader sets the array for CUDA's only).
 */
#ifndef CTX_ORDER
#define CTX_ORDER(i) (ctx_order[i])
#endif

/* tls_recipe.kind, mirroring appctx.TLSAccessKind. */
enum tls_kind {
	TLS_NONE = 0,	 /* process known, no thread context: exec/exit still reported */
	TLS_STATIC = 1, /* slot = tp + tp_offset */
	TLS_DTV = 2,	 /* dtv = *(tp + dtv_offset); block = *(dtv + module_id * dtv_entry_size); slot = block + block_offset */
};

/* Layout mirrored by appctx.KernelRecipe (Go). */
struct tls_recipe {
	__u8 kind; /* enum tls_kind */
	__u8 _pad[7];
	__s64 tp_offset;
	__u64 module_id;
	__u64 block_offset;
	__u64 dtv_offset;
	__u64 dtv_entry_size;
	/* DTV length word relative to dtv (glibc: dtv[-1].counter = -16; musl: dtv[0] = 0). */
	__s64 dtv_len_offset;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32); /* tgid */
	__type(value, struct tls_recipe);
} procs SEC(".maps");

/* OBI's map (OpenTelemetry eBPF Instrumentation): placeholder of the same shape. */
struct obi_trace_ctx {
	__u8 trace_id[16];
	__u8 span_id[8];
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64); /* pid_tgid */
	__type(value, struct obi_trace_ctx);
} traces_ctx_v1 SEC(".maps");

/* OTEP 4947 record header (packed, host-endian); attrs-data follows and is not read. */
struct otel_thread_ctx_hdr {
	__u8 trace_id[16];
	__u8 span_id[8];
	__u8 valid;
	__u8 flags;
	__u16 attrs_size;
};

static __always_inline bool ids_zero(const __u8 *trace, const __u8 *span)
{
	__u64 t0 = 0, t1 = 0, s = 0;
	__builtin_memcpy(&t0, trace, 8);
	__builtin_memcpy(&t1, trace + 8, 8);
	__builtin_memcpy(&s, span, 8);
	return (t0 | t1) == 0 || s == 0;
}

/*
 * What read_otep4947 found. CTX_READ_FAULT: a read of the thread's memory failed. The
 * programs may not take page faults, so a page that is not mapped at that instant cannot
 * be read: the kernel moving the memory (a huge-page collapse, which unmaps the whole
 * 2 MiB range while it copies; a page migration), or a recipe that points nowhere. The
 * thread's context may well have been there; the caller reports it (ctx_error).
 */
enum ctx_read {
	CTX_READ_NONE = 0,  /* no recipe, no thread pointer, or no valid record published */
	CTX_READ_OK = 1,
	CTX_READ_FAULT = 2,
};

static __always_inline enum ctx_read read_otep4947(__u8 trace_id[16], __u8 span_id[8], struct tls_recipe *rc)
{
	if (!rc || rc->kind == TLS_NONE)
		return CTX_READ_NONE;
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 tp = TASK_USER_TP(task);
	if (!tp)
		return CTX_READ_NONE;
	__u64 slot = 0;
	if (rc->kind == TLS_STATIC) {
		slot = tp + rc->tp_offset;
	} else if (rc->kind == TLS_DTV) {
		__u64 dtv = 0, block = 0, len = 0;
		if (bpf_probe_read_user(&dtv, sizeof(dtv), (void *)(tp + rc->dtv_offset)))
			return CTX_READ_FAULT;
		if (!dtv)
			return CTX_READ_NONE;
		/* A module id beyond the thread's DTV: the thread never saw the module. */
		if (bpf_probe_read_user(&len, sizeof(len), (void *)(dtv + rc->dtv_len_offset)))
			return CTX_READ_FAULT;
		if (rc->module_id > len)
			return CTX_READ_NONE;
		if (bpf_probe_read_user(&block, sizeof(block), (void *)(dtv + rc->module_id * rc->dtv_entry_size)))
			return CTX_READ_FAULT;
		if (block == 0 || block == ~0ULL) /* TLS_DTV_UNALLOCATED: never touched in this thread */
			return CTX_READ_NONE;
		slot = block + rc->block_offset;
	} else {
		return CTX_READ_NONE;
	}
	__u64 rec = 0;
	if (bpf_probe_read_user(&rec, sizeof(rec), (void *)slot))
		return CTX_READ_FAULT;
	if (!rec)
		return CTX_READ_NONE;
	struct otel_thread_ctx_hdr h;
	if (bpf_probe_read_user(&h, sizeof(h), (void *)rec))
		return CTX_READ_FAULT;
	if (h.valid != 1 || ids_zero(h.trace_id, h.span_id))
		return CTX_READ_NONE;
	__builtin_memcpy(trace_id, h.trace_id, 16);
	__builtin_memcpy(span_id, h.span_id, 8);
	return CTX_READ_OK;
}

static __always_inline bool read_obi(__u8 trace_id[16], __u8 span_id[8])
{
	__u64 key = bpf_get_current_pid_tgid();
	struct obi_trace_ctx *c = bpf_map_lookup_elem(&traces_ctx_v1, &key);
	if (!c || ids_zero(c->trace_id, c->span_id))
		return false;
	__builtin_memcpy(trace_id, c->trace_id, 16);
	__builtin_memcpy(span_id, c->span_id, 8);
	return true;
}

/*
 * Fills trace_id/span_id from the first in-kernel tier that has a context and returns
 * that tier (CTX_TIER_NONE: none had one; the ids are left alone). rc is the process's
 * `procs` row (NULL: none), which the caller has looked up. *err is set to
 * CTX_ERR_UNREADABLE when no tier had a context and the OTEP 4947 read faulted (ctx_tier.h),
 * else left alone.
 */
static __always_inline __u8 read_app_ctx_row(struct tls_recipe *rc, __u8 trace_id[16], __u8 span_id[8], __u8 *err)
{
	bool fault = false;
	for (int i = 0; i < MAX_CTX_TIERS; i++) {
		__u8 tier = CTX_ORDER(i);
		if (tier == CTX_TIER_OTEP4947) {
			enum ctx_read got = read_otep4947(trace_id, span_id, rc);
			if (got == CTX_READ_OK)
				return tier;
			if (got == CTX_READ_FAULT)
				fault = true;
		}
		if (tier == CTX_TIER_OBI && read_obi(trace_id, span_id))
			return tier;
	}
	if (fault)
		*err = CTX_ERR_UNREADABLE;
	return CTX_TIER_NONE;
}

/* The current process's `procs` row (NULL: user space has not resolved it). */
static __always_inline struct tls_recipe *procs_row(void)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	return bpf_map_lookup_elem(&procs, &tgid);
}

/* read_app_ctx_row for the current process. */
static __always_inline __u8 read_app_ctx(__u8 trace_id[16], __u8 span_id[8], __u8 *err)
{
	return read_app_ctx_row(procs_row(), trace_id, span_id, err);
}
