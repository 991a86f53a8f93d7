//go:build linux

// What the hook-cost measurements read from the source (cudatrace -floor, -bpf-stats;
// BENCHMARKS.md "CUDA hook levers"): the floor program's hits and the run time the
// kernel accounts to each uprobe program. Not used to trace.

package cuda

import (
	"fmt"

	"github.com/cilium/ebpf"
)

// FloorHits is how often the floor program ran (Config.FloorLaunches): every launch
// it stood in for, summed over CPUs.
func (s *Source) FloorHits() (uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return 0, fmt.Errorf("source closed")
	}
	var perCPU []uint64
	if err := s.coll.Maps[cudaBPFMapCudaFloorHits].Lookup(uint32(0), &perCPU); err != nil {
		return 0, fmt.Errorf("reading cuda_floor_hits: %w", err)
	}
	var n uint64
	for _, v := range perCPU {
		n += v
	}
	return n, nil
}

// ProgramStat is the kernel's account of one uprobe program: runs and the time spent in
// them (counted only while BPF run-time statistics are on: ebpf.EnableStats).
type ProgramStat struct {
	Program   string
	Runs      uint64
	RunTimeNs uint64
}

// ProgramStats returns the uprobe programs' run counts and run times, those loaded only.
func (s *Source) ProgramStats() ([]ProgramStat, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, fmt.Errorf("source closed")
	}
	var out []ProgramStat
	for _, p := range []struct {
		name string
		prog *ebpf.Program
	}{{cudaBPFProgCudaEnter, s.enter}, {cudaBPFProgCudaReturn, s.ret}, {cudaBPFProgCudaEnterMulti, s.enterMulti}, {cudaBPFProgCudaReturnMulti, s.retMulti}} {
		if p.prog == nil {
			continue
		}
		st, err := p.prog.Stats()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p.name, err)
		}
		out = append(out, ProgramStat{Program: p.name, Runs: st.RunCount, RunTimeNs: uint64(st.Runtime.Nanoseconds())})
	}
	return out, nil
}
