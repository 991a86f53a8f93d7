package cuda

import (
	"context"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"
	"unsafe"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"github.com/cilium/ebpf/ringbuf"
	"github.com/cilium/ebpf/rlimit"
	"go.uber.org/zap"
	"golang.org/x/sys/unix"

	"github.com/ghostdriver/ghostdriver/internal/ctxtier"
	"github.com/ghostdriver/ghostdriver/internal/kstr"
	"github.com/ghostdriver/ghostdriver/internal/tenant/appctx"
)

// Config selects what the CUDA source hooks.
type Config struct {
	// ProcRoot is where processes are found (default /proc; tests point elsewhere).
	ProcRoot string
	// ExtraLibraries are more library files to hook (absolute paths), e.g. a runtime
	// statically linked into an application library that exports the cuda* symbols.
	ExtraLibraries []string
	// RescanInterval is how often /proc/*/maps is scanned for CUDA library files not
	// hooked yet (new containers, new CUDA versions). Default 2s; <0 disables.
	RescanInterval time.Duration
	// IgnoreEntryPoints turns off following cuGetProcAddress: launches the runtime makes
	// through the driver's entry-point table are then seen only at the runtime layer.
	IgnoreEntryPoints bool
	// NoXid leaves the nvidia:nvidia_dev_xid tracepoint alone.
	NoXid bool
	// RingBufferBytes sizes the ring (power of two, page multiple; default 4 MiB).
	RingBufferBytes int
	// PollInterval is the reader's deadline (default 10ms): records are produced
	// without wakeups and drained at least this often.
	PollInterval time.Duration
	// ContextTiers are the in-kernel application trace-context tiers read at the entry
	// of a top-level API call, in lookup order ("otep4947", "obi"); nil means both in
	// that order, an empty non-nil slice none.
	ContextTiers []string
	// OBIMapPath is where OBI pins traces_ctx_v1 (default /sys/fs/bpf/traces_ctx_v1);
	// when nothing usable is pinned there the OBI tier reads an empty placeholder.
	OBIMapPath string
}

func (c Config) withDefaults() (Config, error) {
	if c.ProcRoot == "" {
		c.ProcRoot = "/proc"
	}
	if c.RescanInterval == 0 {
		c.RescanInterval = 2 * time.Second
	}
	if c.RingBufferBytes == 0 {
		c.RingBufferBytes = 4 << 20
	}
	page := os.Getpagesize()
	if n := c.RingBufferBytes; n < page || n&(n-1) != 0 || n%page != 0 {
		return c, fmt.Errorf("ring buffer size %d is not a power of two multiple of the page size (%d)", n, page)
	}
	if c.ContextTiers == nil {
		c.ContextTiers = []string{ctxtier.NameOTEP4947, ctxtier.NameOBI}
	}
	if c.OBIMapPath == "" {
		c.OBIMapPath = "/sys/fs/bpf/traces_ctx_v1"
	}
	if c.PollInterval <= 0 {
		c.PollInterval = 10 * time.Millisecond
	}
	return c, nil
}

// Call is one traced CUDA API call, entry to return, decoded.
type Call struct {
	API   int // row of APIs()
	Start int64
	End   int64 // source clock (CLOCK_MONOTONIC ns)
	PID   uint32
	TID   uint32
	CPU   uint32
	Comm  string
	// Stream is the stream argument (for event APIs: the event). Bytes is the size
	// argument scaled to bytes, Handle the API's handle argument (api.go).
	Stream, Bytes, Handle uint64
	Ret                   int32
	// Depth is how many traced calls were in progress on the thread at entry: the
	// driver launch the runtime makes inside cudaLaunchKernel has Depth 1.
	Depth uint8
	// EntryPoint is true when the call was caught at an address learned from
	// cuGetProcAddress rather than at the exported symbol.
	EntryPoint bool
	// Untimed: nested deeper than the BPF stack (Start is 0); ArgFault: an argument
	// could not be read.
	Untimed, ArgFault bool
	// CtxTier says where TraceID/SpanID (the calling thread's application span when the
	// call began) came from: ctxtier.OTEP4947 or ctxtier.OBI, 0 when none
	// (nested calls never read it).
	CtxTier uint8
	TraceID [16]byte
	SpanID  [8]byte
}

