/* SPDX-License-Identifier: (GPL-2.0-only OR MIT) */
/*
 * Process lifecycle of the processes user space resolved: at exec and exit the kernel
 * deletes the process's `procs` row (appctx.h: a thread-context recipe points into one
 * address space) by itself, and the caller tells user space with a record of its own
 * kind. Only processes with a row produce a record, so fork/exec-heavy hosts pay one
 * hash delete per exec and exit.
 */
#pragma once

#include "appctx.h"

/*
 * process_gone deletes the current process's `procs` row and reports whether there was
 * one (the caller then sends its exec or exit record). At exit it runs for every thread:
 * only the thread group leader's exit is the process's.
 */
static __always_inline bool process_gone(bool exit)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32;
	if (exit && (__u32)id != tgid)
		return false; /* a thread, not the process */
	return bpf_map_delete_elem(&procs, &tgid) == 0;
}
