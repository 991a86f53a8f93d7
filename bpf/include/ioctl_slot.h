/* SPDX-License-Identifier: (GPL-2.0-only OR MIT) */
/*
 * A followed ioctl's slot in its thread's task-local storage, and the deferred entry record.
 *
 * Most followed ioctls queue no job (GEM create, mmap offsets, queries, waits that return at
 * once), and user space only counts those. So, for a process user space already knows (its
 * `procs` row exists: it was resolved from an earlier record), the entry hook sends nothing:
 * it keeps what the entry record would carry in the thread's slot, marked SLOT_DEFERRED. The
 * first record any hook reserves for that thread while it is inside the ioctl (a BO
 * validation, the queue of a job, a dma_fence created or waited on, a dependency; any
 * record, from any family, stamped with the thread's tid) sends the entry record first,
 * with the entry's own time and CPU: ring_reserve() calls ioctl_flush(). The exit then
 * sends its record as before. An exit that finds its entry still deferred is an ioctl in
 * which nothing of the thread was recorded, which is exactly what user space would only
 * have counted (internal/assemble/pairs.go): it is counted in the kernel
 * (KC_IOCTL_WITHOUT_JOB) and nothing is sent. Whoever reads the stream sees the same jobs.
 *
 * Hooks that stamp a job without a record (the per-job record mode, jobs.c) call
 * ioctl_flush() themselves where the assembler joins the job to the thread's ioctl (the
 * queue).
 *
 * The loader shares `inflight_ts` and `ioctl_deferred` between every family (like the
 * ring) and sets `gd_ioctl_defer` in each of them: 1 when the kernel has task storage and the
 * configuration does not ask for every ioctl's records (Config.SendJoblessIoctls). With
 * 0 the verifier prunes every branch below, and the entry hooks send as they always did.
 *
 * Objects that cannot be inside a followed ioctl (cuda.c: user-space probes) define
 * GD_NO_IOCTL_FLUSH before including ghostdriver.h and get neither the maps nor the check.
 */
#pragma once

#include "drm_types.h"
#include "link_const.h"
#include "otep_read.h"

struct ioctl_args {
	__s32 fd;
	__u32 cmd;
	__u64 arg;
};

enum ioctl_slot_state {
	SLOT_IDLE = 0,
	SLOT_DEFERRED = 1, /* in the ioctl, its entry record not sent yet */
	SLOT_SENT = 2,	   /* in the ioctl, its entry record sent: the exit sends one too */
	SLOT_LOST = 3,	   /* in the ioctl, its entry record could not be reserved: the exit sends none */
};

struct ioctl_slot {
	struct ioctl_args a;
	__u32 state; /* enum ioctl_slot_state */
	__u32 cpu;   /* the entry's CPU */
	__u64 ts;    /* the entry's time */
	__u64 filp;  /* fentry drm_ioctl: the file, whose DRM driver is named at the flush */
	__u16 hook;  /* the entry's hook */
	__u8 ctx_tier;
	__u8 busy;   /* a program of this thread is changing the slot (slot_claim) */
	__u8 ctx_error; /* enum ctx_error of the entry's read */
	__u8 trace_flags; /* W3C trace flags of the context, when ctx_tier != 0 */
	__u8 _pad[2];
	__u8 trace_id[16];
	__u8 span_id[8];
	/* The process's recipe, kept when the entry's OTEP 4947 read faulted: the flush reads again. */
	struct tls_recipe rc;
};

/*
 * The slot belongs to one thread, so only programs that interrupt that thread's own program
 * on its CPU (an interrupt's hook while the thread is in its syscall exit, say) can meet it
 * half-changed; such a program runs to its end before the interrupted one goes on. So each
 * program marks the slot busy before it reads the state it changes, and one that finds it
 * busy leaves it alone: the state is then read and written by one program at a time without
 * atomic instructions (the rig once saw an entry sent by an interrupt's flush between the
 * exit's read of SLOT_DEFERRED and its write: counted without a job and sent, no exit).
 */
#define slot_barrier() asm volatile("" ::: "memory")

static __always_inline void slot_claim(struct ioctl_slot *sl)
{
	sl->busy = 1;
	slot_barrier();
}

static __always_inline void slot_release(struct ioctl_slot *sl)
{
	slot_barrier();
	sl->busy = 0;
}

#ifndef GD_NO_IOCTL_FLUSH

/*
 * Set by the loader in every family (see above), as a link-time constant (link_const.h):
 * every record reservation of every hook reads it, and the submit ioctl's entry too.
 */
#define IOCTL_DEFER() LINK_CONST(gd_ioctl_defer)

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct ioctl_slot);
} inflight_ts SEC(".maps");

