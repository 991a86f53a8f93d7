//go:build ignore
// SPDX-License-Identifier: (GPL-2.0-only OR MIT)
/*
 * Submit ioctls (t0 / tx). Two rungs:
 *  - fentry/fexit drm_ioctl: only DRM ioctls pay, fd unknown (the file is given);
 *  - syscalls:sys_enter_ioctl / sys_exit_ioctl (classic tracepoint), or raw_tp
 *    sys_enter / sys_exit where tracefs is not mounted: filtered in the kernel by
 *    the fd's device major before anything is reserved.
 * Exit records are emitted only for threads whose entry matched: the entry's arguments
 * wait in the thread's task-local storage (`inflight_ts`, 5.11+: a pointer from the
 * task, no hash, nothing to delete — the slot is marked idle and freed with the task),
 * or, on kernels without task storage, in the `inflight` LRU hash keyed by tid (LRU: a
 * tid whose exit never came cannot fill the table for good; user space counts evictions
 * as `inflight_n` minus the entries present). The entry's record is reserved before the
 * slot is marked: a failed reservation (counted in `lost`) leaves nothing in flight, so
 * no exit record without its entry. A slot that cannot be had is counted
 * (kcounters.h). A thread that exits with a slot in flight is counted and its slot
 * cleared at sched_process_exit. Exits send
 * a 40-byte struct ioctl_exit_record (no memset of a struct record, no comm: the entry
 * of the same thread carries it; fexit drm_ioctl sends the same record). Measured against
 * the hash and full exit records: enter 615 → 459 ns, exit 405 → 190 ns (BENCHMARKS.md,
 * side by side).
 *
 * Ioctls without a job (bpf/include/ioctl_slot.h): with task storage, a process user space
 * knows (its `procs` row) keeps its entry in the slot instead of sending it; the first record
 * of the thread inside the ioctl sends it, and an exit that finds it still there counts the
 * ioctl (KC_IOCTL_WITHOUT_JOB) and sends nothing. fentry/fexit drm_ioctl do the same through
 * the same slot. Without task storage, or with Config.SendJoblessIoctls, every entry is sent.
 *
 * Filter-miss path (every non-DRM ioctl of the host pays it): when the loader knows the
 * ioctl type bytes of every configured major (DRM: DRM_IOCTL_BASE 'd'; NVIDIA's
 * frontend 'F' and 'm', UVM 0), an ioctl of any other type cannot be followed, so the
 * entry returns after a shift, a load and a bit test; with other majors (the filter
 * pointed at devices of unknown types) every ioctl goes through fd_is_drm. The exit side looks
 * its thread up only while some followed ioctl is in flight at all (inflight_n, one plain
 * load): a helper call costs as much here as the lookup, so the miss path makes none.
 *
 * Application trace context (appctx.h; docs/design.md "Linking to application traces"):
 * read at a matching submit-ioctl entry, where the submitting thread is stopped in the kernel.
 *
 * `procs` holds one entry per process user space has resolved (kind 0 when it has no
 * thread context). sched_process_exec / sched_process_exit delete the entry in the
 * kernel at once — after exec the recipe points into a dead address space, so this must
 * not wait for user space — and emit a record so that user space forgets its cache too.
 * Only known processes produce records, so fork/exec-heavy hosts pay one hash delete.
 */
#include "ghostdriver.h"
#include "arch.h"
#include "drm_types.h"
#include "link_const.h"
/* The context tiers' order as link-time constants (appctx.h). */
#define CTX_ORDER(i) ((__u8)((i) == 0 ? LINK_CONST(gd_ctx_order0) : LINK_CONST(gd_ctx_order1)))
#include "appctx.h"
#include "process_gone.h"
#include "kcounters.h"

char __license[] SEC("license") = "Dual MIT/GPL";

/*
 * How many device majors the ioctl filter holds: the link-time constants gd_major0..7
 * below. bpf2go's -type ioctl_limit gives Go the same number (internal/probe
 * MaxDRMMajors), and the loader's test checks that every gd_majorN it sets is read.
 */
enum ioctl_limit {
	MAX_MAJORS = 8,
};
const enum ioctl_limit *unused_ioctl_limit __attribute__((unused));
#define S_IFMT 00170000
#define S_IFCHR 0020000
#define MINORBITS 20

/*
 * Device majors whose ioctls are submits (DRM: 226): gd_n_majors of the link-time constants
 * gd_major0..7, set by the loader (every followed ioctl compares its device's major with
 * them, link_const.h).
 */
