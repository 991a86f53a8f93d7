//go:build linux

// The blocking-sync split's hooks (Config.SyncWakeups): sched:sched_waking stamps the open
// frames of a traced thread with its wake-up, irq:irq_handler_entry keeps the time of the
// latest nvidia interrupt (bpf/cuda.c). tp_btf where BTF allows, raw_tp otherwise; the
// interrupt hook is attached only when /proc/interrupts names an nvidia interrupt.

package cuda

import (
	"fmt"
	"os"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"

	"github.com/ghostdriver/ghostdriver/internal/capability"
	"github.com/ghostdriver/ghostdriver/internal/procfs"
)

// stageSyncWakeup is the report's stage of these hooks.
const stageSyncWakeup = "sync_wakeup"

// procInterrupts is where the nvidia interrupts are read (tests point it elsewhere).
var procInterrupts = "/proc/interrupts"

func (s *Source) attachWakeups(spec *ebpf.CollectionSpec, coll *ebpf.Collection, progs map[string]*ebpf.ProgramSpec) {
	names := s.cfg.WakeupIRQNames
	if len(names) == 0 {
		names = []string{"nvidia"}
	}
	var irqs map[int32]string
	if data, err := os.ReadFile(procInterrupts); err == nil {
		irqs = procfs.DeviceIRQs(string(data), names)
	}
	for irq := range irqs {
		_ = coll.Maps[cudaBPFMapCudaIrqs].Update(irq, uint32(0), ebpf.UpdateAny)
	}
	type hook struct{ tp, btf, raw string }
	hooks := []hook{{"sched_waking", cudaBPFProgCudaTpbtfWaking, cudaBPFProgCudaRawtpWaking}}
	if len(irqs) > 0 {
		hooks = append(hooks, hook{"irq_handler_entry", cudaBPFProgCudaTpbtfIrqEntry, cudaBPFProgCudaRawtpIrqEntry})
	} else {
		s.report.Add(stageSyncWakeup, "irq_handler_entry", capability.StatusUnavailable,
			fmt.Sprintf("no interrupt of %v in %s: the split has no interrupt point", names, procInterrupts))
	}
	for _, h := range hooks {
		var why []string
		attached := false
		for _, name := range []string{h.btf, h.raw} {
			one := spec.Copy()
			one.Programs = map[string]*ebpf.ProgramSpec{name: progs[name]}
			c, err := ebpf.NewCollectionWithOptions(one, ebpf.CollectionOptions{MapReplacements: coll.Maps})
			if err != nil {
				why = append(why, progs[name].SectionName+": "+firstLine(err.Error()))
				continue
			}
			var l link.Link
			if progs[name].Type == ebpf.Tracing {
				l, err = link.AttachTracing(link.TracingOptions{Program: c.Programs[name]})
			} else {
				l, err = link.AttachRawTracepoint(link.RawTracepointOptions{Name: h.tp, Program: c.Programs[name]})
			}
			c.Close()
			if err != nil {
				why = append(why, progs[name].SectionName+": "+firstLine(err.Error()))
				continue
			}
			s.links = append(s.links, l)
			s.report.Add(stageSyncWakeup, progs[name].SectionName, capability.StatusAttached, "")
			attached = true
			break
		}
		if !attached {
			s.report.Add(stageSyncWakeup, h.tp, capability.StatusUnavailable, fmt.Sprint(why))
			continue
		}
		if h.tp == "sched_waking" {
			s.wakeups = true
		}
	}
}
