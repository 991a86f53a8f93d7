/* SPDX-License-Identifier: (GPL-2.0-only OR MIT) */
/*
 * What the kernel side passed over or could not keep, besides ring-buffer reservation
 * failures (`lost`, ghostdriver.h): one per-CPU counter per cause. The loader creates the
 * map once and hands it to every family that declares it (like `lost`); user space sums
 * the CPUs and exports each cause as ghostdriver.source.kernel_drops{reason}
 * (internal/probe/kcounters.go names them). Indices are read by user space: append,
 * never renumber.
 */
#pragma once

enum kcounter {
	/*
	 * A followed submit ioctl whose arguments could not be kept for its exit: the
	 * pre-5.11 `inflight` table refused the entry, or the thread's task storage could
	 * not be had (bpf_task_storage_get returns NULL under its recursion guard). The
	 * enter record is sent, the exit record will not be.
	 */
	KC_IOCTL_SLOT_UNAVAILABLE = 0,
	/* A thread exited with a followed ioctl recorded in flight (no exit record). */
	KC_IOCTL_THREAD_EXITED = 1,
	/* A dma_fence event passed over by the fence filter (context not followed). */
	KC_FENCE_PASSED_OVER = 2,
	/*
	 * A followed submit ioctl entered while the thread's previous one was still marked in
	 * flight: that one's exit was never recorded (its exit hook found no slot, was skipped
	 * by the kernel's recursion guard, or ran before it was attached).
	 */
	KC_IOCTL_EXIT_MISSED = 3,
	/*
	 * Not a loss: a followed ioctl of a process user space knows in which nothing of the
	 * thread was recorded (no job queued, no BO validated, no fence waited on): its entry
	 * was deferred (ioctl_slot.h) and neither record was sent. User space would only
	 * have counted it.
	 */
	KC_IOCTL_WITHOUT_JOB = 4,
	KC_MAX = 8,
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, KC_MAX);
	__type(key, __u32);
	__type(value, __u64);
} kcounters SEC(".maps");

static __always_inline void kcount(__u32 which)
{
	__u64 *n = bpf_map_lookup_elem(&kcounters, &which);
	if (n) /* atomic: another program can interleave on this CPU when preempted */
		__sync_fetch_and_add(n, 1);
}
