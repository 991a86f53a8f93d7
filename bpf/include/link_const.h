/* SPDX-License-Identifier: (GPL-2.0-only OR MIT) */
/*
 * Link-time constants: configuration the loader writes into the instruction that reads it
 * (internal/probe/linkconst.go), where a `const volatile` global would be a load from the
 * .rodata map's page. The verifier folds both alike (it knows the value and prunes the
 * branches it rules out), but the JIT keeps a .rodata load, and on the paths every
 * non-DRM ioctl of the host runs that load is the costliest thing left: reading a page the
 * syscall has not touched (BENCHMARKS.md, "What a hook pays on this machine").
 *
 * LINK_CONST(gd_name) is a 64-bit immediate load of the undefined symbol gd_name; the ELF
 * reader keeps it as a reference to that name, and the loader sets its value. An object
 * loaded without the loader reads 0 for every link constant, so 0 must be the safe value.
 */
#pragma once

#define LINK_CONST(sym)                                   \
	({                                                \
		__u64 __v;                                \
		asm volatile("%0 = " #sym " ll" : "=r"(__v)); \
		__v;                                      \
	})
