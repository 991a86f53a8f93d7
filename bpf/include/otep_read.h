/* SPDX-License-Identifier: (GPL-2.0-only OR MIT) */
/*
 * The OTEP 4947 read of the current thread's otel_thread_ctx_v1 record, following a
 * per-process recipe (appctx.h: user space pushes it into `procs`). No maps here: every
 * family includes it through ioctl_slot.h, whose flush reads a deferred entry's context
 * again when the entry's read faulted (the thread is still stopped in the same syscall, so
 * its record cannot have changed, while the memory may have been mapped again meanwhile).
 */
#pragma once

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "arch.h"
#include "ctx_tier.h"

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

/* On CTX_READ_OK fills trace_id, span_id and *flags (the record's W3C trace flags). */
static __always_inline enum ctx_read read_otep4947(__u8 trace_id[16], __u8 span_id[8], __u8 *flags,
						   struct tls_recipe *rc)
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
	*flags = h.flags;
	return CTX_READ_OK;
}

