//go:build ignore
// SPDX-License-Identifier: (GPL-2.0-only OR MIT)
/*
 * CUDA: user-space API calls of the CUDA driver (libcuda) and runtime (libcudart),
 * and the nvidia module's Xid tracepoint.
 *
 * CUDA submits work from user space (GPFIFO entries + doorbell write): there is no
 * per-launch kernel event, so the API calls are the only per-launch signal there is.
 * One entry program and one return program serve every API function: the loader
 * attaches them once per (library, function) with a BPF cookie that says which API
 * it is and where its stream / size / handle arguments live (internal/cuda/api.go is
 * the one table of those facts), so adding an API is a table row, not a program.
 *
 * Entry pushes a frame on a per-thread stack; return pops it and emits ONE record per
 * call (start, end, return value, arguments), so the ring carries half the records of
 * an entry/exit design and a call whose entry we missed is never emitted. depth says
 * how many traced calls were in progress on the thread when this one began (the
 * runtime's cudaLaunchKernel calls the driver's launch: the driver call has depth 1).
 *
 * Application trace context (appctx.h): the entry of a top-level call (depth 0) reads
 * the calling thread's context, which its record carries; nested calls are the same
 * application call and do not pay for it. This object has its own `procs` table (user
 * space pushes the recipes of the processes it saw calling CUDA) and deletes a row at
 * the process's exec and exit, telling user space with a record.
 *
 * This object has its own instance of the ring buffer (`events`), its reserve-failure
 * counter (`lost`) and wakeup policy (ghostdriver.h): the CUDA source is independent of
 * the DRM one.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
/* CUDA's probes run in user space, never inside a followed ioctl (ioctl_slot.h). */
#define GD_NO_IOCTL_FLUSH
#include "ghostdriver.h"
#include "arch.h"
#include "appctx.h"
#include "process_gone.h"

char __license[] SEC("license") = "Dual MIT/GPL";

enum cuda_rec {
	CUDA_REC_CALL = 1,     /* one API call, entry → return */
	CUDA_REC_PROCADDR = 2, /* cuGetProcAddress returned: symbol name, function address */
	CUDA_REC_XID = 3,      /* nvidia:nvidia_dev_xid */
	CUDA_REC_EXEC = 4,     /* a process with a `procs` row exec'd (row deleted) */
	CUDA_REC_EXIT = 5,     /* a process with a `procs` row exited (row deleted) */
};

/* cuda_record.flags */
enum cuda_flag {
	CUDA_F_STACK_OVERFLOW = 1 << 0, /* the call nested deeper than MAX_DEPTH: not timed */
	CUDA_F_ARG_FAULT = 1 << 1,	/* an argument could not be read from user memory */
	CUDA_F_NO_RETURN = 1 << 2,	/* recorded at entry (COOKIE_ENTRY_ONLY): end = start, no result */
	CUDA_F_CTX_UNREADABLE = 1 << 3, /* no context: the OTEP 4947 read faulted (ctx_tier.h CTX_ERR_UNREADABLE) */
};

/* One record per API call (or per proc-address resolution, or per Xid). */
struct cuda_record {
	__u64 start; /* bpf_ktime_get_ns() at entry: CLOCK_MONOTONIC */
	__u64 end;   /* at return */
	__u64 pid_tgid;
	__u64 cookie; /* the attach cookie: API id and argument locations (api.go) */
	__u64 stream; /* CUstream / cudaStream_t, or CUevent for event APIs */
	__u64 bytes;  /* size argument (memcpy, memset, alloc) */
	__u64 handle; /* CUfunction / host stub / graph exec / device pointer / memcpy kind / address */
	__s64 ret;    /* CUresult / cudaError_t; Xid: the error code */
	__u64 wake;   /* the scheduler's last wake-up of the thread inside the call (sched_waking), 0: none */
	__u64 irq;    /* the last GPU interrupt (any CPU) before that wake-up, 0: none seen */
	__u32 cpu;
	__u16 kind;  /* enum cuda_rec */
	__u8 depth;  /* traced calls already in progress on this thread */
	__u8 flags;  /* enum cuda_flag */
	__u8 ctx_tier; /* enum ctx_tier: application context of a top-level call */
	__u8 trace_flags; /* W3C trace flags of that context (bit 0: sampled), when ctx_tier != 0 */
	__u8 _pad[6];
	__u8 trace_id[16]; /* W3C byte order, when ctx_tier != 0 */
	__u8 span_id[8];
	char comm[16];
	char dev[16];  /* Xid: PCI name of the device */
	char text[64]; /* PROCADDR: the symbol asked for; Xid: the message */
};

