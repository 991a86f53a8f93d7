//go:build linux

// Application trace context for CUDA calls: the kernel's thread-context recipe table
// (SetProcess), the process lifecycle programs that keep it honest, and OBI's map.
//
// The entry of every top-level API call reads the calling thread's context with the
// DRM path's in-kernel tiers (bpf/include/appctx.h); user space pushes a process's
// OTEP 4947 recipe once it has read the process (internal/enrich). A recipe points into
// one address space, so the kernel deletes the row at exec and exit by itself: without
// those programs attached, SetProcess refuses, and only the OBI and TRACEPARENT tiers
// remain.

package cuda

import (
	"errors"
	"fmt"
	"os"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"

	"github.com/ghostdriver/ghostdriver/internal/capability"
	"github.com/ghostdriver/ghostdriver/internal/tenant/appctx"
)

// Report stages of this file.
const (
	stageAppContext = "app_context"
	stageLifecycle  = "process_lifecycle"
)

// obiMapName is OBI's map and the name of our placeholder of the same shape.
const obiMapName = cudaBPFMapTracesCtxV1

// ErrNoLifecycle: the exec/exit programs are not attached, so no recipe is pushed.
var ErrNoLifecycle = errors.New("cuda: process exec/exit hooks not attached; thread-context recipes are not pushed")

// SetProcess records where pid's threads keep their otel_thread_ctx_v1 pointer (nil:
// known, no thread context). It implements enrich.Kernel.
func (s *Source) SetProcess(pid uint32, tls *appctx.TLSAccess) error {
	if !s.lifecycle {
		return ErrNoLifecycle
	}
	v := appctx.KernelRecipeOf(tls)
	if err := s.coll.Maps[cudaBPFMapProcs].Update(pid, &v, 0); err != nil {
		return err
	}
	s.mu.Lock()
	s.stats.Recipes++
	s.mu.Unlock()
	return nil
}

// attachLifecycle attaches the exec and exit programs: tp_btf, else raw_tp.
func (s *Source) attachLifecycle(spec *ebpf.CollectionSpec, coll *ebpf.Collection, progs map[string]*ebpf.ProgramSpec) {
	rungs := [][2]string{{cudaBPFProgCudaTpbtfExec, cudaBPFProgCudaTpbtfExit}, {cudaBPFProgCudaRawtpExec, cudaBPFProgCudaRawtpExit}}
	var why []string
	for _, pair := range rungs {
		one := spec.Copy()
		one.Programs = map[string]*ebpf.ProgramSpec{pair[0]: progs[pair[0]], pair[1]: progs[pair[1]]}
		c, err := ebpf.NewCollectionWithOptions(one, ebpf.CollectionOptions{MapReplacements: coll.Maps})
		if err != nil {
			why = append(why, progs[pair[0]].SectionName+": "+firstLine(err.Error()))
			continue
		}
		var links []link.Link
		for i, tp := range []string{"sched_process_exec", "sched_process_exit"} {
			var l link.Link
			if progs[pair[i]].Type == ebpf.Tracing {
				l, err = link.AttachTracing(link.TracingOptions{Program: c.Programs[pair[i]]})
			} else {
				l, err = link.AttachRawTracepoint(link.RawTracepointOptions{Name: tp, Program: c.Programs[pair[i]]})
			}
			if err != nil {
				break
			}
			links = append(links, l)
		}
		c.Close() // the links keep the programs
		if err != nil {
			for _, l := range links {
				l.Close()
			}
			why = append(why, progs[pair[0]].SectionName+": "+firstLine(err.Error()))
			continue
		}
		s.links = append(s.links, links...)
		s.lifecycle = true
		s.report.Add(stageLifecycle, progs[pair[0]].SectionName+", "+progs[pair[1]].SectionName, capability.StatusAttached, "")
		return
	}
	s.report.Add(stageLifecycle, "sched_process_exec/exit", capability.StatusUnavailable,
		fmt.Sprintf("%v: OTEP 4947 thread context off for CUDA calls", why))
}

// openOBIMap loads OBI's pinned traces_ctx_v1 when it is there and has our
// placeholder's shape; nil otherwise (the report says why).
func (s *Source) openOBIMap(spec *ebpf.CollectionSpec) *ebpf.Map {
	hook := "map/" + obiMapName
	path := s.cfg.OBIMapPath
	m, err := ebpf.LoadPinnedMap(path, nil)
	if err != nil {
		why := "nothing pinned at " + path + " (OBI not running, or not populating trace context): empty placeholder"
		if !errors.Is(err, os.ErrNotExist) {
			why = "loading " + path + ": " + firstLine(err.Error()) + ": empty placeholder"
		}
		s.report.Add(stageAppContext, hook, capability.StatusUnavailable, why)
		return nil
	}
	want := spec.Maps[obiMapName]
	if (m.Type() != ebpf.LRUHash && m.Type() != ebpf.Hash) || m.KeySize() != want.KeySize || m.ValueSize() != want.ValueSize {
		s.report.Add(stageAppContext, hook, capability.StatusUnavailable, fmt.Sprintf("%s is %v key %d value %d, want %v key %d value %d: empty placeholder",
			path, m.Type(), m.KeySize(), m.ValueSize(), want.Type, want.KeySize, want.ValueSize))
		m.Close()
		return nil
	}
	s.report.Add(stageAppContext, hook, capability.StatusAttached, "pinned at "+path)
	return m
}
