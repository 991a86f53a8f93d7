// The live sources (Linux: eBPF programs and uprobes): the DRM probe and the CUDA source,
// each with its enrich stage, their capability reports, and the policy when one of them
// cannot attach.

package graph

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"time"

	"go.uber.org/zap"

	"github.com/ghostdriver/ghostdriver/internal/cuda"
	"github.com/ghostdriver/ghostdriver/internal/cupti"
	"github.com/ghostdriver/ghostdriver/internal/emit"
	"github.com/ghostdriver/ghostdriver/internal/emit/cudaspans"
	"github.com/ghostdriver/ghostdriver/internal/enrich"
	"github.com/ghostdriver/ghostdriver/internal/pipeline"
	"github.com/ghostdriver/ghostdriver/internal/probe"
	"github.com/ghostdriver/ghostdriver/internal/tenant"
)

// linuxParts are the live sources' handles, for the accessors below.
type linuxParts struct {
	live         *probe.Live
	cudaSrc      *cuda.Source
	timeline     *cupti.Source
	cudaEnr      *enrich.Enricher
	onSubmission func(*cuda.Submission)
}

// openLive opens the live sources the spec asks for and decides what runs: both; one of
// them alone, with a warning naming what the other lacks; or neither (an error naming
// both). A DRM source missing next to a working CUDA source is expected (NVIDIA nodes have
// no drm_sched) and only logged; a CUDA source missing next to a working DRM source was
// asked for, so it is also put in Degraded.
func (g *Graph) openLive() error {
	var drmErr error
	if g.spec.Live != nil {
		if g.drm != nil {
			return errors.New("a capture to replay and the live DRM source cannot both feed the DRM branch")
		}
		drmErr = g.openDRM()
	}
	if g.spec.CUDA == nil {
		return drmErr
	}
	cudaErr := g.openCUDA()
	if g.spec.Live == nil {
		return cudaErr
	}
	switch {
	case cudaErr != nil && drmErr != nil:
		return errors.Join(drmErr, fmt.Errorf("CUDA source: %w", cudaErr))
	case cudaErr != nil:
		g.log.Warn("ghostdriver CUDA source unavailable; running the DRM source alone", zap.Error(cudaErr))
		g.Degraded = append(g.Degraded, fmt.Errorf("CUDA source unavailable, running the DRM source alone: %w", cudaErr))
	case drmErr != nil:
		g.log.Warn("ghostdriver DRM source unavailable; running the CUDA source alone", zap.Error(drmErr))
	}
	return nil
}

func (g *Graph) procRoot() string {
	if g.spec.ProcRoot == "" {
		return "/proc"
	}
	return g.spec.ProcRoot
}

func (g *Graph) sysRoot() string {
	if g.spec.SysRoot == "" {
		return "/sys"
	}
	return g.spec.SysRoot
}

// tiers are the configured context tiers (the default order when none were given).
func (g *Graph) tiers() []string {
	if g.spec.Context.Tiers == nil {
		return enrich.DefaultTiers
	}
	return g.spec.Context.Tiers
}

func (g *Graph) resolver() *tenant.Resolver {
	tc := tenant.DefaultConfig()
	tc.ProcRoot, tc.SysRoot = g.procRoot(), g.sysRoot()
	return tenant.NewResolver(tc)
}

// ProbeConfig is the DRM probe's configuration Open uses for spec (spec.Live set).
func ProbeConfig(spec Spec) probe.Config { return (&Graph{spec: spec}).probeConfig() }

