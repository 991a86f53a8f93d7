// Package bpflint checks the compiled BPF objects for patterns that are wrong on some
// kernels although every test run on one kernel passes; the tests of the packages that
// embed objects (internal/probe, internal/cuda) call it on each collection spec.
package bpflint

import (
	"fmt"
	"sort"

	"github.com/cilium/ebpf"
)

// PerCPUScratch names every per-CPU map whose values are larger than a counter, with the
// programs that use it. Such a map is a scratch buffer, and a per-CPU scratch is not
// private to one program run: tracing programs run with migration disabled but, on a
// preemptible kernel, can be preempted, and then another program (or, on kernels whose
// raw tracepoints have no recursion guard, before 6.10, the same one) runs on that CPU
// and reuses the buffer while the first is still filling it. Counters (8-byte values) are
// allowed: they must be incremented atomically, which this check does not see.
func PerCPUScratch(spec *ebpf.CollectionSpec) []string {
	users := map[string][]string{}
	for name, p := range spec.Programs {
		seen := map[string]bool{}
		for _, ins := range p.Instructions {
			if ref := ins.Reference(); ref != "" && !seen[ref] {
				seen[ref] = true
				users[ref] = append(users[ref], name)
			}
		}
	}
	var out []string
	for name, m := range spec.Maps {
		switch m.Type {
		case ebpf.PerCPUArray, ebpf.PerCPUHash, ebpf.LRUCPUHash:
		default:
			continue
		}
		if m.ValueSize <= 8 {
			continue
		}
		progs := users[name]
		sort.Strings(progs)
		out = append(out, fmt.Sprintf("%s (%s, %d-byte values) used by %v", name, m.Type, m.ValueSize, progs))
	}
	sort.Strings(out)
	return out
}