// Name is the API function's name.
func (c *Call) Name() string { return apis[c.API].Name }

// Info is the call's API row.
func (c *Call) Info() API { return apis[c.API] }

// Xid is one nvidia:nvidia_dev_xid event: the driver reported a GPU error.
type Xid struct {
	Time   int64
	Device string // PCI name (0000:xx:00.0)
	Code   uint32
	Msg    string
	// PID/TID are of the task the tracepoint ran in: often the faulting process (the
	// channel's owner when the error is reported from its ioctl), often not (interrupt
	// or a kernel worker): match jobs by device and time, not by PID alone.
	PID, TID uint32
	Comm     string
}

// Sink receives the source's output in order per CPU (the reader merges CPUs as the
// ring buffer does: commit order). The slice is only valid during the call.
type Sink interface {
	Calls(batch []Call)
	Xid(x Xid)
	// ProcessGone: a process the source was told about (SetProcess) exec'd or exited;
	// the kernel has already forgotten its thread-context recipe.
	ProcessGone(pid uint32, exec bool)
	// Watermark says no record earlier than t is still to come except within the
	// poll interval; it drives the assembler's timeouts.
	Watermark(t int64)
}

// Stats is what the source counted.
type Stats struct {
	Calls              uint64 // call records decoded
	ByAPI              map[string]uint64
	Xids               uint64
	ProcAddress        uint64 // cuGetProcAddress returns seen
	EntryPointHooks    uint64 // uprobes attached at addresses learned from them
	EntryPointAtExport uint64 // learned addresses that were the exported symbol itself
	// EntryPointsRefused counts learned addresses not hooked: outside every hooked driver
	// library (libcuda), not the start of one of its function symbols, or over the
	// library's maxLearntHooks. The addresses come from the process: it can return any.
	EntryPointsRefused uint64
	// MapsTruncated counts /proc/<pid>/maps reads that stopped at their bounds
	// (mapsBounds): libraries or entry points beyond them are not seen.
	MapsTruncated uint64
	Libraries     int
	Malformed     uint64
	Lost          uint64 // ring buffer reserve failures (kernel side)
	// StaleFrames counts calls whose return the kernel never saw (a frame dropped by
	// stack position: hook attached mid-call, longjmp or an exception through it).
	StaleFrames   uint64
	Recipes       uint64 // processes pushed into the kernel's thread-context table
	ProcessesGone uint64 // exec/exit records of those processes
	WithContext   uint64 // top-level calls that carried an in-kernel application context
}

// cookieEntryPoint marks uprobes attached at a learned entry point (not in BPF's
// layout: bits 13..15 are free there and only user space reads them).
const cookieEntryPoint = 1 << 13

// maxLearntHooks bounds the entry points learned per driver library file. Each is a
// uprobe pair on a file every process of the node may map, placed at an address a
// process handed us; the real driver needs a handful (5 of 96 hooked functions on the
// H200, doc.go), the API table has fewer than 256 rows.
const maxLearntHooks = 256

// maxSymbolTableBytes bounds a symbol table (and its strings) read from a library file:
// files found in tenants' maps are hostile, and a sparse file can claim any size.
const maxSymbolTableBytes = 64 << 20

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

// Source is the CUDA uprobe source.
type Source struct {
	cfg  Config
	log  *zap.Logger
	coll *ebpf.Collection
	rd   *ringbuf.Reader

	enter, ret *ebpf.Program
	// lifecycle: the exec/exit programs are attached, so recipes may be pushed.
	lifecycle bool
	obi       *ebpf.Map // OBI's pinned map, when used

	mu     sync.Mutex
	links  []link.Link
	libs   map[[2]uint64]*hookedLib
	report Report
	stats  Stats
	closed bool
	// onHook is called after every uprobe attach batch (tests wait on it).
	onHook func()
}