#define MAJOR_IS(n, sym) (LINK_CONST(gd_n_majors) > (n) && major == LINK_CONST(sym))
/*
 * The _IOC_TYPE bytes a followed ioctl may have, as a 256-bit set in four link-time
 * constants (link_const.h: every ioctl of the host reads them, and a .rodata load was most
 * of the filter-miss path's cost); gd_cmd_gate = 0 lets every type through. The loader
 * turns the gate on only when it knows the types of every configured major (DRM:
 * DRM_IOCTL_BASE 'd'; NVIDIA: 'F', 'm', and 0 for UVM): the filter can be pointed at other
 * devices (tests: major 1, TCGETS is type 'T').
 */
#define IOC_TYPE(cmd) (((cmd) >> 8) & 0xff)

/* Whether cmd's type can be a followed ioctl: shifts, a test and no memory read. */
static __always_inline bool cmd_type_followed(__u32 cmd)
{
	if (!LINK_CONST(gd_cmd_gate))
		return true;
	__u32 t = IOC_TYPE(cmd);
	__u64 set;
	switch (t >> 6) {
	case 0:
		set = LINK_CONST(gd_cmd_types0);
		break;
	case 1:
		set = LINK_CONST(gd_cmd_types1);
		break;
	case 2:
		set = LINK_CONST(gd_cmd_types2);
		break;
	default:
		set = LINK_CONST(gd_cmd_types3);
		break;
	}
	return (set >> (t & 63)) & 1;
}

/*
 * Where a followed ioctl's arguments wait for its exit. With task storage (the loader
 * leaves the link-time constant gd_hash_inflight 0 when the kernel has it) the hash is
 * shrunk to one entry and never used; without it inflight_ts is created as a one-entry
 * hash and never used (the verifier prunes the branch on the known constant, so the
 * helper is never checked). A link constant rather than .rodata: the exit of every
 * ioctl of the host reads it (link_const.h).
 */
#define USE_TASK_STORAGE() (!LINK_CONST(gd_hash_inflight))

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384); /* Config.InflightThreads */
	__type(key, __u32); /* tid */
	__type(value, struct ioctl_args);
} inflight SEC(".maps");

/* inflight_ts, the task-storage slots, is shared by every family: ioctl_slot.h. */

/*
 * An upper bound of the followed ioctls in flight (slots not idle, or entries in
 * `inflight`): incremented before one is recorded, decremented when one ends. It can only
 * drift upwards (a thread that dies inside a followed ioctl never reaches its exit),
 * which costs exits their fast path, never an exit record.
 */
__u64 inflight_n = 0;

static __always_inline bool fd_is_drm(int fd)
{
	if (fd < 0)
		return false;
	/*
	 * BTF pointers: the verifier turns these loads into single faulting loads (no
	 * helper call per step), which matters because this runs for every ioctl.
	 */
	struct task_struct *task = bpf_get_current_task_btf();
	struct fdtable *fdt = task->files->fdt;
	if ((unsigned int)fd >= fdt->max_fds)
		return false;
	struct file *file = 0;
	bpf_probe_read_kernel(&file, sizeof(file), &fdt->fd[fd]);
	if (!file)
		return false;
	struct inode *inode = BPF_CORE_READ(file, f_inode);
	if (!inode)
		return false;
	/*
	 * The major first: i_rdev is 0 for everything but device inodes, so a miss costs
	 * one read less; i_mode only tells a character device from a block device.
	 */
	__u32 major = BPF_CORE_READ(inode, i_rdev) >> MINORBITS;
	bool match = MAJOR_IS(0, gd_major0) || MAJOR_IS(1, gd_major1) || MAJOR_IS(2, gd_major2) ||
		     MAJOR_IS(3, gd_major3) || MAJOR_IS(4, gd_major4) || MAJOR_IS(5, gd_major5) ||
		     MAJOR_IS(6, gd_major6) || MAJOR_IS(7, gd_major7);
	if (!match)
		return false;
	return (BPF_CORE_READ(inode, i_mode) & S_IFMT) == S_IFCHR;
}

/* --- process lifecycle ------------------------------------------------------- */

/* The process's `procs` row is gone (process_gone.h): tell user space with a record. */
static __always_inline void report_process_gone(__u16 hook)
{
	if (!process_gone(hook == HOOK_PROCESS_EXIT))
		return; /* a thread, or not a process user space resolved */
	struct record *r = rec_reserve(hook);
	if (r)
		rec_submit(r);
}