/* cuda_frame_losses indices: calls whose entry and return did not pair (per CPU). */
enum cuda_frame_loss {
	/* an entry frame dropped by stack position: its return never came (hook attached
	 * mid-call, longjmp or an exception through it) */
	CUDA_LOSS_MISSED_RETURN = 0,
	/* a return with no entry frame for it: the thread's frames were evicted from
	 * cuda_threads (an LRU: more threads in calls than it holds), or the call entered
	 * before its entry hook was attached */
	CUDA_LOSS_NO_FRAME = 1,
	CUDA_LOSS_MAX = 2,
};

/* Referenced so that bpf2go emits Go types for them. */
const struct cuda_record *unused_cuda_record __attribute__((unused));
const enum cuda_frame_loss *unused_cuda_frame_loss __attribute__((unused));
const enum cuda_rec *unused_cuda_rec __attribute__((unused));
const enum cuda_flag *unused_cuda_flag __attribute__((unused));
const struct tls_recipe *unused_tls_recipe __attribute__((unused));

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, CUDA_LOSS_MAX);
	__type(key, __u32);
	__type(value, __u64);
} cuda_frame_losses SEC(".maps");

static __always_inline void frame_loss(__u32 which)
{
	__u64 *n = bpf_map_lookup_elem(&cuda_frame_losses, &which);
	if (n) /* atomic: another program can interleave on this CPU when preempted */
		__sync_fetch_and_add(n, 1);
}

/* Hits of floor-cookie entries (COOKIE_FLOOR): what the uprobe trap costs with a
 * program that only counts, the floor under enter_only (bench, never production). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} cuda_floor_hits SEC(".maps");

static __always_inline void stale_frame(void)
{
	frame_loss(CUDA_LOSS_MISSED_RETURN);
}

/*
 * Cookie layout (internal/cuda/api.go builds it):
 *   bits  0..11  API id (row of the Go table)
 *   bit  12      proc-address call: arg0 = symbol name, arg1 = void **pfn
 *   bit  13      (user space only: attached at a learned entry point)
 *   bit  14      entry only: no return probe is attached; the entry sends the record
 *   bit  15      floor (with bit 14; measurement only, Config.FloorLaunches): the entry
 *                program counts the hit in cuda_floor_hits and returns, recording nothing
 *   bits 16..31  location of the stream argument
 *   bits 32..47  location of the size argument
 *   bits 48..63  location of the handle argument
 * A location: bits 0..3 integer argument slot (0-based; arch.h says which slots are in
 * registers: 0..5 on x86-64, 0..7 on arm64, the rest on the stack); bits 4..5 mode (0
 * none, 1 the argument, 2 a u64 read from the argument as a pointer + offset); bits
 * 8..15 that offset in bytes.
 */
#define COOKIE_PROCADDR (1ULL << 12)
#define COOKIE_ENTRY_ONLY (1ULL << 14)
#define COOKIE_FLOOR (1ULL << 15)
#define LOC_NONE 0
#define LOC_ARG 1
#define LOC_DEREF 2

#define MAX_DEPTH 4

struct frame {
	__u64 start;
	__u64 sp; /* the stack pointer at entry: where the return address is */
	__u64 cookie;
	__u64 stream;
	__u64 bytes;
	__u64 handle;
	__u64 aux; /* proc-address: the pfn pointer */
	__u64 wake; /* sched_waking of the thread while this frame was open (cuda_waking) */
	__u64 irq;  /* cuda_last_irq at that wake-up */
	__u8 flags;
	__u8 ctx_tier;
	__u8 trace_flags;
	__u8 _pad[5];
	__u8 trace_id[16];
	__u8 span_id[8];
};

struct thread_stack {
	__u32 depth; /* frames in use, may exceed MAX_DEPTH (untimed calls) */
	__u32 _pad;
	__u64 last_ret_sp; /* stack pointer of the last paired return since the last entry */
	struct frame f[MAX_DEPTH];
};

/* LRU: a thread that exits inside a traced call must not leak its entry forever. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64); /* pid_tgid */
	__type(value, struct thread_stack);
} cuda_threads SEC(".maps");