// Open loads the programs, hooks every CUDA library mapped by a running process (and
// ExtraLibraries), attaches the Xid tracepoint and returns the capability report.
// Libraries that appear later are hooked by Run's rescans. The error is non-nil only
// when the source cannot work at all (not privileged, programs refused).
func Open(cfg Config, log *zap.Logger) (*Source, Report, error) {
	if log == nil {
		log = zap.NewNop()
	}
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, Report{}, fmt.Errorf("cuda config: %w", err)
	}
	if err := rlimit.RemoveMemlock(); err != nil {
		log.Debug("removing the memlock limit", zap.Error(err))
	}
	spec, err := loadCudaBPF()
	if err != nil {
		return nil, Report{}, err
	}
	spec.Maps["cuda_events"].MaxEntries = uint32(cfg.RingBufferBytes)
	if err := spec.Variables["wakeup_bytes"].Set(uint64(cfg.RingBufferBytes / 4)); err != nil {
		return nil, Report{}, err
	}
	order, err := ctxtier.KernelOrder(cfg.ContextTiers)
	if err != nil {
		return nil, Report{}, fmt.Errorf("cuda config: %w", err)
	}
	if err := spec.Variables["ctx_order"].Set(order); err != nil {
		return nil, Report{}, err
	}
	s := &Source{cfg: cfg, log: log, libs: map[[2]uint64]*hookedLib{}}
	s.stats.ByAPI = map[string]uint64{}
	var replace map[string]*ebpf.Map
	if slices.Contains(cfg.ContextTiers, ctxtier.NameOBI) {
		if s.obi = s.openOBIMap(spec); s.obi != nil {
			ms := spec.Maps[obiMapName]
			ms.Type, ms.MaxEntries, ms.Flags = s.obi.Type(), s.obi.MaxEntries(), s.obi.Flags()
			replace = map[string]*ebpf.Map{obiMapName: s.obi}
		}
	} else {
		s.report.add(stageAppContext, "map/"+obiMapName, StatusUnavailable, "obi tier not configured")
	}

	// The uprobe pair is required; the Xid and lifecycle programs are optional and
	// loaded alone.
	core := spec.Copy()
	optional := map[string]*ebpf.ProgramSpec{}
	for name, ps := range core.Programs {
		if name != "cuda_enter" && name != "cuda_return" {
			optional[name] = ps
			delete(core.Programs, name)
		}
	}
	coll, err := ebpf.NewCollectionWithOptions(core, ebpf.CollectionOptions{MapReplacements: replace})
	if err != nil {
		if s.obi != nil {
			s.obi.Close()
		}
		var ve *ebpf.VerifierError
		if errors.As(err, &ve) {
			log.Debug("verifier rejected the CUDA programs", zap.String("log", fmt.Sprintf("%+v", ve)))
		}
		if errors.Is(err, unix.EPERM) {
			return nil, Report{}, fmt.Errorf("loading the CUDA uprobe programs: not privileged (needs root or CAP_BPF+CAP_PERFMON): %w", err)
		}
		return nil, Report{}, fmt.Errorf("loading the CUDA uprobe programs: %w", err)
	}
	s.coll = coll
	s.enter, s.ret = coll.Programs["cuda_enter"], coll.Programs["cuda_return"]
	rd, err := ringbuf.NewReader(coll.Maps["cuda_events"])
	if err != nil {
		coll.Close()
		return nil, Report{}, fmt.Errorf("ring buffer reader: %w", err)
	}
	s.rd = rd
	if !cfg.NoXid {
		s.attachXid(spec, coll, optional)
	}
	s.attachLifecycle(spec, coll, optional)
	s.rescan()
	for _, pattern := range cfg.ExtraLibraries {
		paths, _ := filepath.Glob(pattern)
		if len(paths) == 0 {
			s.report.add("uprobe", pattern, StatusUnavailable, "no such file")
		}
		for _, p := range paths {
			s.hookPath(p)
		}
	}
	if len(s.libs) == 0 {
		s.report.add("uprobe", "libcuda.so*/libcudart.so*", StatusUnavailable,
			"no process maps a CUDA library yet; rescanning every "+cfg.RescanInterval.String())
	}
	log.Info("ghostdriver CUDA source attached", zap.String("summary", s.report.Summary()))
	return s, s.report.clone(), nil
}

