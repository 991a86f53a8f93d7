//go:build ignore
// SPDX-License-Identifier: (GPL-2.0-only OR MIT)
/*
 * Submit ioctls (t0 / tx). Two rungs:
 *  - fentry/fexit drm_ioctl: only DRM ioctls pay, fd unknown (the file is given);
 *  - syscalls:sys_enter_ioctl / sys_exit_ioctl (classic tracepoint), or raw_tp
 *    sys_enter / sys_exit where tracefs is not mounted: filtered in the kernel by
 *    the fd's device major before anything is reserved.
 * Exit records are emitted only for threads whose entry matched (inflight map), so
 * the filter costs one hash lookup on the exit of a non-matching ioctl.
 */
#include "ghostdriver.h"

char __license[] SEC("license") = "Dual MIT/GPL";

#define MAX_MAJORS 8
#define NR_IOCTL 16 /* x86_64 */
#define S_IFMT 00170000
#define S_IFCHR 0020000
#define MINORBITS 20

/* Device majors whose ioctls are submits (DRM: 226). Set by the loader. */
const volatile __u32 drm_majors[MAX_MAJORS] = {226};
const volatile __u32 n_drm_majors = 1;

struct ioctl_args {
	__s32 fd;
	__u32 cmd;
	__u64 arg;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32); /* tid */
	__type(value, struct ioctl_args);
} inflight SEC(".maps");

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
	if ((BPF_CORE_READ(inode, i_mode) & S_IFMT) != S_IFCHR)
		return false;
	__u32 major = BPF_CORE_READ(inode, i_rdev) >> MINORBITS;
	for (int i = 0; i < MAX_MAJORS; i++) {
		if (i >= n_drm_majors)
			break;
		if (drm_majors[i] == major)
			return true;
	}
	return false;
}

static __always_inline void ioctl_enter(int fd, __u32 cmd, __u64 arg)
{
	if (!fd_is_drm(fd))
		return;
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct ioctl_args a = {.fd = fd, .cmd = cmd, .arg = arg};
	bpf_map_update_elem(&inflight, &tid, &a, BPF_ANY);

	struct record *r = rec_reserve(HOOK_SYS_ENTER_IOCTL);
	if (!r)
		return;
	r->fd = fd;
	r->cmd = cmd;
	r->arg = arg;
	rec_submit(r);
}

static __always_inline void ioctl_exit(long ret)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct ioctl_args *a = bpf_map_lookup_elem(&inflight, &tid);
	if (!a)
		return;
	struct record *r = rec_reserve(HOOK_SYS_EXIT_IOCTL);
	if (r) {
		r->fd = a->fd;
		r->cmd = a->cmd;
		r->arg = a->arg;
		r->ret = ret;
		rec_submit(r);
	}
	bpf_map_delete_elem(&inflight, &tid);
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

/* raw_tp sys_enter(struct pt_regs *regs, long id): every syscall, cheap id check. */
SEC("raw_tp/sys_enter")
int BPF_PROG(raw_sys_enter, struct pt_regs *regs, long id)
{
	if (id != NR_IOCTL)
		return 0;
	int fd = (int)BPF_CORE_READ(regs, di);
	__u32 cmd = (__u32)BPF_CORE_READ(regs, si);
	__u64 arg = BPF_CORE_READ(regs, dx);
	ioctl_enter(fd, cmd, arg);
	return 0;
}

/* raw_tp sys_exit(struct pt_regs *regs, long ret): the syscall number is orig_ax. */
SEC("raw_tp/sys_exit")
int BPF_PROG(raw_sys_exit, struct pt_regs *regs, long ret)
{
	if (BPF_CORE_READ(regs, orig_ax) != NR_IOCTL)
		return 0;
	ioctl_exit(ret);
	return 0;
}

/* fentry drm_ioctl(struct file *filp, unsigned int cmd, unsigned long arg) */
SEC("fentry/drm_ioctl")
int BPF_PROG(fentry_drm_ioctl, struct file *filp, unsigned int cmd, unsigned long arg)
{
	struct record *r = rec_reserve(HOOK_DRM_IOCTL_ENTER);
	if (!r)
		return 0;
	r->fd = -1;
	r->cmd = cmd;
	r->arg = arg;
	r->ptr = (__u64)filp;
	rec_submit(r);
	return 0;
}

SEC("fexit/drm_ioctl")
int BPF_PROG(fexit_drm_ioctl, struct file *filp, unsigned int cmd, unsigned long arg, long ret)
{
	struct record *r = rec_reserve(HOOK_DRM_IOCTL_EXIT);
	if (!r)
		return 0;
	r->fd = -1;
	r->cmd = cmd;
	r->arg = arg;
	r->ret = ret;
	r->ptr = (__u64)filp;
	rec_submit(r);
	return 0;
}
