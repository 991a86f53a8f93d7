//go:build linux

// Uprobe attachment: library files found in /proc/*/maps (rescan) or named by the
// operator are opened as a tenant's files and get the entry/return pair at every API
// function they export; the Xid tracepoint.

package cuda

import (
	"errors"
	"fmt"
	"os"
	"strconv"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/features"
	"github.com/cilium/ebpf/link"
	"go.uber.org/zap"
	"golang.org/x/sys/unix"

	"github.com/ghostdriver/ghostdriver/internal/capability"
	"github.com/ghostdriver/ghostdriver/internal/procfs"
)

// hookedLib is one library file with its attached uprobes.
type hookedLib struct {
	Library
	offsets map[uint64]int // file offset → API row attached there
	exports map[string]uint64
	// funcs are the file offsets of the function symbols (.symtab and .dynsym) of a
	// driver library: the only places a learned entry point may be hooked (an int3
	// inside an instruction would corrupt every process mapping the file).
	funcs map[uint64]bool
	// learnt counts entry points hooked (or tried) here; capReported: the cap was hit.
	learnt      int
	capReported bool
}

// attachXid tries raw_tp, then the classic tracepoint.
func (s *Source) attachXid(spec *ebpf.CollectionSpec, coll *ebpf.Collection, progs map[string]*ebpf.ProgramSpec) {
	const stage = "xid"
	for _, name := range []string{cudaBPFProgRawtpNvidiaDevXid, cudaBPFProgTpNvidiaDevXid} {
		one := spec.Copy()
		one.Programs = map[string]*ebpf.ProgramSpec{name: progs[name]}
		c, err := ebpf.NewCollectionWithOptions(one, ebpf.CollectionOptions{MapReplacements: coll.Maps})
		hook := progs[name].SectionName
		if err != nil {
			s.report.Add(stage, hook, capability.StatusUnavailable, firstLine(err.Error()))
			continue
		}
		prog := c.DetachProgram(name)
		c.Close()
		var l link.Link
		if progs[name].Type == ebpf.RawTracepoint {
			l, err = link.AttachRawTracepoint(link.RawTracepointOptions{Name: "nvidia_dev_xid", Program: prog})
		} else {
			l, err = link.Tracepoint("nvidia", "nvidia_dev_xid", prog, nil)
		}
		if err != nil {
			prog.Close()
			why := firstLine(err.Error())
			if errors.Is(err, os.ErrNotExist) {
				why = "tracepoint not present (nvidia module not loaded)"
			}
			s.report.Add(stage, hook, capability.StatusUnavailable, why)
			continue
		}
		// The program stays referenced by the link; closing our fd is fine.
		prog.Close()
		s.links = append(s.links, l)
		s.report.Add(stage, hook, capability.StatusAttached, "")
		return
	}
}

// rescan hooks CUDA libraries that processes map and we have not hooked yet.
func (s *Source) rescan() {
	s.mu.Lock()
	known := make(map[[2]uint64]bool, len(s.libs))
	for k := range s.libs {
		known[k] = true
	}
	s.mu.Unlock()
	libs, truncated := scanLibraries(s.cfg.ProcRoot, known, defaultMapsBounds)
	if truncated > 0 {
		s.mu.Lock()
		s.stats.MapsTruncated += uint64(truncated)
		s.mu.Unlock()
		s.log.Debug("maps files cut at their read bounds during the library scan", zap.Int("processes", truncated))
	}
	for _, lib := range libs {
		s.hookLibrary(lib, false)
	}
}

func (s *Source) hookPath(path string) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		s.mu.Lock()
		s.report.Add("uprobe", path, capability.StatusUnavailable, err.Error())
		s.mu.Unlock()
		return
	}
	layer, ok := libraryLayer(path)
	if !ok {
		layer = Runtime // an application library carrying a static runtime
	}
	// The operator named this path: a symlink (libcuda.so.1 → the versioned file) is
	// followed; it must still be a regular file.
	s.hookLibrary(Library{Layer: layer, Path: path, Mapped: path, Dev: st.Dev, Ino: st.Ino}, true)
}