// attachXid tries raw_tp, then the classic tracepoint.
func (s *Source) attachXid(spec *ebpf.CollectionSpec, coll *ebpf.Collection, progs map[string]*ebpf.ProgramSpec) {
	const stage = "xid"
	for _, name := range []string{"rawtp_nvidia_dev_xid", "tp_nvidia_dev_xid"} {
		one := spec.Copy()
		one.Programs = map[string]*ebpf.ProgramSpec{name: progs[name]}
		c, err := ebpf.NewCollectionWithOptions(one, ebpf.CollectionOptions{MapReplacements: coll.Maps})
		hook := progs[name].SectionName
		if err != nil {
			s.report.add(stage, hook, StatusUnavailable, firstLine(err.Error()))
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
			s.report.add(stage, hook, StatusUnavailable, why)
			continue
		}
		// The program stays referenced by the link; closing our fd is fine.
		prog.Close()
		s.links = append(s.links, l)
		s.report.add(stage, hook, StatusAttached, "")
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
		s.report.add("uprobe", path, StatusUnavailable, err.Error())
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
// found: regular files only, never blocking (appctx.OpenRegular), and only the file
// whose dev/inode was found (else every uprobe would land at offsets computed for
// another file). The uprobes are attached through the returned descriptor
// (/proc/self/fd/N), so the path is not resolved again.
func openLibrary(lib Library, follow bool) (*os.File, error) {
	open := appctx.OpenRegular
	if follow {
		open = appctx.OpenRegularLink
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
		s.addReport("uprobe", lib.Mapped, StatusUnavailable, err.Error())
		return
	}
	defer f.Close()
	ex, err := link.OpenExecutable(fdPath(f))
	if err != nil {
		s.addReport("uprobe", lib.Mapped, StatusUnavailable, err.Error())
		return
	}
	syms, funcs, err := librarySymbols(f, lib.Layer == Driver)
	if err != nil {
		s.addReport("uprobe", lib.Mapped, StatusUnavailable, err.Error())
		return
	}
	s.mu.Lock()
	h.funcs = funcs
	s.mu.Unlock()
	attached := 0
	for id, a := range apis {
		off, ok := syms[a.Name]
		if !ok {
			continue
		}
		h.exports[a.Name] = off
		if _, dup := h.offsets[off]; dup {
			continue // an alias of a row already hooked
		}
		// At the offset read from this very file: the library never parses it again.
		if err := s.attachPair(ex, a.Name, off, cookie(id)); err != nil {
			s.addReport("uprobe", lib.Mapped+":"+a.Name, StatusUnavailable, firstLine(err.Error()))
			continue
		}
		h.offsets[off] = id
		attached++
	}
	if attached == 0 {
		s.addReport("uprobe", lib.Mapped, StatusUnavailable, "exports none of the hooked CUDA functions")
	} else {
		s.addReport("uprobe", fmt.Sprintf("%s (%s, %d functions)", lib.Mapped, lib.Layer, attached), StatusAttached, "")
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

// attachPair attaches the entry and return programs at a symbol or a file offset.
func (s *Source) attachPair(ex *link.Executable, sym string, addr uint64, c uint64) error {
	opts := &link.UprobeOptions{Address: addr, Cookie: c}
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
	s.mu.Lock()
	s.links = append(s.links, up, ret)
	s.mu.Unlock()
	return nil
}

// librarySymbols returns the file offsets of the library's defined dynamic functions
// (versioned duplicates, cuLaunchKernel@@libcuda.so.1, come back under their base name)
// and, with funcStarts, the set of file offsets where a function symbol of .dynsym or
// .symtab starts, in an executable segment. The file may be a tenant's: debug/elf is not
// hardened against hostile input (a panic becomes an error) and symbol tables are
// bounded.
func librarySymbols(r io.ReaderAt, funcStarts bool) (exports map[string]uint64, funcs map[uint64]bool, err error) {
	defer func() {
		if p := recover(); p != nil {
			exports, funcs, err = nil, nil, fmt.Errorf("malformed ELF: %v", p)
		}
	}()
	f, err := elf.NewFile(r)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	for _, sec := range f.Sections {
		if sec.Type != elf.SHT_SYMTAB && sec.Type != elf.SHT_DYNSYM {
			continue
		}
		size := sec.Size
		if int(sec.Link) < len(f.Sections) {
			size += f.Sections[sec.Link].Size
		}
		if size > maxSymbolTableBytes {
			return nil, nil, fmt.Errorf("symbol table %s of %d bytes exceeds %d", sec.Name, size, maxSymbolTableBytes)
		}
	}
	// fileOffset maps a function's address to its file offset, when it lies in the file
	// part of an executable segment.
	fileOffset := func(v uint64) (uint64, bool) {
		for _, p := range f.Progs {
			if p.Type == elf.PT_LOAD && p.Flags&elf.PF_X != 0 && p.Vaddr <= v && v < p.Vaddr+p.Filesz {
				return v - p.Vaddr + p.Off, true
			}
		}
		return 0, false
	}
	isFunc := func(s elf.Symbol) bool {
		return elf.ST_TYPE(s.Info) == elf.STT_FUNC && s.Value != 0 && s.Section != elf.SHN_UNDEF
	}
	dyn, err := f.DynamicSymbols()
	if err != nil {
		return nil, nil, err
	}
	exports = make(map[string]uint64, len(dyn))
	for _, s := range dyn {
		if !isFunc(s) {
			continue
		}
		off, ok := fileOffset(s.Value)
		if !ok {
			off = s.Value
		}
		if _, dup := exports[s.Name]; !dup {
			exports[s.Name] = off
		}
	}
	if !funcStarts {
		return exports, nil, nil
	}
	all := dyn
	if syms, err := f.Symbols(); err == nil { // a stripped library has no .symtab
		all = append(all, syms...)
	}
	funcs = map[uint64]bool{}
	for _, s := range all {
		if off, ok := fileOffset(s.Value); ok && isFunc(s) {
			funcs[off] = true
		}
	}
	// A stripped library (NVIDIA's libcuda is) names only its exports; its unwind table
	// still lists where every function with unwind information starts.
	for _, v := range ehFrameStarts(f) {
		if off, ok := fileOffset(v); ok {
			funcs[off] = true
		}
	}
	return exports, funcs, nil
}

// ehFrameStarts returns the initial locations (virtual addresses) of the FDEs listed in
// the .eh_frame_hdr binary-search table: the start of every function that has unwind
// information, what a stripped library still tells. Only the table encoding linkers
// write (DW_EH_PE_datarel|DW_EH_PE_sdata4) is read; anything else yields nothing. The
// count is bounded by the section's size.
func ehFrameStarts(f *elf.File) []uint64 {
	sec := f.Section(".eh_frame_hdr")
	if sec == nil || sec.Type == elf.SHT_NOBITS || sec.Size < 12 || sec.Size > maxSymbolTableBytes {
		return nil
	}
	b, err := sec.Data()
	if err != nil || len(b) < 12 || b[0] != 1 {
		return nil
	}
	const (
		peUdata4  = 0x03
		peSdata4  = 0x0b
		pePcrel   = 0x10
		peDatarel = 0x30
	)
	ptrEnc, countEnc, tableEnc := b[1], b[2], b[3]
	// eh_frame_ptr: 4 bytes in the encodings linkers use (pcrel|sdata4, udata4, sdata4).
	if ptrEnc&0x0f != peSdata4 && ptrEnc&0x0f != peUdata4 {
		return nil
	}
	if countEnc != peUdata4 || tableEnc != peDatarel|peSdata4 {
		return nil
	}
	n := uint64(binary.LittleEndian.Uint32(b[8:12]))
	if n > (uint64(len(b))-12)/8 {
		return nil
	}
	out := make([]uint64, 0, n)
	for i := uint64(0); i < n; i++ {
		rel := int32(binary.LittleEndian.Uint32(b[12+8*i:]))
		out = append(out, uint64(int64(sec.Addr)+int64(rel)))
	}
	return out
}

// learnEntryPoint handles a cuGetProcAddress return: when the symbol is a hooked API and
// the returned address is the start of a function of a hooked driver library (libcuda)
// that is not already hooked there, attach there. The process chose the address: one
// anywhere else (its own files, anonymous memory, the middle of an instruction of a
// library every tenant maps) is refused and counted, as is any beyond the library's
// maxLearntHooks.
func (s *Source) learnEntryPoint(pid uint32, symbol string, addr uint64) {
	id, ok := procAddressTarget(symbol)
	if !ok || addr == 0 || s.cfg.IgnoreEntryPoints {
		return
	}
	refuse := func(why string, fields ...zap.Field) {
		s.mu.Lock()
		s.stats.EntryPointsRefused++
		s.mu.Unlock()
		s.log.Debug("entry point refused", append(fields, zap.String("symbol", symbol),
			zap.Uint32("pid", pid), zap.String("address", fmt.Sprintf("%#x", addr)), zap.String("why", why))...)
	}
	mapped, off, err := fileOffset(s.cfg.ProcRoot, int(pid), addr, defaultMapsBounds)
	switch {
	case errors.Is(err, errMapsTruncated):
		s.mu.Lock()
		s.stats.MapsTruncated++
		s.mu.Unlock()
		refuse("maps cut at its read bounds before the address", zap.Error(err))
		return
	case errors.Is(err, errNotMapped):
		refuse("not in a file mapping")
		return
	case err != nil:
		s.log.Debug("entry point of a process gone", zap.String("symbol", symbol), zap.Error(err))
		return
	}
	f, err := appctx.OpenRegular(filepath.Join(s.cfg.ProcRoot, strconv.Itoa(int(pid)), "root", mapped))
	if err != nil {
		refuse("mapped file not openable as a regular file", zap.Error(err))
		return
	}
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		refuse("fstat", zap.Error(err))
		return
	}
	s.mu.Lock()
	h, ok := s.libs[[2]uint64{st.Dev, st.Ino}]
	if ok && h.funcs != nil {
		if _, done := h.offsets[off]; done {
			if h.exports[apis[id].Name] == off || h.offsets[off] == id {
				s.stats.EntryPointAtExport++
			}
			s.mu.Unlock()
			return
		}
	}
	var why string
	switch {
	case !ok || h.Layer != Driver || h.funcs == nil:
		why = "not in a hooked driver library"
	case !h.funcs[off]:
		why = "not the start of a function symbol"
	case h.learnt >= maxLearntHooks:
		why = fmt.Sprintf("the library has %d learnt entry points already", maxLearntHooks)
		if !h.capReported {
			h.capReported = true
			s.report.add("entry_point", h.Mapped, StatusUnavailable,
				fmt.Sprintf("more than %d learnt entry points: the rest are refused", maxLearntHooks))
		}
	}
	if why != "" {
		s.mu.Unlock()
		refuse(why, zap.String("file", mapped), zap.String("offset", fmt.Sprintf("%#x", off)))
		return
	}
	h.offsets[off] = id
	h.learnt++
	s.mu.Unlock()

	ex, err := link.OpenExecutable(fdPath(f))
	if err == nil {
		err = s.attachPair(ex, "", off, cookie(id)|cookieEntryPoint)
	}
	hook := fmt.Sprintf("%s+%#x (cuGetProcAddress %q)", mapped, off, symbol)
	if err != nil {
		s.addReport("entry_point", hook, StatusUnavailable, firstLine(err.Error()))
		return
	}
	s.mu.Lock()
	s.stats.EntryPointHooks++
	s.mu.Unlock()
	s.addReport("entry_point", hook, StatusAttached, "")
	s.log.Debug("hooked a driver entry point", zap.String("hook", hook))
	s.hooked()
}

func (s *Source) addReport(stage, hook, status, reason string) {
	s.mu.Lock()
	s.report.add(stage, hook, status, reason)
	s.mu.Unlock()
}

// Report returns the capability report as it stands (entries grow as libraries and
// entry points are hooked).
func (s *Source) Report() Report {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.report.clone()
}

const recordSize = int(unsafe.Sizeof(cudaBPFCudaRecord{}))

// Run reads the ring buffer until ctx is cancelled or Close is called, rescanning for
// libraries every RescanInterval, and returns nil then. A cancellation ends the wait for
// the poll deadline at once, and Run reads the ring to its end before it returns: every
// record committed before the cancellation reaches the sink (a process that has exited
// has committed all of its records: the uprobes and the exit tracepoint run in it).
func (s *Source) Run(ctx context.Context, sink Sink) error {
	var (
		rec        ringbuf.Record
		batch      = make([]Call, 0, 1024)
		lastRescan = time.Now()
	)
	flush := func() {
		if len(batch) > 0 {
			sink.Calls(batch)
			batch = batch[:0]
		}
	}
	// The cancellation wakes a reader waiting for its deadline (ringbuf's Flush: the
	// records pending then are returned, then ErrFlushed).
	stopWake := context.AfterFunc(ctx, func() { _ = s.rd.Flush() })
	defer stopWake()
	for {
		if ctx.Err() != nil {
			return s.drain(&rec, &batch, sink, flush)
		}
		if s.cfg.RescanInterval > 0 && time.Since(lastRescan) >= s.cfg.RescanInterval {
			s.rescan()
			lastRescan = time.Now()
		}
		mark := monoNow()
		pollEnd := time.Now().Add(s.cfg.PollInterval)
		s.rd.SetDeadline(pollEnd)
		for n := 0; ; n++ {
			// A sustained stream never hits the deadline: end the poll on time anyway
			// so the watermark (and the closing of unsynchronized work) advances.
			if n&63 == 63 && time.Now().After(pollEnd) {
				break
			}
			err := s.rd.ReadInto(&rec)
			if err != nil {
				if errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, ringbuf.ErrFlushed) {
					break
				}
				flush()
				if errors.Is(err, ringbuf.ErrClosed) || errors.Is(err, os.ErrClosed) {
					return nil
				}
				return fmt.Errorf("reading the CUDA ring buffer: %w", err)
			}
			s.decode(rec.RawSample, &batch, sink)
			if len(batch) == cap(batch) {
				flush()
			}
		}
		flush()
		sink.Watermark(mark)
	}
}

// drain reads what the ring holds now, without waiting, and hands it to the sink: at
// most a ring's worth of records, so a producer that never pauses cannot hold Run.
func (s *Source) drain(rec *ringbuf.Record, batch *[]Call, sink Sink, flush func()) error {
	defer flush()
	s.rd.SetDeadline(time.Now())
	for n := s.cfg.RingBufferBytes / recordSize; n >= 0; n-- {
		err := s.rd.ReadInto(rec)
		switch {
		case err == nil:
			s.decode(rec.RawSample, batch, sink)
			if len(*batch) == cap(*batch) {
				flush()
			}
		case errors.Is(err, os.ErrDeadlineExceeded), errors.Is(err, ringbuf.ErrFlushed):
			// ErrFlushed first when the cancellation's wake-up was not consumed yet:
			// read on, up to the deadline's end of the ring.
			if errors.Is(err, os.ErrDeadlineExceeded) {
				return nil
			}
		case errors.Is(err, ringbuf.ErrClosed), errors.Is(err, os.ErrClosed):
			return nil
		default:
			return fmt.Errorf("reading the CUDA ring buffer: %w", err)
		}
	}
	return nil
}

func (s *Source) decode(b []byte, batch *[]Call, sink Sink) {
	if len(b) < recordSize {
		s.mu.Lock()
		s.stats.Malformed++
		s.mu.Unlock()
		return
	}
	var r cudaBPFCudaRecord
	copy(unsafe.Slice((*byte)(unsafe.Pointer(&r)), recordSize), b)
	pid, tid := uint32(r.PidTgid>>32), uint32(r.PidTgid)
	kind := cudaBPFCudaRec(r.Kind)
	if kind != cudaBPFCudaRecCUDA_REC_CALL && len(*batch) > 0 {
		// Keep the sink's view in ring order: calls before this record go first (an
		// exit closes the process's open work, which its last calls belong to).
		sink.Calls(*batch)
		*batch = (*batch)[:0]
	}
	switch kind {
	case cudaBPFCudaRecCUDA_REC_XID:
		s.mu.Lock()
		s.stats.Xids++
		s.mu.Unlock()
		sink.Xid(Xid{Time: int64(r.Start), Device: kstr.FromC(r.Dev[:]), Code: uint32(r.Ret), Msg: kstr.FromC(r.Text[:]),
			PID: pid, TID: tid, Comm: kstr.FromC(r.Comm[:])})
	case cudaBPFCudaRecCUDA_REC_EXEC, cudaBPFCudaRecCUDA_REC_EXIT:
		s.mu.Lock()
		s.stats.ProcessesGone++
		s.mu.Unlock()
		sink.ProcessGone(pid, kind == cudaBPFCudaRecCUDA_REC_EXEC)
	case cudaBPFCudaRecCUDA_REC_PROCADDR:
		s.mu.Lock()
		s.stats.ProcAddress++
		s.mu.Unlock()
		if r.Ret == 0 {
			s.learnEntryPoint(pid, kstr.FromC(r.Text[:]), r.Handle)
		}
	case cudaBPFCudaRecCUDA_REC_CALL:
		id, ok := apiOfCookie(r.Cookie)
		if !ok {
			s.mu.Lock()
			s.stats.Malformed++
			s.mu.Unlock()
			return
		}
		a := apis[id]
		bytes := r.Bytes
		if a.ByteScale > 1 {
			bytes *= uint64(a.ByteScale)
		}
		*batch = append(*batch, Call{
			API: id, Start: int64(r.Start), End: int64(r.End), PID: pid, TID: tid, CPU: r.Cpu,
			Comm: kstr.FromC(r.Comm[:]), Stream: r.Stream, Bytes: bytes, Handle: r.Handle, Ret: int32(r.Ret),
			Depth: r.Depth, EntryPoint: r.Cookie&cookieEntryPoint != 0,
			Untimed:  r.Flags&uint8(cudaBPFCudaFlagCUDA_F_STACK_OVERFLOW) != 0,
			ArgFault: r.Flags&uint8(cudaBPFCudaFlagCUDA_F_ARG_FAULT) != 0,
			CtxTier:  r.CtxTier, TraceID: r.TraceId, SpanID: r.SpanId,
		})
		s.mu.Lock()
		if r.CtxTier != 0 {
			s.stats.WithContext++
		}
		s.stats.Calls++
		s.stats.ByAPI[a.Name]++
		s.mu.Unlock()
	default:
		s.mu.Lock()
		s.stats.Malformed++
		s.mu.Unlock()
	}
}

// Stats returns what the source counted so far.
func (s *Source) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stats
	st.ByAPI = make(map[string]uint64, len(s.stats.ByAPI))
	for k, v := range s.stats.ByAPI {
		st.ByAPI[k] = v
	}
	if !s.closed {
		st.Lost, st.StaleFrames = s.kernelCounts()
	}
	return st
}

// Losses returns the calls lost so far: ring-buffer reserve failures and missed returns
// (Stats' Lost and StaleFrames, without copying the rest).
func (s *Source) Losses() (ringBuffer, missedReturn uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return s.stats.Lost, s.stats.StaleFrames
	}
	return s.kernelCounts()
}