/* A zeroed stack to insert, never written (200 bytes would fit the BPF stack, but this
 * keeps the programs' frames small). Not per CPU: nothing here is scratch, since two
 * programs can interleave on one CPU when a preemptible kernel preempts one. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct thread_stack);
} cuda_zero SEC(".maps");

static __always_inline __u64 arg_n(struct pt_regs *ctx, __u32 i, __u8 *flags)
{
	bool fault = false;
	__u64 v = uprobe_arg(ctx, i, &fault);
	if (fault)
		*flags |= CUDA_F_ARG_FAULT;
	return v;
}

static __always_inline __u64 read_loc(struct pt_regs *ctx, __u16 loc, __u8 *flags)
{
	__u32 mode = (loc >> 4) & 3;
	if (mode == LOC_NONE)
		return 0;
	__u64 a = arg_n(ctx, loc & 0xf, flags);
	if (mode == LOC_ARG)
		return a;
	__u64 v = 0;
	if (!a || bpf_probe_read_user(&v, sizeof(v), (void *)(a + (loc >> 8))))
		*flags |= CUDA_F_ARG_FAULT;
	return v;
}

static __always_inline struct cuda_record *reserve(__u16 kind);
static __always_inline void submit(struct cuda_record *r);

/*
 * A top-level call's application context and its trace flags (appctx.h); a faulted read
 * marks the call's flags (enum cuda_flag).
 */
static __always_inline __u8 read_call_ctx(__u8 trace_id[16], __u8 span_id[8], __u8 *trace_flags, __u8 *flags)
{
	__u8 err = CTX_ERR_NONE;
	__u8 tier = read_app_ctx(trace_id, span_id, trace_flags, &err);
	if (err != CTX_ERR_NONE)
		*flags |= CUDA_F_CTX_UNREADABLE;
	return tier;
}

/*
 * An entry-only call (a launch where the return adds nothing but its duration and
 * result): one uprobe instead of a uprobe + uretprobe pair, and no frame. Its depth is
 * the thread's frames in progress (without the stale-frame scan of a paired entry).
 */
static __always_inline int enter_only(struct pt_regs *ctx, __u64 cookie)
{
	if (cookie & COOKIE_FLOOR) {
		__u32 zero = 0;
		__u64 *n = bpf_map_lookup_elem(&cuda_floor_hits, &zero);
		if (n)
			__sync_fetch_and_add(n, 1);
		return 0;
	}
	__u64 id = bpf_get_current_pid_tgid();
	struct thread_stack *ts = bpf_map_lookup_elem(&cuda_threads, &id);
	__u32 d = ts ? ts->depth : 0;
	struct cuda_record *r = reserve(CUDA_REC_CALL);
	if (!r)
		return 0;
	__u8 flags = CUDA_F_NO_RETURN;
	r->cookie = cookie;
	r->stream = read_loc(ctx, cookie >> 16, &flags);
	r->bytes = read_loc(ctx, cookie >> 32, &flags);
	r->handle = read_loc(ctx, cookie >> 48, &flags);
	r->depth = d > 255 ? 255 : d;
	r->ctx_tier = CTX_TIER_NONE;
	if (d == 0)
		r->ctx_tier = read_call_ctx(r->trace_id, r->span_id, &r->trace_flags, &flags);
	r->flags = flags;
	r->start = r->end = bpf_ktime_get_ns();
	submit(r);
	return 0;
}