/*
 * At a thread's exit: a followed ioctl still in flight will never reach its exit (the
 * syscall exit tracepoint runs for a thread killed inside an ioctl too, so this is a
 * thread that exited from within the syscall, or one that entered while the exit hook
 * was not attached yet). Counted, and its slot cleared so the table does not keep it.
 */
static __always_inline void thread_gone(void)
{
	if (!*(volatile __u64 *)&inflight_n)
		return;
	if (USE_TASK_STORAGE()) {
		struct ioctl_slot *sl = bpf_task_storage_get(&inflight_ts, bpf_get_current_task_btf(), 0, 0);
		if (!sl)
			return;
		slot_claim(sl);
		__u32 st = sl->state;
		if (st == SLOT_DEFERRED)
			ioctl_undefer();
		sl->state = SLOT_IDLE;
		slot_release(sl);
		if (st == SLOT_IDLE)
			return;
	} else {
		__u32 tid = (__u32)bpf_get_current_pid_tgid();
		if (bpf_map_delete_elem(&inflight, &tid))
			return;
	}
	__sync_fetch_and_add(&inflight_n, -1);
	kcount(KC_IOCTL_THREAD_EXITED);
}

/* sched_process_exec(struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm) */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(tpbtf_sched_process_exec)
{
	report_process_gone(HOOK_PROCESS_EXEC);
	return 0;
}

/* sched_process_exit(struct task_struct *p[, bool group_dead]) */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(tpbtf_sched_process_exit)
{
	thread_gone();
	report_process_gone(HOOK_PROCESS_EXIT);
	return 0;
}

SEC("raw_tp/sched_process_exec")
int BPF_PROG(rawtp_sched_process_exec)
{
	report_process_gone(HOOK_PROCESS_EXEC);
	return 0;
}

SEC("raw_tp/sched_process_exit")
int BPF_PROG(rawtp_sched_process_exit)
{
	thread_gone();
	report_process_gone(HOOK_PROCESS_EXIT);
	return 0;
}

/* --- submit ioctls ------------------------------------------------------------- */

/*
 * A followed ioctl's entry record, reserved and filled, for the caller to submit (NULL: the
 * ring is full, counted in `lost`). rc: the process's `procs` row (NULL: none). filp:
 * fentry drm_ioctl's file, whose DRM driver is named (NULL from the syscall hooks).
 */
static __always_inline struct ioctl_enter_record *ioctl_enter_record(__u16 hook, int fd, __u32 cmd, __u64 arg,
								      struct file *filp, struct tls_recipe *rc)
{
	struct ioctl_enter_record *r = ioctl_enter_reserve(hook);
	if (!r)
		return 0;
	r->fd = fd;
	r->cmd = cmd;
	r->arg = arg;
	if (filp)
		read_drm_file(r, filp);
	r->ctx_tier = read_app_ctx_row(rc, r->trace_id, r->span_id, &r->trace_flags, &r->ctx_error);
	return r;
}

/*
 * The entry of a followed ioctl where the thread's task storage keeps it (both rungs):
 * a process user space knows defers its entry record (ioctl_slot.h), any other sends it
 * now, since that record is how user space learns of the process. filp: fentry
 * drm_ioctl's file (NULL from the syscall hooks).
 */
static __always_inline void ioctl_enter_slot(__u16 hook, int fd, __u32 cmd, __u64 arg, struct file *filp)
{
	struct ioctl_slot *sl = bpf_task_storage_get(&inflight_ts, bpf_get_current_task_btf(), 0,
						     BPF_LOCAL_STORAGE_GET_F_CREATE);
	struct tls_recipe *rc = procs_row();
	if (sl) {
		slot_claim(sl);
		if (sl->state == SLOT_IDLE) {
			__sync_fetch_and_add(&inflight_n, 1);
		} else {
			kcount(KC_IOCTL_EXIT_MISSED); /* the previous one's exit never came */
			if (sl->state == SLOT_DEFERRED)
				ioctl_undefer();
		}
		sl->a.fd = fd;
		sl->a.cmd = cmd;
		sl->a.arg = arg;
		sl->filp = (__u64)filp;
		sl->hook = hook;
		if (IOCTL_DEFER() && rc) {
			sl->ts = bpf_ktime_get_ns();
			sl->cpu = bpf_get_smp_processor_id();
			sl->ctx_error = CTX_ERR_NONE;
			sl->ctx_tier = read_app_ctx_row(rc, sl->trace_id, sl->span_id, &sl->trace_flags, &sl->ctx_error);
			if (sl->ctx_error != CTX_ERR_NONE)
				__builtin_memcpy(&sl->rc, rc, sizeof(sl->rc)); /* the flush reads again */
			sl->state = SLOT_DEFERRED;
			__u64 *n = deferred_count();
			if (n)
				__sync_fetch_and_add(n, 1);
			slot_release(sl);
			return;
		}
	} else {
		kcount(KC_IOCTL_SLOT_UNAVAILABLE);
	}
	struct ioctl_enter_record *r = ioctl_enter_record(hook, fd, cmd, arg, filp, rc);
	if (!r) {
		if (sl) {
			sl->state = SLOT_LOST; /* counted in `lost`: no exit record either */
			slot_release(sl);
		}
		return;
	}
	if (sl) {
		sl->state = SLOT_SENT;
		slot_release(sl);
	}
	ring_submit(r);
}