// kernelCounts sums the kernel's per-CPU loss counters (under s.mu, before Close).
func (s *Source) kernelCounts() (lost, stale uint64) {
	var perCPU []uint64
	if err := s.coll.Maps["cuda_lost"].Lookup(uint32(0), &perCPU); err == nil {
		for _, v := range perCPU {
			lost += v
		}
	}
	if err := s.coll.Maps["cuda_lost"].Lookup(uint32(1), &perCPU); err == nil {
		for _, v := range perCPU {
			stale += v
		}
	}
	return lost, stale
}

// Close detaches every hook and releases the ring buffer; a concurrent Run returns nil.
func (s *Source) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	// The last values stay readable after the maps are gone (cumulative metrics must
	// not fall back to zero at the final collection).
	s.stats.Lost, s.stats.StaleFrames = s.kernelCounts()
	links := s.links
	s.links = nil
	s.mu.Unlock()
	var errs []error
	for i := len(links) - 1; i >= 0; i-- {
		errs = append(errs, links[i].Close())
	}
	errs = append(errs, s.rd.Close())
	s.coll.Close()
	if s.obi != nil {
		s.obi.Close()
	}
	return errors.Join(errs...)
}

func monoNow() int64 {
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return ts.Nano()
}

func firstLine(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			return s[:i]
		}
	}
	return s
}