static __always_inline int enter_body(struct pt_regs *ctx)
{
	__u64 cookie = bpf_get_attach_cookie(ctx);
	if (cookie & COOKIE_ENTRY_ONLY)
		return enter_only(ctx, cookie);
	__u64 id = bpf_get_current_pid_tgid();
	struct thread_stack *ts = bpf_map_lookup_elem(&cuda_threads, &id);
	if (!ts) {
		__u32 zero = 0;
		struct thread_stack *z = bpf_map_lookup_elem(&cuda_zero, &zero);
		if (!z)
			return 0;
		bpf_map_update_elem(&cuda_threads, &id, z, BPF_NOEXIST);
		ts = bpf_map_lookup_elem(&cuda_threads, &id);
		if (!ts)
			return 0;
	}
	__u32 d = ts->depth;
	/* Frames whose call already returned unseen are stale. A call entered at a
	 * shallower stack position than a recorded entry cannot be nested in it; one at
	 * the same position can (a tail call), unless a call returned at that position
	 * since the last entry (a tail call's outer frame returns with its inner one).
	 * Missed returns happen when an entry program is attached before its return
	 * program (a hook added while the process runs), or when a call unwinds without
	 * returning (longjmp, exceptions). Without this a stale frame would make every
	 * later call of the thread "nested". */
	__u64 sp = PT_REGS_SP(ctx);
	if (d <= MAX_DEPTH) {
#pragma unroll
		for (int i = MAX_DEPTH - 1; i >= 0; i--) {
			if ((__u32)i == d - 1 && d > 0 &&
			    (sp > ts->f[i].sp || (sp == ts->f[i].sp && ts->last_ret_sp == sp + URET_SP_DELTA))) {
				d--;
				stale_frame();
			}
		}
	}
	ts->last_ret_sp = 0;
	ts->depth = d + 1;
	if (d >= MAX_DEPTH)
		return 0;
	/* The mask stays in the code: clang drops it after the check above and indexes with
	 * d, whose bound 6.1's verifier does not narrow from an equality test (it saw
	 * d <= 4 and refused f[4] on arm64). */
	barrier_var(d);
	struct frame *f = &ts->f[d & (MAX_DEPTH - 1)];
	f->sp = sp;
	f->cookie = cookie;
	f->flags = 0;
	if (cookie & COOKIE_PROCADDR) {
		f->handle = PT_REGS_PARM1(ctx); /* const char *symbol */
		f->aux = PT_REGS_PARM2(ctx);    /* void **pfn */
		f->stream = 0;
		f->bytes = 0;
	} else {
		f->stream = read_loc(ctx, cookie >> 16, &f->flags);
		f->bytes = read_loc(ctx, cookie >> 32, &f->flags);
		f->handle = read_loc(ctx, cookie >> 48, &f->flags);
		f->aux = 0;
	}
	f->ctx_tier = CTX_TIER_NONE;
	if (d == 0)
		f->ctx_tier = read_call_ctx(f->trace_id, f->span_id, &f->trace_flags, &f->flags);
	f->wake = 0;
	f->irq = 0;
	/* Last, so that the argument reads are not part of the call's time. */
	f->start = bpf_ktime_get_ns();
	return 0;
}

static __always_inline struct cuda_record *reserve(__u16 kind)
{
	struct cuda_record *r = ring_reserve(sizeof(*r));
	if (!r)
		return 0;
	__builtin_memset(r, 0, sizeof(*r));
	r->kind = kind;
	r->pid_tgid = bpf_get_current_pid_tgid();
	r->cpu = bpf_get_smp_processor_id();
	bpf_get_current_comm(r->comm, sizeof(r->comm));
	return r;
}

static __always_inline void submit(struct cuda_record *r)
{
	ring_submit(r);
}