/*
 * The exit's part of the slot; returns the state the entry left (SLOT_SENT: the exit sends
 * its record too). An entry still deferred had nothing of the thread recorded inside it:
 * counted as an ioctl without a job, nothing sent.
 */
static __always_inline __u32 ioctl_exit_slot(struct ioctl_slot *sl)
{
	slot_claim(sl);
	__u32 st = sl->state;
	sl->state = SLOT_IDLE;
	slot_release(sl);
	if (st == SLOT_IDLE)
		return st;
	__sync_fetch_and_add(&inflight_n, -1);
	if (st == SLOT_DEFERRED) {
		ioctl_undefer();
		kcount(KC_IOCTL_WITHOUT_JOB);
	}
	return st;
}

/* Pre-5.11 path: keeps a followed ioctl's arguments in `inflight` for its exit; false when no entry could be had. */
static __always_inline bool keep_ioctl_args(int fd, __u32 cmd, __u64 arg)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct ioctl_args a = {.fd = fd, .cmd = cmd, .arg = arg};
	__sync_fetch_and_add(&inflight_n, 1);
	long err = bpf_map_update_elem(&inflight, &tid, &a, BPF_NOEXIST);
	if (err == -17 /* EEXIST: the previous entry's exit never came */) {
		__sync_fetch_and_add(&inflight_n, -1); /* one entry, counted once */
		kcount(KC_IOCTL_EXIT_MISSED);
		err = bpf_map_update_elem(&inflight, &tid, &a, BPF_ANY);
	}
	if (err) {
		__sync_fetch_and_add(&inflight_n, -1);
		return false;
	}
	return true;
}

static __always_inline void ioctl_enter(int fd, __u32 cmd, __u64 arg)
{
	if (!cmd_type_followed(cmd))
		return;
	if (!fd_is_drm(fd))
		return;
	if (USE_TASK_STORAGE()) {
		ioctl_enter_slot(HOOK_SYS_ENTER_IOCTL, fd, cmd, arg, 0);
		return;
	}
	/*
	 * The record first: when the ring is full (counted in `lost`) nothing is marked in
	 * flight, so the exit sends nothing either (an exit without its entry).
	 */
	struct ioctl_enter_record *r = ioctl_enter_record(HOOK_SYS_ENTER_IOCTL, fd, cmd, arg, 0, procs_row());
	if (!r)
		return;
	if (!keep_ioctl_args(fd, cmd, arg))
		kcount(KC_IOCTL_SLOT_UNAVAILABLE);
	ring_submit(r);
}

static __always_inline void emit_ioctl_exit(__u16 hook, __s32 fd, __u32 cmd, long ret)
{
	struct ioctl_exit_record *r = ring_reserve_raw(sizeof(*r));
	if (!r)
		return;
	RECORD_STAMP(r, hook);
	r->ret = ret;
	r->fd = fd;
	r->cmd = cmd;
	r->_pad = 0;
	ring_submit(r);
}

static __always_inline void ioctl_exit(long ret)
{
	/*
	 * A thread that never had task storage of any BPF program has no slot, so none of its
	 * ioctls is followed: one read of the task (which the syscall is running) instead of
	 * inflight_n's page. Threads with storage go on to inflight_n. Kernels whose task has
	 * no bpf_storage have no task storage either (the hash path, pruned here). The task is
	 * looked up once, for this check and the slot's lookup.
	 */
	struct task_struct *task = 0;
	if (USE_TASK_STORAGE()) {
		task = bpf_get_current_task_btf();
		if (bpf_core_field_exists(task->bpf_storage) && !task->bpf_storage)
			return;
	}
	if (!*(volatile __u64 *)&inflight_n)
		return; /* nothing followed is in flight: not this one either */
	if (USE_TASK_STORAGE()) {
		struct ioctl_slot *sl = bpf_task_storage_get(&inflight_ts, task, 0, 0);
		if (sl && ioctl_exit_slot(sl) == SLOT_SENT)
			emit_ioctl_exit(HOOK_SYS_EXIT_IOCTL, sl->a.fd, sl->a.cmd, ret);
		return;
	}
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct ioctl_args *a = bpf_map_lookup_elem(&inflight, &tid);
	if (!a)
		return;
	emit_ioctl_exit(HOOK_SYS_EXIT_IOCTL, a->fd, a->cmd, ret);
	if (bpf_map_delete_elem(&inflight, &tid) == 0)
		__sync_fetch_and_add(&inflight_n, -1);
}