// openLibrary opens a library file as one that a tenant may have replaced since it was
// found: regular files only, never blocking (procfs.OpenRegular), and only the file
// whose dev/inode was found (else every uprobe would land at offsets computed for
// another file). The uprobes are attached through the returned descriptor
// (/proc/self/fd/N), so the path is not resolved again.
func openLibrary(lib Library, follow bool) (*os.File, error) {
	open := procfs.OpenRegular
	if follow {
		open = procfs.OpenRegularLink
	}
	f, err := open(lib.Path)
	if err != nil {
		return nil, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		f.Close()
		return nil, err
	}
	if st.Dev != lib.Dev || st.Ino != lib.Ino {
		f.Close()
		return nil, errors.New("file replaced since it was found")
	}
	return f, nil
}

// fdPath names an open file for link.OpenExecutable and the kernel's uprobe attach.
func fdPath(f *os.File) string { return "/proc/self/fd/" + strconv.Itoa(int(f.Fd())) }

// hookLibrary attaches the entry/return pair at every table function the library
// exports (both layers are tried: a static runtime can sit in any library). follow:
// the path is the operator's (ExtraLibraries), not a tenant's.
func (s *Source) hookLibrary(lib Library, follow bool) {
	key := [2]uint64{lib.Dev, lib.Ino}
	s.mu.Lock()
	if _, ok := s.libs[key]; ok || s.closed {
		s.mu.Unlock()
		return
	}
	h := &hookedLib{Library: lib, offsets: map[uint64]int{}, exports: map[string]uint64{}}
	s.libs[key] = h
	s.mu.Unlock()
	defer func() {
		// Counted once every uprobe of the file is attached (tests wait on it).
		s.mu.Lock()
		s.stats.Libraries++
		s.mu.Unlock()
	}()

	f, err := openLibrary(lib, follow)
	if err != nil {
		s.addReport("uprobe", lib.Mapped, capability.StatusUnavailable, err.Error())
		return
	}
	defer f.Close()
	ex, err := link.OpenExecutable(fdPath(f))
	if err != nil {
		s.addReport("uprobe", lib.Mapped, capability.StatusUnavailable, err.Error())
		return
	}
	syms, funcs, err := librarySymbols(f, lib.Layer == Driver)
	if err != nil {
		s.addReport("uprobe", lib.Mapped, capability.StatusUnavailable, err.Error())
		return
	}
	s.mu.Lock()
	h.funcs = funcs
	s.mu.Unlock()
	attached, otherLayer := 0, 0
	var multiAt, multiCookie []uint64 // with uprobe_multi: attached together below
	for id, a := range apis {
		off, ok := syms[a.Name]
		if !ok {
			continue
		}
		if !s.cfg.hooks(a.Layer) {
			otherLayer++
			continue
		}
		h.exports[a.Name] = off
		if _, dup := h.offsets[off]; dup {
			continue // an alias of a row already hooked
		}
		if s.enterMulti != nil {
			multiAt, multiCookie = append(multiAt, off), append(multiCookie, s.cfg.cookieOf(id))
			h.offsets[off] = id
			continue
		}
		// At the offset read from this very file: the library never parses it again.
		if err := s.attachPair(ex, a.Name, off, s.cfg.cookieOf(id)); err != nil {
			s.addReport("uprobe", lib.Mapped+":"+a.Name, capability.StatusUnavailable, firstLine(err.Error()))
			continue
		}
		h.offsets[off] = id
		attached++
	}
	if len(multiAt) > 0 {
		if err := s.attachMulti(ex, multiAt, multiCookie); err != nil {
			s.addReport("uprobe_multi", lib.Mapped, capability.StatusUnavailable, firstLine(err.Error()))
			for _, off := range multiAt {
				delete(h.offsets, off)
			}
		} else {
			attached += len(multiAt)
		}
	}
	switch {
	case attached == 0 && otherLayer > 0:
		s.addReport("uprobe", lib.Mapped, capability.StatusUnavailable, fmt.Sprintf("its %d CUDA functions are of a layer not hooked (layers: %s)", otherLayer, s.cfg.Layers))
	case attached == 0:
		s.addReport("uprobe", lib.Mapped, capability.StatusUnavailable, "exports none of the hooked CUDA functions")
	default:
		s.addReport("uprobe", fmt.Sprintf("%s (%s, %d functions)", lib.Mapped, lib.Layer, attached), capability.StatusAttached, "")
	}
	s.hooked()
}