static __always_inline int return_body(struct pt_regs *ctx)
{
	__u64 end = bpf_ktime_get_ns();
	__u64 id = bpf_get_current_pid_tgid();
	struct thread_stack *ts = bpf_map_lookup_elem(&cuda_threads, &id);
	if (!ts || ts->depth == 0) {
		frame_loss(CUDA_LOSS_NO_FRAME); /* evicted, or entered before we attached */
		return 0;
	}
	__u32 d = ts->depth;
	if (d <= MAX_DEPTH) {
		/* Pair by stack position: after the return the stack pointer is the entry's +
		 * URET_SP_DELTA (arch.h: 8 on x86-64, whose call pushed the return address; 0 on
		 * arm64) (a tail call's frames share one return: inner first, then outer). Frames
		 * deeper than this return are stale (their returns were missed); a return that
		 * matches no frame is one whose entry we did not see (the return program is
		 * attached first, or the call began before we attached). */
		__u64 sp = PT_REGS_SP(ctx);
#pragma unroll
		for (int i = MAX_DEPTH - 1; i >= 0; i--) {
			if ((__u32)i == d - 1 && d > 0 && ts->f[i].sp + URET_SP_DELTA < sp) {
				d--;
				stale_frame();
			}
		}
		if (d == 0 || ts->f[(d - 1) & (MAX_DEPTH - 1)].sp + URET_SP_DELTA != sp) {
			ts->depth = d;
			frame_loss(CUDA_LOSS_NO_FRAME);
			return 0;
		}
		ts->last_ret_sp = sp;
	}
	d--;
	ts->depth = d;
	struct cuda_record *r;
	if (d >= MAX_DEPTH) {
		r = reserve(CUDA_REC_CALL);
		if (!r)
			return 0;
		r->cookie = bpf_get_attach_cookie(ctx);
		r->end = end;
		r->depth = d > 255 ? 255 : d;
		r->flags = CUDA_F_STACK_OVERFLOW;
		r->ret = (__s32)PT_REGS_RC(ctx);
		submit(r);
		return 0;
	}
	barrier_var(d); /* the mask stays: see enter_body */
	struct frame *f = &ts->f[d & (MAX_DEPTH - 1)];
	__u16 kind = (f->cookie & COOKIE_PROCADDR) ? CUDA_REC_PROCADDR : CUDA_REC_CALL;
	r = reserve(kind);
	if (!r)
		return 0;
	r->start = f->start;
	r->end = end;
	r->cookie = f->cookie;
	r->stream = f->stream;
	r->bytes = f->bytes;
	r->handle = f->handle;
	r->flags = f->flags;
	r->depth = d;
	r->ctx_tier = f->ctx_tier;
	if (f->ctx_tier != CTX_TIER_NONE) {
		r->trace_flags = f->trace_flags;
		__builtin_memcpy(r->trace_id, f->trace_id, sizeof(r->trace_id));
		__builtin_memcpy(r->span_id, f->span_id, sizeof(r->span_id));
	}
	r->ret = (__s32)PT_REGS_RC(ctx); /* CUresult and cudaError_t are C enums (int) */
	if (f->wake >= f->start) {
		r->wake = f->wake;
		r->irq = f->irq;
	}
	if (kind == CUDA_REC_PROCADDR) {
		__u64 fn = 0;
		if (f->aux && bpf_probe_read_user(&fn, sizeof(fn), (void *)f->aux))
			r->flags |= CUDA_F_ARG_FAULT;
		if (f->handle && bpf_probe_read_user_str(r->text, sizeof(r->text), (void *)f->handle) < 0)
			r->flags |= CUDA_F_ARG_FAULT;
		r->handle = fn;
	}
	submit(r);
	return 0;
}

/*
 * The programs: classic uprobes (one perf event per function), and the same bodies as
 * uprobe_multi programs (6.6+: one link per library, Config.UprobeMulti).
 */
SEC("uprobe")
int cuda_enter(struct pt_regs *ctx)
{
	return enter_body(ctx);
}

SEC("uretprobe")
int cuda_return(struct pt_regs *ctx)
{
	return return_body(ctx);
}

SEC("uprobe.multi")
int cuda_enter_multi(struct pt_regs *ctx)
{
	return enter_body(ctx);
}

SEC("uretprobe.multi")
int cuda_return_multi(struct pt_regs *ctx)
{
	return return_body(ctx);
}

/*
 * Process lifecycle (process_gone.h): tp_btf where BTF allows, raw_tp otherwise (the
 * loader picks).
 */
static __always_inline void cuda_process_gone(__u16 kind)
{
	if (!process_gone(kind == CUDA_REC_EXIT))
		return;
	struct cuda_record *r = reserve(kind);
	if (!r)
		return;
	r->start = r->end = bpf_ktime_get_ns();
	submit(r);
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(cuda_tpbtf_exec)
{
	cuda_process_gone(CUDA_REC_EXEC);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(cuda_tpbtf_exit)
{
	cuda_process_gone(CUDA_REC_EXIT);
	return 0;
}

SEC("raw_tp/sched_process_exec")
int BPF_PROG(cuda_rawtp_exec)
{
	cuda_process_gone(CUDA_REC_EXEC);
	return 0;
}

SEC("raw_tp/sched_process_exit")
int BPF_PROG(cuda_rawtp_exit)
{
	cuda_process_gone(CUDA_REC_EXIT);
	return 0;
}

/*
 * The blocking-sync split (Config.SyncWakeups): a thread that waits in a blocking sync
 * (cudaDeviceScheduleBlockingSync) sleeps in the kernel until the nvidia driver's
 * interrupt handling wakes it. sched_waking stamps every open frame of a traced thread
 * with the wake-up time and the latest GPU interrupt seen on any CPU (the waker may be a
 * bottom half on another CPU than the interrupt); the return record carries the last
 * wake-up of the call. A spinning sync is never woken: no kernel path to split. User space
 * fills cuda_irqs with the nvidia interrupts of /proc/interrupts.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 256);
	__type(key, __s32);   /* irq number */
	__type(value, __u32); /* unused */
} cuda_irqs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64); /* bpf_ktime_get_ns() of the latest GPU interrupt */
} cuda_last_irq SEC(".maps");

