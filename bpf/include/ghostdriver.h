/* SPDX-License-Identifier: (GPL-2.0-only OR MIT) */
/*
 * Shared by every program family: the one record that crosses the ring buffer, the
 * ring buffer itself, the per-CPU reserve-failure counter and the wakeup policy. Every
 * reservation of a hook first sends the current thread's deferred ioctl entry, if it has
 * one (ioctl_slot.h, included at the end).
 *
 * bpf2go generates the Go mirror of `struct record` and `enum hook` (common.c,
 * -type record -type hook); Go never declares them by hand.
 */
#pragma once

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

#include "driver_hooks.h"

/*
 * Which hook produced a record. User space maps each value to an event.Kind and the
 * kernel's own name for the hook (internal/probe/hooks.go; the driver hooks' values come
 * from the event table, internal/eventdef, through driver_hooks.h). Values are part of
 * the record format: append, never renumber.
 */
enum hook {
	HOOK_NONE = 0,
	/* submitting thread */
	HOOK_SYS_ENTER_IOCTL = 1,
	HOOK_SYS_EXIT_IOCTL = 2,
	HOOK_DRM_IOCTL_ENTER = 3,
	HOOK_DRM_IOCTL_EXIT = 4,
	HOOK_BO_VALIDATE_ENTER = 5,
	HOOK_BO_VALIDATE_EXIT = 6,
	/* gpu_scheduler, <= 6.16 names */
	HOOK_DRM_SCHED_JOB = 10,
	HOOK_DRM_RUN_JOB = 11,
	HOOK_DRM_SCHED_PROCESS_JOB = 12,
	HOOK_DRM_SCHED_JOB_WAIT_DEP = 13,
	/* gpu_scheduler, 6.17+ names */
	HOOK_DRM_SCHED_JOB_QUEUE = 14,
	HOOK_DRM_SCHED_JOB_RUN = 15,
	HOOK_DRM_SCHED_JOB_DONE = 16,
	HOOK_DRM_SCHED_JOB_ADD_DEP = 17,
	HOOK_DRM_SCHED_JOB_UNSCHEDULABLE = 18,
	/* fexit of the driver's run_job callback */
	HOOK_RUN_JOB_EXIT = 19,
	/* dma_fence */
	HOOK_DMA_FENCE_INIT = 20,
	HOOK_DMA_FENCE_EMIT = 21,
	HOOK_DMA_FENCE_ENABLE_SIGNAL = 22,
	HOOK_DMA_FENCE_SIGNALED = 23,
	HOOK_DMA_FENCE_WAIT_START = 24,
	HOOK_DMA_FENCE_WAIT_END = 25,
	HOOK_DMA_FENCE_DESTROY = 26,
	/* interrupts */
	HOOK_IRQ_HANDLER_ENTRY = 30,
	HOOK_IRQ_HANDLER_EXIT = 31,
	/* drivers' own events, from 40 (driver_hooks.h, generated from the event table) */
	DRIVER_HOOKS
	/* process lifecycle of processes the enricher knows (syscalls.c: procs map) */
	HOOK_PROCESS_EXEC = 80,
	HOOK_PROCESS_EXIT = 81,
};

/* record.ctx_tier: enum ctx_tier (ctx_tier.h). */
#include "ctx_tier.h"

/* record.flags */
enum record_flag {
	RF_FENCE_WIDE = 1 << 0, /* fence_ctx/fence_seqno are full 64-bit values */
	RF_DEP_WIDE = 1 << 1,
	RF_HW_FENCE = 1 << 2, /* hw_ctx/hw_seqno are set */
	RF_HAS_FENCE = 1 << 3,
	RF_HAS_DEP = 1 << 4,
};

/*
 * One fixed-size record per kernel event. Fields a hook does not use stay zero.
 * Layout is naturally aligned (no implicit padding) so the generated Go struct is a
 * byte-for-byte mirror.
 */
struct record {
	__u64 ts;	/* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
	__u64 pid_tgid; /* tgid << 32 | tid */
	__u64 fence_ctx;
	__u64 fence_seqno;
	__u64 dep_ctx;
	__u64 dep_seqno;
	__u64 hw_ctx;
	__u64 hw_seqno;
	__u64 job_id;	 /* scheduler job id (<= 6.16), xe job pointer, msm submit ident */
	__u64 ptr;	 /* the object the hook was given (fence, job), for diagnostics */
	__u64 entity;	 /* drm_sched_entity pointer */
	__u64 client_id; /* DRM client id (6.17+) */
	__u64 arg;	 /* ioctl argument */
	__s64 ret;	 /* ioctl / function return value, irq handled */
	__s32 fd;
	__u32 cmd;
	__s32 irq;
	__u32 cpu;
	__u16 hook; /* enum hook */
	__u16 func; /* index into the configured function list (fentry/fexit) */
	__u8 flags;    /* enum record_flag */
	__u8 ctx_tier; /* enum ctx_tier: set on submit-ioctl entries only */
	__u8 trace_flags; /* W3C trace flags of the context (bit 0: sampled), when ctx_tier != 0 */
	__u8 _pad;
	char comm[16];
	char ring[16];	    /* scheduler / ring / engine name */
	char dev[16];	    /* dev_name() of the scheduler's device */
	char driver[16];    /* DRM driver name of the ioctl's file (fentry drm_ioctl) */
	__u8 trace_id[16]; /* application trace context (W3C byte order), when ctx_tier != 0 */
	__u8 span_id[8];
};

