//go:build linux

// Loading and attaching the live source's programs, each on its own and rung by rung, and
// the capability report line of every hook tried.

package probe

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"
	"github.com/cilium/ebpf/link"
	"go.uber.org/zap"
	"golang.org/x/sys/unix"

	"github.com/ghostdriver/ghostdriver/internal/capability"
	"github.com/ghostdriver/ghostdriver/internal/ctxtier"
	"github.com/ghostdriver/ghostdriver/internal/procfs"
)

// The loader loads every program on its own, so that one missing hook never costs the
// others (bpf2go's loadXxxObjects is all-or-nothing): each family's maps are created
// once, and each program is loaded from a copy of its family's CollectionSpec holding
// only that program, with all maps passed in as MapReplacements. common.c's ring
// buffer and lost counter are shared by every family the same way.

type family struct {
	name string
	spec *ebpf.CollectionSpec
	// maps are the instances every program of the family uses.
	maps map[string]*ebpf.Map
	// perCopyData: .rodata is not shared, so each loaded copy has its own constants
	// (funcs: func_id per target function).
	perCopyData bool
	coll        *ebpf.Collection
	// hashInflight: the syscalls family keeps ioctls in flight in the tid table (pre-5.11
	// path), whose evictions are counted (kcounters.go).
	hashInflight bool
}

// objects is everything the loader created; close releases it in reverse order.
type objects struct {
	common   *ebpf.Collection
	families map[string]*family
	progs    []*ebpf.Program
	links    []link.Link
	irqNames map[int32]string
	// classic are the events of attached raw-copy programs, with their formats.
	classic classicEvents
	// obi is OBI's pinned traces_ctx_v1 when it was found (closed with the objects; the
	// pin itself stays: it is OBI's).
	obi *ebpf.Map
	// kcounters is the shared per-cause drop counter map (kcounters.go).
	kcounters *ebpf.Map
	// tracefs: this loader holds the tracefs it mounted (tracefs.go); released at close.
	tracefs bool
}

func (o *objects) close() error {
	var errs []error
	for i := len(o.links) - 1; i >= 0; i-- {
		errs = append(errs, o.links[i].Close())
	}
	o.links = nil
	for _, p := range o.progs {
		errs = append(errs, p.Close())
	}
	o.progs = nil
	for _, f := range o.families {
		if f.coll != nil {
			f.coll.Close()
		}
	}
	o.families = nil
	if o.obi != nil {
		o.obi.Close()
		o.obi = nil
	}
	if o.kcounters != nil {
		o.kcounters.Close()
		o.kcounters = nil
	}
	if o.common != nil {
		o.common.Close()
		o.common = nil
	}
	if o.tracefs {
		o.tracefs = false
		errs = append(errs, releaseTracefs())
	}
	return errors.Join(errs...)
}

func (o *objects) eventsMap() *ebpf.Map { return o.common.Maps[commonMapEvents] }
func (o *objects) lostMap() *ebpf.Map   { return o.common.Maps[commonMapLost] }

// procsMap is the tgid → thread-context recipe table of the syscalls family (nil when
// that family could not be created).
func (o *objects) procsMap() *ebpf.Map {
	if f, ok := o.families[famSyscalls]; ok {
		return f.maps[syscallsMapProcs]
	}
	return nil
}

type loader struct {
	cfg   Config
	log   *zap.Logger
	cache *btf.Cache
	objs  *objects
	rep   capability.Report
	// opts are passed to every program load; tests point KernelTypes elsewhere.
	progOpts ebpf.ProgramOptions
}

func newLoader(cfg Config, log *zap.Logger) *loader {
	return &loader{cfg: cfg, log: log, cache: btf.NewCache(), objs: &objects{families: map[string]*family{}}, rep: newReport()}
}