static __always_inline int cuda_gpu_irq(int irq)
{
	if (!bpf_map_lookup_elem(&cuda_irqs, &irq))
		return 0;
	__u32 zero = 0;
	__u64 *t = bpf_map_lookup_elem(&cuda_last_irq, &zero);
	if (t)
		*t = bpf_ktime_get_ns();
	return 0;
}

static __always_inline int cuda_waking(struct task_struct *p)
{
	__u64 id = ((__u64)BPF_CORE_READ(p, tgid) << 32) | (__u32)BPF_CORE_READ(p, pid);
	struct thread_stack *ts = bpf_map_lookup_elem(&cuda_threads, &id);
	if (!ts)
		return 0;
	__u32 d = ts->depth;
	if (d == 0)
		return 0;
	__u64 now = bpf_ktime_get_ns();
	__u32 zero = 0;
	__u64 *t = bpf_map_lookup_elem(&cuda_last_irq, &zero);
	__u64 irq = t ? *t : 0;
#pragma unroll
	for (int i = 0; i < MAX_DEPTH; i++) {
		if ((__u32)i < d) {
			ts->f[i].wake = now;
			ts->f[i].irq = irq;
		}
	}
	return 0;
}

SEC("tp_btf/irq_handler_entry")
int BPF_PROG(cuda_tpbtf_irq_entry, int irq, struct irqaction *action)
{
	return cuda_gpu_irq(irq);
}

SEC("raw_tp/irq_handler_entry")
int BPF_PROG(cuda_rawtp_irq_entry, int irq, struct irqaction *action)
{
	return cuda_gpu_irq(irq);
}

SEC("tp_btf/sched_waking")
int BPF_PROG(cuda_tpbtf_waking, struct task_struct *p)
{
	return cuda_waking(p);
}

SEC("raw_tp/sched_waking")
int BPF_PROG(cuda_rawtp_waking, struct task_struct *p)
{
	return cuda_waking(p);
}

/*
 * nvidia:nvidia_dev_xid, TP_PROTO(const struct pci_dev *pdev, uint32_t error_code,
 * const char *msg) (open-gpu-kernel-modules kernel-open/nvidia/nv-report-err.h).
 * raw_tp reads the arguments; the classic tracepoint reads the event's own copy.
 */

SEC("raw_tp/nvidia_dev_xid")
int BPF_PROG(rawtp_nvidia_dev_xid, const struct pci_dev *pdev, __u32 error_code, const char *msg)
{
	struct cuda_record *r = reserve(CUDA_REC_XID);
	if (!r)
		return 0;
	r->start = r->end = bpf_ktime_get_ns();
	r->ret = error_code;
	const char *name = BPF_CORE_READ(pdev, dev.kobj.name);
	if (name)
		bpf_probe_read_kernel_str(r->dev, sizeof(r->dev), name);
	if (msg)
		bpf_probe_read_kernel_str(r->text, sizeof(r->text), msg);
	submit(r);
	return 0;
}

/* Classic layout: common header, __data_loc dev, u32 error_code, __data_loc msg. */
struct xid_tp_args {
	__u64 common;
	__u32 dev_loc;
	__u32 error_code;
	__u32 msg_loc;
};

SEC("tracepoint/nvidia/nvidia_dev_xid")
int tp_nvidia_dev_xid(struct xid_tp_args *ctx)
{
	struct cuda_record *r = reserve(CUDA_REC_XID);
	if (!r)
		return 0;
	r->start = r->end = bpf_ktime_get_ns();
	r->ret = ctx->error_code;
	bpf_probe_read_kernel_str(r->dev, sizeof(r->dev), (void *)ctx + (ctx->dev_loc & 0xffff));
	bpf_probe_read_kernel_str(r->text, sizeof(r->text), (void *)ctx + (ctx->msg_loc & 0xffff));
	submit(r);
	return 0;
}
