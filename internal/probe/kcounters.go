//go:build linux

// The kernel side's counts of what it passed over or could not keep, besides ring-buffer
// loss: the per-CPU `kcounters` of bpf/include/kcounters.h, the evictions of the pre-5.11
// `inflight` table, processes that did not fit `procs`, and GPU interrupt lines found
// after Start. Live.Stats reports them as SourceStats.KernelDrops.

package probe

import (
	"errors"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"github.com/ghostdriver/ghostdriver/internal/event"
)

// kcounterReasons names the indices of enum kcounter (bpf/include/kcounters.h).
var kcounterReasons = map[uint32]string{
	0: event.KernelDropIoctlSlotUnavailable,
	1: event.KernelDropIoctlThreadExited,
	2: event.KernelDropFencePassedOver,
	3: event.KernelDropIoctlExitMissed,
	4: event.KernelDropIoctlWithoutJob,
}

// kcountersMap returns the one `kcounters` instance every family shares, created from
// the first family spec that declares it.
func (ld *loader) kcountersMap(spec *ebpf.CollectionSpec) (*ebpf.Map, error) {
	ms, ok := spec.Maps[syscallsMapKcounters]
	if !ok {
		return nil, nil
	}
	if ld.objs.kcounters == nil {
		m, err := ebpf.NewMap(ms)
		if err != nil {
			return nil, err
		}
		ld.objs.kcounters = m
	}
	return ld.objs.kcounters, nil
}

// kernelDrops reads every count; it is called with the objects open.
func (l *Live) kernelDrops() map[string]uint64 {
	out := make(map[string]uint64, len(event.KernelDropReasons))
	for _, r := range event.KernelDropReasons {
		out[r] = 0
	}
	if m := l.objs.kcounters; m != nil {
		for i, reason := range kcounterReasons {
			var perCPU []uint64
			if err := m.Lookup(i, &perCPU); err != nil {
				continue
			}
			for _, v := range perCPU {
				out[reason] += v
			}
		}
	}
	out[event.KernelDropIoctlSlotEvicted] = l.inflightEvictions()
	out[event.KernelDropProcessTableFull] = l.procsFull.Load()
	out[event.KernelDropIRQFoundLate] = l.irqsLate.Load()
	out[event.KernelDropThreadContextUnreadable] = l.dec.ctxUnreadable.Load()
	return out
}

// inflightEvictions is, on the pre-5.11 path, how many pending ioctls the LRU table
// evicted: the programs count every entry they add and remove in inflight_n, so what
// left the table without being removed is inflight_n minus the entries present. Read
// while ioctls are in flight it can be off by the entries being added; it is kept
// monotonic.
func (l *Live) inflightEvictions() uint64 {
	f, ok := l.objs.families[famSyscalls]
	if !ok || f.coll == nil || !f.hashInflight {
		return l.evicted.Load()
	}
	v, ok := f.coll.Variables[syscallsVarInflightN]
	if !ok {
		return l.evicted.Load()
	}
	var n uint64
	if err := v.Get(&n); err != nil {
		return l.evicted.Load()
	}
	var entries uint64
	var k uint32
	var a []byte
	it := f.maps[syscallsMapInflight].Iterate()
	for it.Next(&k, &a) {
		entries++
	}
	if it.Err() == nil && n > entries {
		if d := n - entries; d > l.evicted.Load() {
			l.evicted.Store(d)
		}
	}
	return l.evicted.Load()
}

// isTableFull reports whether a map update failed because the map is full.
func isTableFull(err error) bool {
	return errors.Is(err, unix.E2BIG) || errors.Is(err, unix.ENOSPC)
}