// setCommon sets the variables every object has (from ghostdriver.h) and sizes the ring.
func (ld *loader) setCommon(spec *ebpf.CollectionSpec) error {
	if m, ok := spec.Maps[commonMapEvents]; ok {
		m.MaxEntries = uint32(ld.cfg.RingBufferBytes)
	}
	if v, ok := spec.Variables[commonVarWakeupBytes]; ok {
		// Force a wakeup once a quarter of the ring is pending.
		if err := v.Set(uint64(ld.cfg.RingBufferBytes / 4)); err != nil {
			return err
		}
	}
	// The ioctl slots every family shares (bpf/include/ioctl_slot.h).
	if ts, ok := spec.Maps[commonMapInflightTs]; ok && ld.hashInflight() {
		// No task storage: a one-entry hash of the same key and value that no reachable
		// instruction touches (a task-storage map cannot be created on such kernels).
		ts.Type, ts.Flags, ts.MaxEntries = ebpf.Hash, 0, 1
	}
	return nil
}

// hashInflight: the ioctl hooks keep a followed ioctl in the pre-5.11 `inflight` hash
// instead of the thread's task storage.
func (ld *loader) hashInflight() bool {
	return ld.cfg.noTaskStorage || HaveTaskStorage() != nil
}

// defersIoctls: a known process's ioctl entries wait in their slot until something of
// the thread is recorded inside the ioctl, and ioctls with nothing inside are counted, not
// sent (bpf/include/ioctl_slot.h). It needs the task-storage slots.
func (ld *loader) defersIoctls() bool {
	return !ld.cfg.SendJoblessIoctls && !ld.hashInflight()
}

func boolU32(b bool) uint32 {
	if b {
		return 1
	}
	return 0
}

func (ld *loader) loadCommon() error {
	spec, err := loadCommon()
	if err != nil {
		return err
	}
	if err := ld.setCommon(spec); err != nil {
		return err
	}
	coll, err := ebpf.NewCollectionWithOptions(spec, ebpf.CollectionOptions{Cache: ld.cache})
	if err != nil {
		return fmt.Errorf("creating the ring buffer: %w", err)
	}
	ld.objs.common = coll
	return nil
}

func (ld *loader) family(name string) (*family, error) {
	if f, ok := ld.objs.families[name]; ok {
		return f, nil
	}
	spec, err := ld.familySpec(name)
	if err != nil {
		return nil, err
	}
	f := &family{name: name, spec: spec, perCopyData: name == famFuncs}
	if name == famSyscalls {
		f.hashInflight = ld.hashInflight()
	}
	shared := map[string]*ebpf.Map{commonMapEvents: ld.objs.eventsMap(), commonMapLost: ld.objs.lostMap()}
	for _, m := range []string{commonMapInflightTs, commonMapIoctlDeferred} {
		if _, ok := spec.Maps[m]; ok {
			shared[m] = ld.objs.common.Maps[m]
		}
	}
	if kc, err := ld.kcountersMap(spec); err != nil {
		return nil, fmt.Errorf("creating the drop counters: %w", err)
	} else if kc != nil {
		shared[syscallsMapKcounters] = kc
	}
	if name == famSyscalls && ld.objs.obi != nil {
		// Take OBI's size and flags, so the replacement passes the compatibility check.
		ms := spec.Maps[obiMapName]
		ms.Type, ms.MaxEntries, ms.Flags = ld.objs.obi.Type(), ld.objs.obi.MaxEntries(), ld.objs.obi.Flags()
		shared[obiMapName] = ld.objs.obi
	}
	if f.perCopyData {
		f.maps = shared
	} else {
		mapsOnly := spec.Copy()
		mapsOnly.Programs = map[string]*ebpf.ProgramSpec{}
		coll, err := ebpf.NewCollectionWithOptions(mapsOnly, ebpf.CollectionOptions{MapReplacements: shared, Cache: ld.cache})
		if err != nil {
			return nil, fmt.Errorf("creating maps of %s: %w", name, err)
		}
		f.coll = coll
		f.maps = coll.Maps
	}
	ld.objs.families[name] = f
	return f, nil
}