/*
 * Shared maps: every family declares them (same definition) and the loader replaces
 * them with the instances created from common.c, so all programs feed one ring.
 */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20); /* overridden by Config.RingBufferBytes */
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} lost SEC(".maps");

/*
 * Wakeup policy: never wake the reader per event (measured ≈ 1 µs/event of IPIs);
 * the reader polls on a deadline. Only when more than wakeup_bytes are pending do
 * we force a wakeup so a burst cannot overrun the ring between two polls.
 */
const volatile __u64 wakeup_bytes = 1 << 20;

/*
 * Reserves size bytes of the ring buffer, counting a failure in `lost` (per CPU). Raw: a
 * deferred ioctl entry of the current thread is not sent first (ioctl_slot.h); the ioctl
 * hooks and the flush itself use it.
 */
static __always_inline void *ring_reserve_raw(__u64 size)
{
	void *r = bpf_ringbuf_reserve(&events, size, 0);
	if (!r) {
		__u32 zero = 0;
		__u64 *n = bpf_map_lookup_elem(&lost, &zero);
		if (n) /* atomic: another program can interleave on this CPU when preempted */
			__sync_fetch_and_add(n, 1);
	}
	return r;
}

/* ioctl_slot.h, included at the end of this file. */
static __always_inline void ioctl_flush(void);
/*
 * Reserves a record of a hook: the current thread's deferred ioctl entry, if it is inside
 * one, goes into the ring first (ioctl_slot.h), so that its entry precedes it.
 */
static __always_inline void *ring_reserve(__u64 size)
{
	ioctl_flush();
	return ring_reserve_raw(size);
}
/* Commits a reservation under the wakeup policy above (every record kind). */
static __always_inline void ring_submit(void *r)
{
	__u64 flags = BPF_RB_NO_WAKEUP;
	if (bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= wakeup_bytes)
		flags = BPF_RB_FORCE_WAKEUP;
	bpf_ringbuf_submit(r, flags);
}

/* The header every record kind starts with the same way: when, who, where, which hook. */
#define RECORD_STAMP(r, h)                                                                  \
	do {                                                                                \
		(r)->ts = bpf_ktime_get_ns();                                               \
		(r)->pid_tgid = bpf_get_current_pid_tgid();                                 \
		(r)->cpu = bpf_get_smp_processor_id();                                      \
		(r)->hook = (h);                                                            \
	} while (0)

static __always_inline struct record *rec_reserve(__u16 hook)
{
	struct record *r = ring_reserve(sizeof(*r));
	if (!r)
		return 0;
	__builtin_memset(r, 0, sizeof(*r));
	RECORD_STAMP(r, hook);
	bpf_get_current_comm(r->comm, sizeof(r->comm));
	return r;
}

static __always_inline void rec_submit(struct record *r)
{
	ring_submit(r);
}

/*
 * The classic-tracepoint rung of the gpu_scheduler and driver events: no CO-RE, no BTF.
 * The program copies the first RAW_MAX bytes of the raw trace entry (the perf trace
 * buffer the kernel filled with the event's fields, ctx) after a short header; user
 * space reads the event's tracefs format file, renders the entry into the text the
 * kernel would print and hands it to the text decoder (internal/probe/classic.go).
 * A sample of this size is a raw_record; fence_record and ioctl_exit_record have their own
 * sizes too; every other sample is a struct record.
 */
#define RAW_MAX 256

struct raw_record {
	__u64 ts;	/* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
	__u64 pid_tgid; /* tgid << 32 | tid */
	__u32 cpu;
	__u16 hook;	/* enum hook: which tracepoint the copy is of */
	__u16 raw_len;	/* RAW_MAX; 0 when the entry could not be read */
	char comm[16];
	/*
	 * The trace entry. Its first 8 bytes (the common fields) hold the kernel's pt_regs
	 * pointer by the time a program runs (perf_trace_run_bpf_submit); the event's own
	 * fields follow at the offsets of its format file.
	 */
	__u8 raw[RAW_MAX];
};

/*
 * One body for every classic tracepoint of the rung. ctx is the perf trace buffer entry
 * (PERF_MAX_TRACE_SIZE bytes, per CPU), so RAW_MAX bytes from it are always readable,
 * whatever the entry's own size; the tail past the entry is ignored by user space.
 */
static __always_inline int raw_copy(__u16 hook, void *ctx)
{
	struct raw_record *r = ring_reserve(sizeof(*r));
	if (!r)
		return 0;
	RECORD_STAMP(r, hook);
	bpf_get_current_comm(r->comm, sizeof(r->comm));
	r->raw_len = bpf_probe_read_kernel(r->raw, sizeof(r->raw), (const void *)(unsigned long)ctx) ? 0 : RAW_MAX;
	ring_submit(r);
	return 0;
}