/*
 * [0]: slots in SLOT_DEFERRED on the whole host. 0 lets ioctl_flush() return after one
 * load (an array lookup the verifier inlines), so hooks pay for the task storage lookup
 * only while some thread is inside a deferred ioctl.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} ioctl_deferred SEC(".maps");

static __always_inline __u64 *deferred_count(void)
{
	__u32 zero = 0;
	return bpf_map_lookup_elem(&ioctl_deferred, &zero);
}

/* A slot leaves SLOT_DEFERRED without its entry being sent. */
static __always_inline void ioctl_undefer(void)
{
	__u64 *n = deferred_count();
	if (n)
		__sync_fetch_and_add(n, -1);
}

/*
 * The DRM driver's name and the DRM client's id (drm_file.client_id, 6.5+), read through the
 * file drm_ioctl was given.
 */
static __always_inline void read_drm_file(struct ioctl_enter_record *r, struct file *filp)
{
	struct drm_file___gd *df = BPF_CORE_READ(filp, private_data);
	if (!df)
		return;
	const char *name = BPF_CORE_READ(df, minor, dev, driver, name);
	if (name)
		bpf_probe_read_kernel_str(r->driver, sizeof(r->driver), name);
	if (bpf_core_field_exists(df->client_id))
		r->client_id = BPF_CORE_READ(df, client_id);
}

/*
 * Whether the current thread is inside a followed ioctl (its slot holds the entry, sent or
 * not). Only where the entries wait in task storage (IOCTL_DEFER); false elsewhere.
 */
static __always_inline bool in_followed_ioctl(void)
{
	if (!IOCTL_DEFER())
		return false;
	struct ioctl_slot *sl = bpf_task_storage_get(&inflight_ts, bpf_get_current_task_btf(), 0, 0);
	return sl && (sl->state == SLOT_DEFERRED || sl->state == SLOT_SENT);
}

/*
 * The entry's read of the thread's record faulted (its memory was being moved): read it
 * again. The thread is still stopped in the same syscall, so its record is the one the
 * entry would have read; what stays unreadable is counted by user space (ctx_error). A
 * subprogram, not inlined: every record reservation of every hook flushes, and five user
 * reads inlined at each of them grew the objects by half (funcs 2.2x) for a path that runs
 * only after a fault.
 */
static __noinline int ioctl_reread_ctx(struct ioctl_slot *sl)
{
	if (read_otep4947(sl->trace_id, sl->span_id, &sl->trace_flags, &sl->rc) != CTX_READ_OK)
		return 0;
	sl->ctx_tier = CTX_TIER_OTEP4947;
	sl->ctx_error = CTX_ERR_NONE;
	return 1;
}

/*
 * Sends the current thread's deferred entry record, if it has one; called before any
 * record is reserved. The record is what the entry hook would have sent: its time, CPU
 * and hook, the arguments and trace context it read; comm and the driver's name are read
 * now (same thread, same file: the ioctl has not returned).
 */
static __always_inline void ioctl_flush(void)
{
	if (!IOCTL_DEFER())
		return;
	__u64 *n = deferred_count();
	if (!n || !*(volatile __u64 *)n)
		return;
	struct ioctl_slot *sl = bpf_task_storage_get(&inflight_ts, bpf_get_current_task_btf(), 0, 0);
	if (!sl || sl->busy || sl->state != SLOT_DEFERRED)
		return;
	slot_claim(sl);
	if (sl->state != SLOT_DEFERRED) { /* an interrupting program changed it meanwhile */
		slot_release(sl);
		return;
	}
	__sync_fetch_and_add(n, -1);
	if (sl->ctx_error == CTX_ERR_UNREADABLE)
		ioctl_reread_ctx(sl);
	struct ioctl_enter_record *r = ring_reserve_raw(sizeof(*r));
	if (!r) {
		sl->state = SLOT_LOST; /* counted in `lost`; the exit sends nothing either */
		slot_release(sl);
		return;
	}
	sl->state = SLOT_SENT;
	slot_release(sl);
	__builtin_memset(r, 0, sizeof(*r));
	r->ts = sl->ts;
	r->pid_tgid = bpf_get_current_pid_tgid();
	r->cpu = sl->cpu;
	r->hook = sl->hook;
	bpf_get_current_comm(r->comm, sizeof(r->comm));
	r->fd = sl->a.fd;
	r->cmd = sl->a.cmd;
	r->arg = sl->a.arg;
	r->ctx_tier = sl->ctx_tier;
	r->ctx_error = sl->ctx_error;
	if (sl->ctx_tier != CTX_TIER_NONE) {
		r->trace_flags = sl->trace_flags;
		__builtin_memcpy(r->trace_id, sl->trace_id, sizeof(r->trace_id));
		__builtin_memcpy(r->span_id, sl->span_id, sizeof(r->span_id));
	}
	/* Only fentry drm_ioctl sets filp; the type check keeps the read out of programs
	 * loaded where DRM's types are not in the kernel's BTF (no DRM driver loaded). */
	if (bpf_core_type_exists(struct drm_file___gd) && sl->filp)
		read_drm_file(r, (struct file *)sl->filp);
	ring_submit(r);
}

#else

static __always_inline void ioctl_flush(void)
{
}

#endif
