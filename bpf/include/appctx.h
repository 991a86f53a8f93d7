/* SPDX-License-Identifier: (GPL-2.0-only OR MIT) */
/*
 * Application trace context of the current thread, read in the kernel
 * (docs/design.md "Linking to application traces"). Used at a submit ioctl's entry
 * (syscalls.c) and at a CUDA API call's entry (cuda.c): the calling thread is stopped there, which is when OTEP 4947 allows
 * reading its otel_thread_ctx_v1 record. The in-kernel tiers are tried in ctx_order:
 *  - OTEP 4947: user space (internal/enrich via tenant's ThreadContextTLS) pushes the
 *    per-process recipe into `procs`; we follow it from the task's user thread pointer
 *    (arch.h: thread.fsbase on x86-64, thread.uw.tp_value on arm64) with
 *    bpf_probe_read_user and copy the ids and the trace flags of the 28-byte header when
 *    valid == 1;
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
#include "otep_read.h"

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

/*
 * OBI's value carries no trace flags. What OBI publishes there is the context of a span it
 * records, so a context found in the map is taken as sampled: flags 0x01.
 */
#define OBI_TRACE_FLAGS 0x01

static __always_inline bool read_obi(__u8 trace_id[16], __u8 span_id[8], __u8 *flags)
{
	__u64 key = bpf_get_current_pid_tgid();
	struct obi_trace_ctx *c = bpf_map_lookup_elem(&traces_ctx_v1, &key);
	if (!c || ids_zero(c->trace_id, c->span_id))
		return false;
	__builtin_memcpy(trace_id, c->trace_id, 16);
	__builtin_memcpy(span_id, c->span_id, 8);
	*flags = OBI_TRACE_FLAGS;
	return true;
}

/*
 * Fills trace_id/span_id and *flags (the W3C trace flags of that context) from the first
 * in-kernel tier that has a context and returns that tier (CTX_TIER_NONE: none had one;
 * the ids and flags are left alone). rc is the process's `procs` row (NULL: none), which
 * the caller has looked up. *err is set to CTX_ERR_UNREADABLE when no tier had a context
 * and the OTEP 4947 read faulted (ctx_tier.h), else left alone.
 */
static __always_inline __u8 read_app_ctx_row(struct tls_recipe *rc, __u8 trace_id[16], __u8 span_id[8], __u8 *flags,
					     __u8 *err)
{
	bool fault = false;
	for (int i = 0; i < MAX_CTX_TIERS; i++) {
		__u8 tier = CTX_ORDER(i);
		if (tier == CTX_TIER_OTEP4947) {
			enum ctx_read got = read_otep4947(trace_id, span_id, flags, rc);
			if (got == CTX_READ_OK)
				return tier;
			if (got == CTX_READ_FAULT)
				fault = true;
		}
		if (tier == CTX_TIER_OBI && read_obi(trace_id, span_id, flags))
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
static __always_inline __u8 read_app_ctx(__u8 trace_id[16], __u8 span_id[8], __u8 *flags, __u8 *err)
{
	return read_app_ctx_row(procs_row(), trace_id, span_id, flags, err);
}
