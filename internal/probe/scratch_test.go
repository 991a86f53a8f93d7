package probe

// The embedded objects hold no per-CPU scratch buffer (internal/bpflint): the jobs mode's
// shared scratch put one job's stamps under another job's key on the preemptible 7.3 guest.

import (
	"testing"

	"github.com/cilium/ebpf"

	"github.com/ghostdriver/ghostdriver/internal/bpflint"
)

func TestObjectsHaveNoPerCPUScratch(t *testing.T) {
	for name, load := range map[string]func() (*ebpf.CollectionSpec, error){
		"common": loadCommon, "drivers": loadDrivers, "fence": loadFence, "funcs": loadFuncs,
		"irq": loadIrq, "jobs": loadJobs, "sched": loadSched, "syscalls": loadSyscalls,
	} {
		spec, err := load()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, s := range bpflint.PerCPUScratch(spec) {
			t.Errorf("%s: per-CPU scratch %s", name, s)
		}
	}
}