// probeConfig is the DRM probe's configuration: the spec over the probe's defaults and,
// when CUDA is traced too, the NVIDIA device majors.
func (g *Graph) probeConfig() probe.Config {
	l := g.spec.Live
	c := probe.DefaultConfig()
	c.ContextTiers = enrich.KernelTiers(g.tiers())
	if g.spec.Context.OBIMapPath != "" {
		c.OBIMapPath = g.spec.Context.OBIMapPath
	}
	if l.DRMMajors != nil {
		c.DRMMajors = l.DRMMajors
	}
	if l.BOValidationFuncs != nil {
		c.BOValidationFuncs = l.BOValidationFuncs
	}
	if l.RunJobFuncs != nil {
		c.RunJobFuncs = l.RunJobFuncs
	}
	if l.RingBufferBytes != 0 {
		c.RingBufferBytes = l.RingBufferBytes
	}
	if l.PollInterval != 0 {
		c.PollInterval = l.PollInterval
	}
	if l.IRQNames != nil {
		c.IRQNames = l.IRQNames
	}
	c.ClassicTracepoints = l.ClassicTracepoints
	c.NoTracefsMount = l.NoTracefsMount
	c.FenceFilter = l.FenceFilter
	c.SendJoblessIoctls = l.SendJoblessIoctls
	c.Records = l.Records
	if g.spec.CUDA != nil {
		c.DRMMajors, c.IoctlTypes = withNvidiaMajors(c.DRMMajors, g.procRoot())
	}
	return c
}

// withNvidiaMajors adds the majors of the NVIDIA character devices CUDA work goes through
// (the frontend, 195, and nvidia-uvm), read from <procRoot>/devices, to the ioctl filter,
// with their ioctl types. Their ioctls never become jobs: NVIDIA work is submitted from
// user space, which the CUDA source traces. A process's first one is an ioctl event, which
// is how the enricher learns of the process; once it is resolved, its ioctls are counted
// in the kernel (kernel_drops{reason=ioctl_without_job}) unless SendJoblessIoctls. Other NVIDIA devices (nvidia-caps, nvswitch, nvlink) are left out: no CUDA work
// passes through their ioctls, and a major of unknown ioctl types would turn the kernel's
// type gate off, making every ioctl on the host pay the file lookup.
func withNvidiaMajors(majors []uint32, procRoot string) ([]uint32, map[uint32][]uint8) {
	b, err := os.ReadFile(filepath.Join(procRoot, "devices"))
	if err != nil {
		return majors, nil
	}
	nv := cuda.NvidiaMajors(string(b))
	names := make([]string, 0, len(nv))
	for name := range nv {
		names = append(names, name)
	}
	sort.Strings(names) // deterministic order when the cap cuts the list
	out := append([]uint32(nil), majors...)
	types := map[uint32][]uint8{}
	for _, name := range names {
		t, known := cuda.NvidiaIoctlTypes(name)
		m := nv[name]
		if !known {
			continue
		}
		if !slices.Contains(out, m) {
			if len(out) >= MaxDRMMajors {
				continue
			}
			out = append(out, m)
		}
		for _, b := range t {
			if !slices.Contains(types[m], b) {
				types[m] = append(types[m], b)
			}
		}
	}
	return out, types
}

// openDRM loads and attaches the DRM programs, and starts the enricher on top of them.
// The capability report is logged line by line, so an operator sees which stage is
// measured by which hook, or why not.
func (g *Graph) openDRM() error {
	live, report, err := probe.Open(g.probeConfig(), g.log)
	for _, line := range report.Entries {
		g.log.Info("ghostdriver capability", zap.String("stage", line.Stage), zap.String("hook", line.Hook),
			zap.String("status", line.Status), zap.String("reason", line.Reason))
	}
	g.Reports = append(g.Reports, report.Clone()) // a snapshot: the source keeps its own
	if err != nil {
		return err
	}
	g.closers = append(g.closers, live.Close)
	// Attached hooks without a GPU job hook (ioctl, dma_fence only: no DRM driver, no
	// scheduler) make a source that runs and emits nothing: say so once, with why.
	if v := probe.Assess(report, probe.ProbeHost("/dev", g.sysRoot())); !v.CanTraceJobs {
		g.log.Warn("ghostdriver live source: no GPU job hook attached, so no gpu.job spans will be emitted; run `ghostdriver doctor` on this host for every hook and reason",
			zap.String("verdict", v.Line))
	}
	g.drm, g.linux.live = live, live
	// Fence keys repeat across boots: span ids are salted with the boot id.
	g.spanOpts = append(g.spanOpts, emit.WithIDSalt(probe.BootSalt()))
	if g.spec.Enrich {
		enr := enrich.New(enrich.Config{Tiers: g.tiers(), MaxWait: g.spec.Context.MaxWait}, g.resolver(), live, g.log)
		g.closers = append(g.closers, func() error { enr.Close(); return nil })
		g.drmEnricher = enr
	}
	return nil
}

