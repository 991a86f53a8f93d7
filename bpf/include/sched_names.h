/* SPDX-License-Identifier: (GPL-2.0-only OR MIT) */
/*
 * The names a drm_gpu_scheduler gives the records that mention it: its own name (the ring)
 * and its device's name as dev_name() prints it (init_name, else the kobject's name). One
 * reader for the event records (sched.c) and the per-job records (jobs.c).
 */
#pragma once

#include "drm_types.h"

static __always_inline void read_sched_names(struct drm_gpu_scheduler___gd *s, char *ring, __u32 ring_len,
					     char *dev, __u32 dev_len)
{
	const char *name = BPF_CORE_READ(s, name);
	if (name)
		bpf_probe_read_kernel_str(ring, ring_len, name);
	if (bpf_core_field_exists(s->dev)) {
		struct device *d = BPF_CORE_READ(s, dev);
		if (d) {
			const char *dn = BPF_CORE_READ(d, init_name);
			if (!dn)
				dn = BPF_CORE_READ(d, kobj.name);
			if (dn)
				bpf_probe_read_kernel_str(dev, dev_len, dn);
		}
	}
}