func (s *Source) hooked() {
	s.mu.Lock()
	f := s.onHook
	s.mu.Unlock()
	if f != nil {
		f()
	}
}

// attachPair attaches the entry and return programs at a symbol or a file offset (the
// entry program alone for an entry-only cookie).
func (s *Source) attachPair(ex *link.Executable, sym string, addr uint64, c uint64) error {
	opts := &link.UprobeOptions{Address: addr, Cookie: c}
	if c&cookieEntryOnly != 0 {
		up, err := ex.Uprobe(sym, s.enter, opts)
		if err != nil {
			return err
		}
		return s.keepLinks(up)
	}
	// Return first: a call that enters between the two attachments then has a return
	// without an entry (the return program ignores it) rather than an entry without a
	// return (a stale frame, dropped later by stack position but counted).
	ret, err := ex.Uretprobe(sym, s.ret, opts)
	if err != nil {
		return err
	}
	up, err := ex.Uprobe(sym, s.enter, opts)
	if err != nil {
		ret.Close()
		return err
	}
	return s.keepLinks(up, ret)
}

// attachMulti attaches the entry program at every offset and the return program at those
// whose cookie is not entry-only, with one uprobe_multi link each (return first, as in
// attachPair).
func (s *Source) attachMulti(ex *link.Executable, offs, cookies []uint64) error {
	var retAt, retCookie []uint64
	for i, c := range cookies {
		if c&cookieEntryOnly == 0 {
			retAt, retCookie = append(retAt, offs[i]), append(retCookie, c)
		}
	}
	var ls []link.Link
	if len(retAt) > 0 {
		ret, err := ex.UretprobeMulti(nil, s.retMulti, &link.UprobeMultiOptions{Addresses: retAt, Cookies: retCookie})
		if err != nil {
			return err
		}
		ls = append(ls, ret)
	}
	up, err := ex.UprobeMulti(nil, s.enterMulti, &link.UprobeMultiOptions{Addresses: offs, Cookies: cookies})
	if err != nil {
		for _, l := range ls {
			l.Close()
		}
		return err
	}
	return s.keepLinks(append(ls, up)...)
}

// loadMulti loads the uprobe_multi programs (Config.UprobeMulti); where the kernel
// refuses them the classic uprobes stay in use and the report says why. The link type is
// probed first: a kernel before 6.6 may load the programs (it does not check their
// expected attach type) and refuse only the link, which would leave a library unhooked.
func (s *Source) loadMulti(spec *ebpf.CollectionSpec, coll *ebpf.Collection, progs map[string]*ebpf.ProgramSpec) {
	if err := features.HaveBPFLinkUprobeMulti(); err != nil {
		s.report.Add("uprobe_multi", "uprobe.multi/cuda_enter_multi", capability.StatusUnavailable, firstLine(err.Error())+"; classic uprobes used")
		return
	}
	one := spec.Copy()
	one.Programs = map[string]*ebpf.ProgramSpec{cudaBPFProgCudaEnterMulti: progs[cudaBPFProgCudaEnterMulti],
		cudaBPFProgCudaReturnMulti: progs[cudaBPFProgCudaReturnMulti]}
	c, err := ebpf.NewCollectionWithOptions(one, ebpf.CollectionOptions{MapReplacements: coll.Maps})
	if err != nil {
		s.report.Add("uprobe_multi", "uprobe.multi/cuda_enter_multi", capability.StatusUnavailable, firstLine(err.Error())+"; classic uprobes used")
		return
	}
	s.enterMulti, s.retMulti = c.DetachProgram(cudaBPFProgCudaEnterMulti), c.DetachProgram(cudaBPFProgCudaReturnMulti)
	c.Close()
	s.report.Add("uprobe_multi", "uprobe.multi/cuda_enter_multi", capability.StatusAttached, "")
}

// keepLinks keeps attached links until Close, or closes them if Close already ran (the
// worker attached while it did: nothing may outlive it).
func (s *Source) keepLinks(ls ...link.Link) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		for _, l := range ls {
			l.Close()
		}
		return errors.New("source closed")
	}
	s.links = append(s.links, ls...)
	return nil
}
