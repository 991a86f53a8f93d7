//go:build linux

// The CUDA uprobe source: Open loads the programs and hooks what is mapped now, Run
// (reader.go) reads the ring while the hook worker (worker.go) hooks what appears later,
// Close detaches everything.

package cuda

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"github.com/cilium/ebpf/rlimit"
	"go.uber.org/zap"
	"golang.org/x/sys/unix"

	"github.com/ghostdriver/ghostdriver/internal/capability"
	"github.com/ghostdriver/ghostdriver/internal/ctxtier"
	"github.com/ghostdriver/ghostdriver/internal/ringread"
)

// Source is the CUDA uprobe source.
type Source struct {
	cfg  Config
	log  *zap.Logger
	coll *ebpf.Collection
	rd   *ringread.Reader
	// learnq carries learned entry points from the reader to the hook worker.
	learnq chan learnRequest

	enter, ret *ebpf.Program
	// enterMulti, retMulti: the same programs for uprobe_multi links (Config.UprobeMulti),
	// nil when not asked for or refused.
	enterMulti, retMulti *ebpf.Program
	// lifecycle: the exec/exit programs are attached, so recipes may be pushed.
	lifecycle bool
	// wakeups: the sched_waking program is attached (Config.SyncWakeups).
	wakeups bool
	obi     *ebpf.Map // OBI's pinned map, when used

	mu     sync.Mutex
	links  []link.Link
	libs   map[[2]uint64]*hookedLib
	report capability.Report
	stats  Stats
	closed bool
	// lostAtStop: records the ring held at the stop that its read had no time for
	// (ringread.Stop), in Stats.Lost and Losses.RingBuffer.
	lostAtStop atomic.Uint64
	// onHook is called after every uprobe attach batch (tests wait on it).
	onHook func()
}

// Open loads the programs, hooks every CUDA library mapped by a running process (and
// ExtraLibraries), attaches the Xid tracepoint and returns the capability report.
// Libraries that appear later are hooked by the hook worker's rescans while Run runs. The error is non-nil only
// when the source cannot work at all (not privileged, programs refused).
func Open(cfg Config, log *zap.Logger) (*Source, capability.Report, error) {
	if log == nil {
		log = zap.NewNop()
	}
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, newReport(), fmt.Errorf("cuda config: %w", err)
	}
	if err := rlimit.RemoveMemlock(); err != nil {
		log.Debug("removing the memlock limit", zap.Error(err))
	}
	spec, err := loadCudaBPF()
	if err != nil {
		return nil, newReport(), err
	}
	spec.Maps[cudaBPFMapEvents].MaxEntries = uint32(cfg.RingBufferBytes)
	spec.Maps[cudaBPFMapCudaThreads].MaxEntries = uint32(cfg.threadTable)
	if err := spec.Variables[cudaBPFVarWakeupBytes].Set(uint64(cfg.RingBufferBytes / 4)); err != nil {
		return nil, newReport(), err
	}
	order, err := ctxtier.KernelOrder(cfg.ContextTiers)
	if err != nil {
		return nil, newReport(), fmt.Errorf("cuda config: %w", err)
	}
	if err := spec.Variables[cudaBPFVarCtxOrder].Set(order); err != nil {
		return nil, newReport(), err
	}
	s := &Source{cfg: cfg, log: log, libs: map[[2]uint64]*hookedLib{}, learnq: make(chan learnRequest, cfg.hookQueue), report: newReport()}
	s.stats.ByAPI = map[string]uint64{}
	var replace map[string]*ebpf.Map
	if slices.Contains(cfg.ContextTiers, ctxtier.NameOBI) {
		if s.obi = s.openOBIMap(spec); s.obi != nil {
			ms := spec.Maps[obiMapName]
			ms.Type, ms.MaxEntries, ms.Flags = s.obi.Type(), s.obi.MaxEntries(), s.obi.Flags()
			replace = map[string]*ebpf.Map{obiMapName: s.obi}
		}
	} else {
		s.report.Add(stageAppContext, "map/"+obiMapName, capability.StatusUnavailable, "obi tier not configured")
	}

	// The uprobe pair is required; the Xid and lifecycle programs are optional and
	// loaded alone.
	core := spec.Copy()
	optional := map[string]*ebpf.ProgramSpec{}
	for name, ps := range core.Programs {
		if name != cudaBPFProgCudaEnter && name != cudaBPFProgCudaReturn {
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
			return nil, newReport(), fmt.Errorf("loading the CUDA uprobe programs: not privileged (needs root or CAP_BPF+CAP_PERFMON): %w", err)
		}
		return nil, newReport(), fmt.Errorf("loading the CUDA uprobe programs: %w", err)
	}
	s.coll = coll
	s.enter, s.ret = coll.Programs[cudaBPFProgCudaEnter], coll.Programs[cudaBPFProgCudaReturn]
	rd, err := ringread.NewReader(coll.Maps[cudaBPFMapEvents])
	if err != nil {
		coll.Close()
		return nil, newReport(), fmt.Errorf("ring buffer reader: %w", err)
	}
	s.rd = rd
	if !cfg.NoXid {
		s.attachXid(spec, coll, optional)
	}
	s.attachLifecycle(spec, coll, optional)
	if cfg.SyncWakeups {
		s.attachWakeups(spec, coll, optional)
	}
	if cfg.UprobeMulti {
		s.loadMulti(spec, coll, optional)
	}
	s.rescan()
	for _, pattern := range cfg.ExtraLibraries {
		paths, _ := filepath.Glob(pattern)
		if len(paths) == 0 {
			s.report.Add("uprobe", pattern, capability.StatusUnavailable, "no such file")
		}
		for _, p := range paths {
			s.hookPath(p)
		}
	}
	if len(s.libs) == 0 {
		s.report.Add("uprobe", "libcuda.so*/libcudart.so*", capability.StatusUnavailable,
			"no process maps a CUDA library yet; rescanning every "+cfg.RescanInterval.String())
	}
	log.Info("ghostdriver CUDA source attached", zap.String("summary", s.report.Summary()))
	return s, s.report.Clone(), nil
}
func (s *Source) addReport(stage, hook, status, reason string) {
	s.mu.Lock()
	s.report.Add(stage, hook, status, reason)
	s.mu.Unlock()
}

// newReport is the CUDA source's empty capability report.
func newReport() capability.Report { return capability.Report{Source: capability.SourceCUDA} }

// Report returns the capability report as it stands (entries grow as libraries and
// entry points are hooked).
func (s *Source) Report() capability.Report {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.report.Clone()
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
	s.stats.Lost, s.stats.StaleFrames, s.stats.ReturnsWithoutFrame = s.kernelCounts()
	links := s.links
	s.links = nil
	s.mu.Unlock()
	errs := closeLinks(links)
	errs = append(errs, s.rd.Close())
	s.coll.Close()
	for _, p := range []*ebpf.Program{s.enterMulti, s.retMulti} {
		if p != nil {
			p.Close()
		}
	}
	if s.obi != nil {
		s.obi.Close()
	}
	return errors.Join(errs...)
}

// closeLinks closes the links at once rather than one after another: each perf-event
// uprobe's detach waits for RCU grace periods in the kernel, and a source with both
// layers holds about 190 of them (measured on the H200: about 23 s one by one). Every
// link is closed when it returns.
func closeLinks(links []link.Link) []error {
	errs := make([]error, len(links))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 64)
	for i, l := range links {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			errs[i] = l.Close()
			<-sem
		}()
	}
	wg.Wait()
	return errs
}

func firstLine(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			return s[:i]
		}
	}
	return s
}