// familySpec is a family's CollectionSpec configured for this loader: the ring's size,
// the link-time constants and the load-time variables written, the maps sized. It asks
// the kernel nothing beyond the feature probes, so the unit tests run it without root.
func (ld *loader) familySpec(name string) (*ebpf.CollectionSpec, error) {
	spec, err := familySpecs[name]()
	if err != nil {
		return nil, err
	}
	if err := ld.setCommon(spec); err != nil {
		return nil, err
	}
	if name == famJobs {
		jobsMapSizes(spec, ld.cfg)
	}
	consts, required, err := ld.linkConsts(name)
	if err != nil {
		return nil, err
	}
	if name == famSyscalls {
		if tsErr := HaveTaskStorage(); tsErr != nil {
			ld.log.Info("submit ioctls wait for their exit in a tid hash (max 16384 threads in an ioctl at once); every followed ioctl's records are sent", zap.Error(tsErr))
		}
		hashPath := ld.hashInflight()
		if err := useTaskStorage(spec, hashPath); err != nil {
			return nil, err
		}
		if hashPath {
			spec.Maps[syscallsMapInflight].MaxEntries = uint32(ld.cfg.InflightThreads)
		}
	}
	used, err := setLinkConsts(spec, consts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	for _, k := range required {
		if !used[k] {
			return nil, fmt.Errorf("%s: no program reads link constant %s", name, k)
		}
	}
	if name == famFence && ld.cfg.FenceFilter {
		if err := spec.Variables[fenceVarFenceFilter].Set(uint32(1)); err != nil {
			return nil, err
		}
	}
	return spec, nil
}

// linkConsts are the link-time constants (bpf/include/link_const.h) the loader writes
// into a family's programs, and those of them some program of the family must read.
func (ld *loader) linkConsts(name string) (consts map[string]uint64, required []string, err error) {
	// Every family's record reservations read gd_ioctl_defer; the syscalls family's ioctl
	// hooks read the rest.
	consts = map[string]uint64{"gd_ioctl_defer": uint64(boolU32(ld.defersIoctls()))}
	if name == famSyscalls {
		gate, types := ioctlGateFor(ld.cfg.DRMMajors, ld.cfg.IoctlTypes)
		syscalls := map[string]uint64{
			"gd_cmd_gate": uint64(gate), "gd_cmd_types0": types[0], "gd_cmd_types1": types[1],
			"gd_cmd_types2": types[2], "gd_cmd_types3": types[3],
			"gd_hash_inflight": uint64(boolU32(ld.hashInflight())),
			"gd_n_majors":      uint64(len(ld.cfg.DRMMajors)),
		}
		for i := range MaxDRMMajors {
			var m uint32
			if i < len(ld.cfg.DRMMajors) {
				m = ld.cfg.DRMMajors[i]
			}
			syscalls[fmt.Sprintf("gd_major%d", i)] = uint64(m)
		}
		order, err := ld.cfg.ctxOrder()
		if err != nil {
			return nil, nil, err
		}
		if ld.objs.obi == nil {
			// Nothing pinned: the placeholder stays empty for the collector's life (a map
			// pinned later is not picked up), so every lookup would miss. Skip the tier.
			order = withoutTier(order, ctxtier.OBI)
		}
		// The tiers' order is link-time constants here; the object's .rodata ctx_order (the
		// C default, appctx.h) is read by no syscalls program, only by the CUDA object's.
		syscalls["gd_ctx_order0"], syscalls["gd_ctx_order1"] = uint64(order[0]), uint64(order[1])
		for k, v := range syscalls {
			consts[k] = v
			required = append(required, k)
		}
	}
	return consts, required, nil
}

// withoutTier removes tier from an in-kernel lookup order, keeping the others in order
// (the program stops at the first CTX_TIER_NONE).
func withoutTier(order [maxCtxTiers]uint8, tier uint8) [maxCtxTiers]uint8 {
	var out [maxCtxTiers]uint8
	n := 0
	for _, t := range order {
		if t != tier && t != ctxtier.None {
			out[n] = t
			n++
		}
	}
	return out
}

// useTaskStorage sizes the maps of where syscalls.c keeps a followed ioctl's arguments
// until its exit: the thread's task-local storage (5.11+), or the `inflight` hash keyed by
// tid where the kernel has no task storage (without, true; the programs learn which from
// the link constant gd_hash_inflight). The map the programs do not use is created with one
// entry (the hash preallocates 16384; a task-storage map cannot be created at all on such
// kernels, so it becomes a one-entry hash that no reachable instruction touches).
func useTaskStorage(spec *ebpf.CollectionSpec, without bool) error {
	ts, hash := spec.Maps[syscallsMapInflightTs], spec.Maps[syscallsMapInflight]
	if ts == nil || hash == nil {
		return errors.New("syscalls object without its inflight maps")
	}
	if !without {
		hash.MaxEntries = 1
	}
	// inflight_ts, shared by every family, was made a one-entry hash by setCommon when without.
	return nil
}

// drmMajor and drmIoctlBase: the DRM character device major and the _IOC_TYPE of every
// DRM ioctl (DRM_IOCTL_BASE, 'd').
const (
	drmMajor     = 226
	drmIoctlBase = 'd'
)

// ioctlGate is syscalls.c's gd_cmd_gate and gd_cmd_types0..3: when the types of every followed
// major are known (DRM's built in, others from Config.IoctlTypes), an ioctl of any other
// type is dropped before its fd is looked at (and its exit without a map lookup). With
// a major of unknown types the filter keeps every type (gate 0).
func ioctlGate(majors []uint32, known map[uint32][]uint8) (uint32, [4]uint64) {
	var set [4]uint64
	if len(majors) == 0 {
		return 0, set
	}
	for _, m := range majors {
		types, ok := known[m]
		if m == drmMajor && !ok {
			types, ok = []uint8{drmIoctlBase}, true
		}
		if !ok || len(types) == 0 {
			return 0, [4]uint64{}
		}
		for _, t := range types {
			set[t>>6] |= 1 << (t & 63)
		}
	}
	return 1, set
}

// ioctlGateFor is ioctlGate; tests replace it to run the gated path on a device this
// host has (/dev/null, TCGETS = type 'T').
var ioctlGateFor = ioctlGate

// obiMapName is OBI's map, and the name of our placeholder of the same shape.
const obiMapName = syscallsMapTracesCtxV1

// openOBIMap loads OBI's pinned traces_ctx_v1 when it is pinned at cfg.OBIMapPath and has
// the shape the program expects; the report says which map the OBI tier reads.
func (ld *loader) openOBIMap() {
	const stage, hook = StageAppContext, "map/" + obiMapName
	if !slicesContains(ld.cfg.ContextTiers, ctxtier.NameOBI) {
		ld.rep.Add(stage, hook, capability.StatusUnavailable, "obi tier not configured")
		return
	}
	m, err := ebpf.LoadPinnedMap(ld.cfg.OBIMapPath, nil)
	if err != nil {
		why := "nothing pinned at " + ld.cfg.OBIMapPath + " (OBI not running, or not populating trace context): empty placeholder"
		if !errors.Is(err, os.ErrNotExist) {
			why = "loading " + ld.cfg.OBIMapPath + ": " + firstLine(err.Error()) + ": empty placeholder"
		}
		ld.rep.Add(stage, hook, capability.StatusUnavailable, why)
		return
	}
	spec, err := loadSyscalls()
	if err == nil {
		want := spec.Maps[obiMapName]
		if (m.Type() != ebpf.LRUHash && m.Type() != ebpf.Hash) || m.KeySize() != want.KeySize || m.ValueSize() != want.ValueSize {
			err = fmt.Errorf("%s is %v key %d value %d, want %v key %d value %d", ld.cfg.OBIMapPath,
				m.Type(), m.KeySize(), m.ValueSize(), want.Type, want.KeySize, want.ValueSize)
		}
	}
	if err != nil {
		m.Close()
		ld.rep.Add(stage, hook, capability.StatusUnavailable, firstLine(err.Error())+": empty placeholder")
		return
	}
	ld.objs.obi = m
	ld.rep.Add(stage, hook, capability.StatusAttached, "pinned at "+ld.cfg.OBIMapPath)
}

func slicesContains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// setFuncID writes the index of the function a copy of a funcs program attaches to
// (its func_id; objects without one are left alone).
func setFuncID(spec *ebpf.CollectionSpec, id uint16) error {
	if v, ok := spec.Variables[funcsVarFuncId]; ok {
		return v.Set(id)
	}
	return nil
}

// loadProgram loads one program of a family, alone.
func (ld *loader) loadProgram(f *family, name string, r rung) (*ebpf.Program, error) {
	spec := f.spec.Copy()
	ps, ok := spec.Programs[name]
	if !ok {
		return nil, fmt.Errorf("no program %s in %s.o", name, f.name)
	}
	spec.Programs = map[string]*ebpf.ProgramSpec{name: ps}
	if r.attachTo != "" {
		ps.AttachTo = r.attachTo
		if err := setFuncID(spec, r.funcID); err != nil {
			return nil, err
		}
	}
	coll, err := ebpf.NewCollectionWithOptions(spec, ebpf.CollectionOptions{
		MapReplacements: f.maps,
		Programs:        ld.progOpts,
		Cache:           ld.cache,
	})
	if err != nil {
		var ve *ebpf.VerifierError
		if errors.As(err, &ve) {
			ld.log.Debug("verifier rejected program", zap.String("program", name),
				zap.String("target", ps.AttachTo), zap.String("log", fmt.Sprintf("%+v", ve)))
		}
		return nil, err
	}
	prog := coll.DetachProgram(name)
	coll.Close()
	return prog, nil
}

func attach(ps *ebpf.ProgramSpec, prog *ebpf.Program) (link.Link, error) {
	switch ps.Type {
	case ebpf.Tracing:
		return link.AttachTracing(link.TracingOptions{Program: prog})
	case ebpf.RawTracepoint:
		return link.AttachRawTracepoint(link.RawTracepointOptions{Name: ps.AttachTo, Program: prog})
	case ebpf.TracePoint:
		group, name, ok := strings.Cut(ps.AttachTo, "/")
		if !ok {
			return nil, fmt.Errorf("tracepoint %q is not group/name", ps.AttachTo)
		}
		return link.Tracepoint(group, name, prog, nil)
	}
	return nil, fmt.Errorf("program type %s is not attachable here", ps.Type)
}

// hookName is how a program's hook reads in the report: "tp_btf/dma_fence_init".
func hookName(ps *ebpf.ProgramSpec, attachTo string) string {
	prefix, _, _ := strings.Cut(ps.SectionName, "/")
	if attachTo == "" {
		attachTo = ps.AttachTo
	}
	return prefix + "/" + attachTo
}

func isFentry(ps *ebpf.ProgramSpec) bool {
	return ps.Type == ebpf.Tracing && (ps.AttachType == ebpf.AttachTraceFEntry || ps.AttachType == ebpf.AttachTraceFExit)
}

func isTpBTF(ps *ebpf.ProgramSpec) bool {
	return ps.Type == ebpf.Tracing && ps.AttachType == ebpf.AttachTraceRawTp
}

// fentryAttachRefused is the reason of an fentry/fexit program that loaded (its target is
// in the kernel's or a module's BTF) but whose attach the kernel refused with ENOTSUPP. In
// kernel/bpf/trampoline.c (6.1) register_fentry() returns -ENOTSUPP for every function ftrace
// manages when the trampoline has no ftrace_ops, which it gets only with
// CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS; the arch trampoline also refuses signatures it
// cannot save (arch_prepare_bpf_trampoline).
const fentryAttachRefused = "attach refused by the kernel (ENOTSUPP): no BPF trampoline for this function on this kernel (without ftrace direct calls, CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS, every traced function is refused)"

// reason turns a load/attach error into the one line the user sees.
func reason(ps *ebpf.ProgramSpec, err error) string {
	var ve *ebpf.VerifierError
	switch {
	case errors.As(err, &ve):
		return "rejected by the verifier (log at debug level): " + firstLine(ve.Error())
	case ps.Type == ebpf.Tracing && errors.Is(err, ebpf.ErrNotSupported):
		if isTpBTF(ps) {
			return "tracepoint not present in kernel or module BTF (driver not loaded or not built)"
		}
		return "function not found in kernel or module BTF (driver not loaded, or inlined)"
	case errors.Is(err, os.ErrNotExist):
		return "tracepoint not present in this kernel"
	case errors.Is(err, unix.EPERM):
		return "refused by the kernel (EPERM)"
	case errors.Is(err, ebpf.ErrNotSupported):
		return "not supported by this kernel: " + firstLine(err.Error())
	}
	return firstLine(err.Error())
}

// precondition returns why a rung cannot work here without trying it ("" = try).
func (ld *loader) precondition(def hookDef, ps *ebpf.ProgramSpec, targetMissing bool) string {
	switch {
	case isFentry(ps):
		if err := HaveFentry(); err != nil {
			return err.Error()
		}
		if def.stage == StageIoctl {
			for _, m := range ld.cfg.DRMMajors {
				if m != 226 {
					return "device majors other than DRM's (226) configured: fentry drm_ioctl cannot see them"
				}
			}
		}
	case isTpBTF(ps):
		if err := HaveKernelBTF(); err != nil {
			return err.Error()
		}
	case ps.Type == ebpf.RawTracepoint:
		if targetMissing {
			return "tracepoint not present (no btf_trace_" + ps.AttachTo + " in kernel or module BTF)"
		}
		if err := HaveKernelBTF(); err != nil {
			return "CO-RE needs kernel BTF: " + err.Error()
		}
	case ps.Type == ebpf.TracePoint:
		if err := HaveTracefs(); err != nil {
			return err.Error()
		}
	}
	return ""
}

// attachAll walks the hook table, climbing each ladder until a rung attaches.
func (ld *loader) attachAll() {
	for _, def := range liveHookDefs(ld.cfg) {
		if def.stage == StageIRQ && len(ld.objs.irqNames) == 0 {
			// Every device interrupt would run the program only to be filtered out.
			why := "not asked for: no GPU interrupt names configured (live.irq_names); no stage uses interrupts"
			if len(ld.cfg.IRQNames) > 0 {
				why = fmt.Sprintf("no interrupt in /proc/interrupts belongs to a GPU driver (%s)", strings.Join(ld.cfg.IRQNames, ", "))
			}
			ld.rep.Add(def.stage, "irq/"+def.event, capability.StatusUnavailable, why)
			continue
		}
		targetMissing := false
		forced := ld.cfg.ClassicTracepoints && def.hasClassic()
		for _, r := range def.rungs {
			if forced && !r.classic {
				ld.skipRung(def, r, "skipped: classic tracepoints forced by configuration (classic_tracepoints)")
				continue
			}
			if ld.tryRung(def, r, &targetMissing) {
				break
			}
		}
	}
}

// skipRung reports the programs of a rung that is deliberately not tried.
func (ld *loader) skipRung(def hookDef, r rung, why string) {
	f, err := ld.family(r.family)
	for _, p := range r.progs {
		hook := r.family + "/" + p
		if err == nil && f.spec.Programs[p] != nil {
			hook = hookName(f.spec.Programs[p], r.attachTo)
		}
		ld.rep.Add(def.stage, hook, capability.StatusUnavailable, why)
	}
}

func (ld *loader) tryRung(def hookDef, r rung, targetMissing *bool) bool {
	f, err := ld.family(r.family)
	if err != nil {
		for _, p := range r.progs {
			ld.rep.Add(def.stage, r.family+"/"+p, capability.StatusUnavailable, err.Error())
		}
		return false
	}
	type loaded struct {
		ps      *ebpf.ProgramSpec
		hook    string
		prog    *ebpf.Program
		lnk     link.Link
		classic *classicEvent
	}
	var done []loaded
	var failHook, failReason string
	for _, name := range r.progs {
		ps := f.spec.Programs[name]
		hook := hookName(ps, r.attachTo)
		if why := ld.precondition(def, ps, *targetMissing); why != "" {
			failHook, failReason = hook, why
			break
		}
		var ce *classicEvent
		if r.classic {
			// The format decides before anything is loaded: a raw copy nobody can
			// decode is not attached.
			var err error
			if ce, err = loadClassicEvent(ps.AttachTo); err != nil {
				ld.log.Debug("hook unavailable", zap.String("stage", def.stage), zap.String("hook", hook), zap.Error(err))
				failHook, failReason = hook, classicReason(ps.AttachTo, err)
				break
			}
		}
		prog, err := ld.loadProgram(f, name, r)
		attachFailed := false
		if err == nil {
			var l link.Link
			l, err = attach(ps, prog)
			if err != nil {
				prog.Close()
				attachFailed = true
			} else {
				done = append(done, loaded{ps, hook, prog, l, ce})
				continue
			}
		}
		if isTpBTF(ps) && errors.Is(err, ebpf.ErrNotSupported) {
			*targetMissing = true
		}
		ld.log.Debug("hook unavailable", zap.String("stage", def.stage), zap.String("hook", hook), zap.Error(err))
		failHook, failReason = hook, reason(ps, err)
		if attachFailed && isFentry(ps) && errors.Is(err, ebpf.ErrNotSupported) {
			// The target was found and the program verified: the kernel refused the
			// trampoline itself (ENOTSUPP from bpf_trampoline_link_prog).
			failReason = fentryAttachRefused
		}
		break
	}
	if failHook == "" {
		for _, d := range done {
			ld.objs.progs = append(ld.objs.progs, d.prog)
			ld.objs.links = append(ld.objs.links, d.lnk)
			reason := ""
			if d.classic != nil {
				if h, ok := classicHook(def.event); ok {
					ld.objs.classic.add(h, d.classic)
				}
				reason = "raw entries decoded with the tracefs format"
			}
			if r.family == famJobs {
				reason = jobsAttachedReason
			}
			ld.rep.Add(def.stage, d.hook, capability.StatusAttached, reason)
		}
		return true
	}
	// All programs of a rung or none: detach the partners of a failed one.
	for _, d := range done {
		d.lnk.Close()
		d.prog.Close()
		ld.rep.Add(def.stage, d.hook, capability.StatusUnavailable, "partner "+failHook+" unavailable")
	}
	ld.rep.Add(def.stage, failHook, capability.StatusUnavailable, failReason)
	return false
}

// fillIRQs puts the GPU interrupt numbers found in /proc/interrupts into gpu_irqs.
func (ld *loader) fillIRQs() {
	data, err := os.ReadFile(procInterrupts)
	if err != nil {
		ld.log.Debug("reading interrupts", zap.String("path", procInterrupts), zap.Error(err))
		return
	}
	ld.objs.irqNames = procfs.DeviceIRQs(string(data), ld.cfg.IRQNames)
	if len(ld.objs.irqNames) == 0 {
		return
	}
	f, err := ld.family(famIRQ)
	if err != nil {
		return
	}
	for irq := range ld.objs.irqNames {
		if err := f.maps[irqMapGpuIrqs].Update(irq, uint32(0), ebpf.UpdateAny); err != nil {
			ld.log.Debug("gpu_irqs update", zap.Int32("irq", irq), zap.Error(err))
		}
	}
}