/* SEC("tracepoint/<system>/<event>") program tp_<event>: the raw copy of one event. */
#define RAW_TRACEPOINT_COPY(system, ev, hook)                                               \
	SEC("tracepoint/" #system "/" #ev)                                                  \
	int tp_##ev(void *ctx)                                                              \
	{                                                                                   \
		return raw_copy(hook, ctx);                                                 \
	}

/*
 * The dma_fence hooks' record: 10 of a job's 15 hook runs are fence events, and they need
 * neither the submitter's comm nor the scheduler's names, so they send 48 bytes instead of
 * a struct record (and skip its memset and bpf_get_current_comm). Every field is written.
 * User space tells the two apart by the sample's size.
 */
struct fence_record {
	__u64 ts;	/* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
	__u64 pid_tgid;
	__u64 fence_ctx;
	__u64 fence_seqno;
	__u64 ptr; /* the dma_fence */
	__u32 cpu;
	__u16 hook;
	__u8 flags; /* RF_HAS_FENCE, RF_FENCE_WIDE */
	__u8 _pad;
};

/*
 * The exit record of a followed submit ioctl (syscall tracepoints, fexit drm_ioctl): 40
 * bytes, every field written; the entry of the same thread carries comm and the trace
 * context.
 */
struct ioctl_exit_record {
	__u64 ts;	/* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
	__u64 pid_tgid;
	__s64 ret;
	__s32 fd;
	__u32 cmd;
	__u32 cpu;
	__u16 hook;
	__u16 _pad;
};

/*
 * The entry record of a followed submit ioctl (syscall tracepoints, raw_tp sys_enter,
 * fentry drm_ioctl): 104 bytes where a struct record is 224. Every followed ioctl sends
 * one, most of them ioctls that queue no job, and what a reservation costs grows with the
 * bytes the producer moves through the ring (BENCHMARKS.md), so the entry carries only
 * what an entry has: the ioctl's arguments, comm, the DRM driver's name and client id
 * (fentry) and the application's trace context (ids and trace flags).
 */
struct ioctl_enter_record {
	__u64 ts;	/* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
	__u64 pid_tgid;
	__u64 arg;
	__s32 fd;	/* -1 from fentry drm_ioctl (the file is given, not its number) */
	__u32 cmd;
	__u32 cpu;
	/*
	 * enum hook: HOOK_SYS_ENTER_IOCTL or HOOK_DRM_IOCTL_ENTER. One byte, unlike the other
	 * records' (the record had no padding left for trace_flags, and its size must stay).
	 */
	__u8 hook;
	__u8 ctx_tier;	  /* enum ctx_tier */
	__u8 trace_flags; /* W3C trace flags of the context (bit 0: sampled), when ctx_tier != 0 */
	__u8 ctx_error;	  /* enum ctx_error: why there is no context where one was looked for */
	char comm[16];
	char driver[16];    /* DRM driver name of the ioctl's file (fentry drm_ioctl) */
	__u8 trace_id[16]; /* application trace context (W3C byte order), when ctx_tier != 0 */
	__u8 span_id[8];
	/*
	 * The ioctl's DRM client: drm_file.client_id (6.5+, fdinfo's drm-client-id), read through
	 * the file fentry drm_ioctl is given; 0 from the syscall hooks and before 6.5.
	 */
	__u64 client_id;
};

_Static_assert(HOOK_SYS_ENTER_IOCTL < 256 && HOOK_DRM_IOCTL_ENTER < 256, "ioctl_enter_record.hook is one byte");

/* A zeroed ioctl_enter_record with its header and comm written (NULL: ring full, counted). */
static __always_inline struct ioctl_enter_record *ioctl_enter_reserve(__u16 hook)
{
	struct ioctl_enter_record *r = ring_reserve_raw(sizeof(*r));
	if (!r)
		return 0;
	__builtin_memset(r, 0, sizeof(*r));
	RECORD_STAMP(r, hook);
	bpf_get_current_comm(r->comm, sizeof(r->comm));
	return r;
}

static __always_inline struct fence_record *fence_reserve(__u16 hook)
{
	struct fence_record *r = ring_reserve(sizeof(*r));
	if (!r)
		return 0;
	RECORD_STAMP(r, hook);
	r->flags = 0;
	r->_pad = 0;
	r->fence_ctx = 0;
	r->fence_seqno = 0;
	r->ptr = 0;
	return r;
}

/* Reads a dma_fence's 64-bit key through CO-RE (fence may be NULL). */
static __always_inline void read_fence(struct dma_fence *f, __u64 *ctx, __u64 *seqno)
{
	if (!f)
		return;
	*ctx = BPF_CORE_READ(f, context);
	*seqno = BPF_CORE_READ(f, seqno);
}

#define __pai __attribute__((preserve_access_index))
#include "ioctl_slot.h"