// openCUDA attaches the CUDA source and prepares its branch (added by Pipeline). Its
// capability report is logged like the DRM source's.
func (g *Graph) openCUDA() error {
	cs := g.spec.CUDA
	rescan := cs.RescanInterval
	if rescan == 0 {
		rescan = -1 // scan only at start
	}
	src, report, err := cuda.Open(cuda.Config{
		ProcRoot:          g.procRoot(),
		ExtraLibraries:    cs.Libraries,
		RescanInterval:    rescan,
		RingBufferBytes:   cs.RingBufferBytes,
		IgnoreEntryPoints: cs.IgnoreEntryPoints,
		NoXid:             cs.NoXid,
		Layers:            cs.Layers,
		LaunchesAtEntry:   cs.LaunchesAtEntry,
		UprobeMulti:       cs.UprobeMulti,
		SyncWakeups:       cs.SyncWakeups,
		ContextTiers:      enrich.KernelTiers(g.tiers()),
		OBIMapPath:        g.spec.Context.OBIMapPath,
	}, g.log)
	for _, e := range report.Entries {
		g.log.Info("ghostdriver CUDA capability", zap.String("stage", e.Stage), zap.String("hook", e.Hook),
			zap.String("status", e.Status), zap.String("reason", e.Reason))
	}
	g.Reports = append(g.Reports, report.Clone()) // a snapshot: the source keeps its own
	if err != nil {
		return err
	}
	g.closers = append(g.closers, src.Close)
	g.linux.cudaSrc = src
	opts := []cudaspans.Option{cudaspans.WithIDSalt(probe.BootSalt()), cudaspans.WithLossFunc(src.Losses)}
	var enricher pipeline.CUDAEnricher
	if g.spec.Enrich {
		// The DRM branch's enrich stage, with the CUDA source's kernel table: processes
		// are read when they first call CUDA, their OTEP 4947 recipes pushed.
		enr := enrich.New(enrich.Config{Tiers: g.spec.Context.Tiers}, g.resolver(), src, g.log)
		g.closers = append(g.closers, func() error { enr.Close(); return nil })
		g.linux.cudaEnr = enr
		enricher = enrich.CUDA{Enricher: enr}
		opts = append(opts, cudaspans.WithResourceFunc(enrich.CUDA{Enricher: enr}.Resource))
	}
	var timeline pipeline.GPUTimeline
	if m := cs.Timeline.Mode; m != "" && m != cupti.ModeOff {
		// Channels are looked for every 250 ms: a process's timeline can only start
		// once its channel is found.
		tl, err := cupti.NewSource(cupti.SourceConfig{ProcRoot: g.procRoot(), Policy: cs.Timeline, RescanInterval: 250 * time.Millisecond})
		if err != nil {
			return fmt.Errorf("GPU timeline: %w", err)
		}
		g.linux.timeline = tl
		timeline = tl
	}
	g.addCUDA = func(p *pipeline.Pipeline) {
		cfg := pipeline.CUDAConfig{Options: opts, Enricher: enricher, OnSubmission: g.linux.onSubmission, Timeline: timeline}
		if g.linux.live != nil {
			cfg.Clock = g.linux.live.Clock() // one CLOCK_MONOTONIC→wall conversion for both kinds
		}
		p.AddCUDA(cfg, src)
	}
	return nil
}

// Live is the DRM live source (nil when none is open).
func (g *Graph) Live() *probe.Live { return g.linux.live }

// CUDASource is the CUDA live source (nil when none is open).
func (g *Graph) CUDASource() *cuda.Source { return g.linux.cudaSrc }

// Timeline is the GPU timeline source (nil when its policy is off).
func (g *Graph) Timeline() *cupti.Source { return g.linux.timeline }

// CUDAEnricher is the CUDA source's enrich stage (nil without Spec.Enrich).
func (g *Graph) CUDAEnricher() *enrich.Enricher { return g.linux.cudaEnr }

// OnSubmission has f called for every CUDA submission, on the source goroutine (keep it
// cheap); set it before Pipeline.
func (g *Graph) OnSubmission(f func(*cuda.Submission)) { g.linux.onSubmission = f }
