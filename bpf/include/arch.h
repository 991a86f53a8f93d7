/* SPDX-License-Identifier: (GPL-2.0-only OR MIT) */
/*
 * Every per-CPU-architecture fact the BPF programs rely on, in one table. bpf2go builds
 * each program for x86-64 and arm64 (__TARGET_ARCH_x86 / __TARGET_ARCH_arm64); nothing
 * else in bpf/ names a register, a syscall number or a thread_struct member.
 *
 * fact                              x86-64               arm64              source
 * __NR_ioctl                        16                   29                 arch/x86/entry/syscalls/syscall_64.tbl;
 *                                                                           include/uapi/asm-generic/unistd.h (arm64 uses it)
 * syscall number at sys_exit        pt_regs.orig_ax      pt_regs.syscallno  syscall_get_nr(), arch/<arch>/include/asm/syscall.h
 * syscall arguments at sys_enter    di si dx r10 r8 r9   orig_x0, x1..x5    PT_REGS_PARMn_CORE_SYSCALL (libbpf bpf_tracing.h)
 * user thread pointer of a task     thread.fsbase        thread.uw.tp_value struct thread_struct, arch/<arch>/include/asm/processor.h
 *                                   (%fs base)           (TPIDR_EL0)
 * integer argument slots in regs    6 (rdi..r9)          8 (x0..x7)         System V x86-64 psABI §3.2.3; AAPCS64 §6.8.2
 * stack at function entry           [sp] = return addr,  return addr in x30; psABI §3.2.2 ("call" pushes it); AAPCS64 §6.4
 *                                   stack args at sp+8   stack args at sp
 * sp after the return (uretprobe)   entry sp + 8         entry sp           "ret" pops the address; arm64 "ret" branches to x30
 * return value                      rax                  x0                 PT_REGS_RC (libbpf bpf_tracing.h)
 *
 * The TLS layout behind the thread pointer (variant II below tp on x86-64, variant I
 * above it on arm64) is user space's business: internal/tenant/appctx turns it into the
 * tls_recipe offsets (appctx.h) that the programs only add.
 *
 * arm64: the kernel saves TPIDR_EL0 into thread.uw.tp_value when it switches the task
 * out (tls_thread_switch, arch/arm64/kernel/process.c) and sets it at clone
 * (CLONE_SETTLS); a thread that wrote TPIDR_EL0 itself (glibc's main thread, at start-up)
 * and has not been switched out since has a stale value there, and its context is not
 * found (the read fails or lands on no valid record: never a wrong one is accepted
 * without OTEP 4947's valid byte and non-zero ids).
 */
#pragma once

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

#if defined(__TARGET_ARCH_x86)

#define NR_IOCTL 16
/* The syscall number of the pt_regs a raw_tp sys_exit gets (CO-RE read). */
#define SYSCALL_NR_CORE(regs) BPF_CORE_READ((regs), orig_ax)
/* The current task's user thread pointer (BTF pointer walk). */
#define TASK_USER_TP(task) ((task)->thread.fsbase)
#define UARG_REGS 6
#define UARG_STACK_AT 8 /* the first stack argument is at sp + this at function entry */
#define URET_SP_DELTA 8 /* sp after the return minus sp at entry */

#elif defined(__TARGET_ARCH_arm64)

#define NR_IOCTL 29
#define SYSCALL_NR_CORE(regs) BPF_CORE_READ((regs), syscallno)
#define TASK_USER_TP(task) ((task)->thread.uw.tp_value)
#define UARG_REGS 8
#define UARG_STACK_AT 0
#define URET_SP_DELTA 0

#else
#error "arch.h: no facts for this target (bpf2go -target amd64 or arm64)"
#endif

/*
 * The i-th integer argument slot of a user function at its entry (uprobe ctx), i < 16:
 * a register, or the stack (bpf_probe_read_user; a fault sets *fault). A constant-offset
 * register read per case: the verifier refuses a variable offset into the context.
 */
static __always_inline __u64 uprobe_arg(struct pt_regs *ctx, __u32 i, bool *fault)
{
	switch (i) {
	case 0: return PT_REGS_PARM1(ctx);
	case 1: return PT_REGS_PARM2(ctx);
	case 2: return PT_REGS_PARM3(ctx);
	case 3: return PT_REGS_PARM4(ctx);
	case 4: return PT_REGS_PARM5(ctx);
#if defined(__TARGET_ARCH_x86)
	case 5: return ((struct pt_regs *)ctx)->r9;
#elif defined(__TARGET_ARCH_arm64)
	case 5: return ((struct user_pt_regs *)ctx)->regs[5];
	case 6: return ((struct user_pt_regs *)ctx)->regs[6];
	case 7: return ((struct user_pt_regs *)ctx)->regs[7];
#endif
	}
	__u64 v = 0;
	if (bpf_probe_read_user(&v, sizeof(v), (void *)(PT_REGS_SP(ctx) + UARG_STACK_AT + 8 * (i - UARG_REGS))))
		*fault = true;
	return v;
}
