//go:build ignore
// SPDX-License-Identifier: (GPL-2.0-only OR MIT)
/*
 * GPU interrupt handler entry/exit (th's neighbourhood). Every device interrupt goes
 * through these hooks, so the first thing done is a lookup in gpu_irqs, which user
 * space fills from /proc/interrupts with the IRQ numbers of GPU drivers (by name).
 */
#include "ghostdriver.h"

char __license[] SEC("license") = "Dual MIT/GPL";

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 256);
	__type(key, __s32);   /* irq number */
	__type(value, __u32); /* unused (user space keeps the names) */
} gpu_irqs SEC(".maps");

static __always_inline int on_irq(__u16 hook, int irq, long ret)
{
	if (!bpf_map_lookup_elem(&gpu_irqs, &irq))
		return 0;
	struct record *r = rec_reserve(hook);
	if (!r)
		return 0;
	r->irq = irq;
	r->ret = ret;
	rec_submit(r);
	return 0;
}

SEC("tp_btf/irq_handler_entry")
int BPF_PROG(tpbtf_irq_handler_entry, int irq, struct irqaction *action)
{
	return on_irq(HOOK_IRQ_HANDLER_ENTRY, irq, 0);
}

SEC("tp_btf/irq_handler_exit")
int BPF_PROG(tpbtf_irq_handler_exit, int irq, struct irqaction *action, int ret)
{
	return on_irq(HOOK_IRQ_HANDLER_EXIT, irq, ret);
}

SEC("raw_tp/irq_handler_entry")
int BPF_PROG(rawtp_irq_handler_entry, int irq, struct irqaction *action)
{
	return on_irq(HOOK_IRQ_HANDLER_ENTRY, irq, 0);
}

SEC("raw_tp/irq_handler_exit")
int BPF_PROG(rawtp_irq_handler_exit, int irq, struct irqaction *action, int ret)
{
	return on_irq(HOOK_IRQ_HANDLER_EXIT, irq, ret);
}

struct irq_tp_args {
	__u64 common;
	__s32 irq;
	__s32 second; /* entry: __data_loc name; exit: ret */
};

SEC("tracepoint/irq/irq_handler_entry")
int tp_irq_handler_entry(struct irq_tp_args *ctx)
{
	return on_irq(HOOK_IRQ_HANDLER_ENTRY, ctx->irq, 0);
}

SEC("tracepoint/irq/irq_handler_exit")
int tp_irq_handler_exit(struct irq_tp_args *ctx)
{
	return on_irq(HOOK_IRQ_HANDLER_EXIT, ctx->irq, ctx->second);
}