/* Classic tracepoint layout of syscalls:sys_enter_ioctl (stable since 2.6.x). */
struct sys_enter_ioctl_args {
	__u64 common;
	__s32 nr;
	__u32 _pad;
	__u64 fd;
	__u64 cmd;
	__u64 arg;
};

struct sys_exit_ioctl_args {
	__u64 common;
	__s32 nr;
	__u32 _pad;
	__s64 ret;
};

SEC("tracepoint/syscalls/sys_enter_ioctl")
int tp_sys_enter_ioctl(struct sys_enter_ioctl_args *ctx)
{
	ioctl_enter((int)ctx->fd, (__u32)ctx->cmd, ctx->arg);
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_ioctl")
int tp_sys_exit_ioctl(struct sys_exit_ioctl_args *ctx)
{
	ioctl_exit(ctx->ret);
	return 0;
}

/*
 * raw_tp sys_enter(struct pt_regs *regs, long id): every syscall, cheap id check. The
 * arguments are read from the syscall's pt_regs per architecture (arch.h).
 */
SEC("raw_tp/sys_enter")
int BPF_PROG(raw_sys_enter, struct pt_regs *regs, long id)
{
	if (id != NR_IOCTL)
		return 0;
	__u32 cmd = (__u32)PT_REGS_PARM2_CORE_SYSCALL(regs);
	if (!cmd_type_followed(cmd))
		return 0; /* before the other two reads (ioctl_enter checks it again) */
	int fd = (int)PT_REGS_PARM1_CORE_SYSCALL(regs);
	__u64 arg = PT_REGS_PARM3_CORE_SYSCALL(regs);
	ioctl_enter(fd, cmd, arg);
	return 0;
}

/* raw_tp sys_exit(struct pt_regs *regs, long ret): the syscall number is in regs (arch.h). */
SEC("raw_tp/sys_exit")
int BPF_PROG(raw_sys_exit, struct pt_regs *regs, long ret)
{
	if (SYSCALL_NR_CORE(regs) != NR_IOCTL)
		return 0;
	ioctl_exit(ret);
	return 0;
}

/* fentry drm_ioctl(struct file *filp, unsigned int cmd, unsigned long arg) */
SEC("fentry/drm_ioctl")
int BPF_PROG(fentry_drm_ioctl, struct file *filp, unsigned int cmd, unsigned long arg)
{
	if (IOCTL_DEFER()) {
		ioctl_enter_slot(HOOK_DRM_IOCTL_ENTER, -1, cmd, arg, filp);
		return 0;
	}
	struct ioctl_enter_record *r = ioctl_enter_record(HOOK_DRM_IOCTL_ENTER, -1, cmd, arg, filp, procs_row());
	if (r)
		ring_submit(r);
	return 0;
}

/*
 * Without deferral every exit is sent (the entry always was). With it, the slot says: an
 * entry still deferred is counted, not sent; one whose record was lost is still followed
 * by its exit, as before.
 */
SEC("fexit/drm_ioctl")
int BPF_PROG(fexit_drm_ioctl, struct file *filp, unsigned int cmd, unsigned long arg, long ret)
{
	if (IOCTL_DEFER()) {
		struct ioctl_slot *sl = bpf_task_storage_get(&inflight_ts, bpf_get_current_task_btf(), 0, 0);
		if (sl && ioctl_exit_slot(sl) == SLOT_DEFERRED)
			return 0;
	}
	emit_ioctl_exit(HOOK_DRM_IOCTL_EXIT, -1, cmd, ret);
	return 0;
}

/* Referenced so that bpf2go emits Go types for them. */
const struct tls_recipe *unused_tls_recipe __attribute__((unused));
const struct obi_trace_ctx *unused_obi_trace_ctx __attribute__((unused));
