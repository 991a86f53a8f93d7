// Package probe is the DRM live source: it loads ghostdriver's eBPF programs (bpf/*.c;
// the bpf2go output is committed here), attaches each hook through its ladder (fentry >
// tp_btf > raw_tp > tracepoint), reports for every stage which hook measures it or why
// none does (internal/capability), and reads the one ring buffer into event.Event values
// for the same pipeline as replay. It decodes its own records (record.go, and
// jobs_decode.go for the jobs record mode); the raw trace entries of the classic
// tracepoint rung are decoded by internal/ftrace with each event's tracefs format file
// (classic.go). Linux only: elsewhere every feature probe says so.
package probe
