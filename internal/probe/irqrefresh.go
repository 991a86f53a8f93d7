//go:build linux

// GPU interrupt lines registered after Start (a device bound or a driver loaded later):
// gpu_irqs is filled from /proc/interrupts at Start, so the reader reads that file again
// every IRQRefreshInterval, adds new GPU lines to the map (attaching the irq hooks if
// none were at Start), and counts each line found late: its interrupts until then were
// not seen (ghostdriver.source.kernel_drops{reason=gpu_irq_found_late}).

package probe

import (
	"os"

	"github.com/cilium/ebpf"
	"go.uber.org/zap"

	"github.com/ghostdriver/ghostdriver/internal/event"
	"github.com/ghostdriver/ghostdriver/internal/procfs"
)

// procInterrupts is the file GPU interrupt lines are read from (tests point it elsewhere).
var procInterrupts = "/proc/interrupts"

// refreshIRQs runs on the reader's goroutine (the decoder's irqNames is the reader's).
func (l *Live) refreshIRQs() {
	data, err := os.ReadFile(procInterrupts)
	if err != nil {
		l.log.Debug("reading interrupts", zap.String("path", procInterrupts), zap.Error(err))
		return
	}
	found := procfs.DeviceIRQs(string(data), l.cfg.IRQNames)
	added := map[int32]string{}
	for irq, name := range found {
		if _, ok := l.dec.irqNames[irq]; !ok {
			added[irq] = name
		}
	}
	if len(added) == 0 {
		return
	}
	l.closeMu.Lock()
	defer l.closeMu.Unlock()
	if l.closed {
		return
	}
	ld := l.ld
	f, err := ld.family(famIRQ)
	if err != nil {
		l.log.Warn("GPU interrupt lines found after Start, but the irq programs cannot be created", zap.Error(err))
		return
	}
	if l.dec.irqNames == nil {
		l.dec.irqNames = map[int32]string{}
	}
	names := []string{}
	for irq, name := range added {
		if err := f.maps[irqMapGpuIrqs].Update(irq, uint32(0), ebpf.UpdateAny); err != nil {
			l.log.Warn("adding a GPU interrupt line", zap.Int32("irq", irq), zap.Error(err))
			continue
		}
		l.dec.irqNames[irq] = name
		ld.objs.irqNames = l.dec.irqNames
		names = append(names, name)
		l.irqsLate.Add(1)
	}
	if !ld.rep.StageAttached(StageIRQ) {
		// The irq hooks were left out at Start (no GPU line then): attach them now.
		kept := ld.rep.Entries[:0]
		for _, e := range ld.rep.Entries {
			if e.Stage != StageIRQ {
				kept = append(kept, e)
			}
		}
		ld.rep.Entries = kept
		for _, def := range hookDefs(ld.cfg) {
			if def.stage != StageIRQ {
				continue
			}
			missing := false
			for _, r := range def.rungs {
				if ld.tryRung(def, r, &missing) {
					break
				}
			}
		}
		hooks := append(make([]event.HookStatus, 0, len(ld.rep.Entries)), ld.rep.Entries...)
		l.mu.Lock()
		l.stats.Hooks = hooks
		l.mu.Unlock()
	}
	l.log.Warn("GPU interrupt lines found after Start: their interrupts until now were not seen",
		zap.Strings("lines", names), zap.Bool("irq_hooks_attached", ld.rep.StageAttached(StageIRQ)))
}
