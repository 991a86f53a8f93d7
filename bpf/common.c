//go:build ignore
// SPDX-License-Identifier: (GPL-2.0-only OR MIT)
/*
 * The owner of the shared maps (events ring buffer, lost counter) and of the types
 * that cross into Go. It has no programs: the loader creates these maps once and
 * hands them to every other family through MapReplacements.
 */
#include "ghostdriver.h"

char __license[] SEC("license") = "Dual MIT/GPL";

/* Referenced so that bpf2go can emit Go types for them (-type record -type raw_record -type fence_record -type hook). */
const struct record *unused_record __attribute__((unused));
const struct fence_record *unused_fence_record __attribute__((unused));
const struct raw_record *unused_raw_record __attribute__((unused));
const struct ioctl_exit_record *unused_ioctl_exit_record __attribute__((unused));
const struct ioctl_enter_record *unused_ioctl_enter_record __attribute__((unused));
const enum hook *unused_hook __attribute__((unused));
const enum record_flag *unused_flag __attribute__((unused));
const enum ctx_tier *unused_tier __attribute__((unused));
const enum ctx_error *unused_ctx_error __attribute__((unused));
