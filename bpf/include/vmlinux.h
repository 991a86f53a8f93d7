/* SPDX-License-Identifier: (GPL-2.0-only OR MIT) */
/*
 * Kernel types for CO-RE, per target architecture. bpf2go compiles every program once
 * per target (-target amd64,arm64) and defines __TARGET_ARCH_<arch>; this header picks
 * the matching dump. CO-RE relocates every field access against the running kernel's
 * BTF, so the dump only has to name the types and members the programs use.
 *
 *   vmlinux_x86.h    bpftool btf dump file /sys/kernel/btf/vmlinux format c, on the
 *                    x86-64 development host (kernel 6.18).
 *   vmlinux_arm64.h  the .BTF blob of Debian bookworm's linux-image-6.1.0-57-arm64
 *                    (6.1.192-3): the raw arm64 Image in /boot/vmlinuz-* carries the
 *                    kernel's BTF section verbatim; the blob is found by its header
 *                    (magic 0xeb9f, version 1, hdr_len 24, lengths within the image)
 *                    and dumped with bpftool btf dump file <blob> format c.
 */
#ifndef GHOSTDRIVER_VMLINUX_DISPATCH_H
#define GHOSTDRIVER_VMLINUX_DISPATCH_H

#if defined(__TARGET_ARCH_x86)
#include "vmlinux_x86.h"
#elif defined(__TARGET_ARCH_arm64)
#include "vmlinux_arm64.h"
#else
#error "no vmlinux dump for this target: compile with bpf2go -target amd64 or arm64 (defines __TARGET_ARCH_<arch>)"
#endif

#endif
