// Package graph builds the one pipeline (internal/pipeline) from a set of sources, in one
// place for the collector receiver and every CLI command:
//
//	sources ──▶ decode ──▶ assemble ──▶ enrich ──▶ emit ──▶ outputs
//
// Open owns source selection: the replay source for a capture; the DRM live source (probe
// configuration, the NVIDIA device majors read from /proc/devices when CUDA is traced too);
// the CUDA live source; the enrich stage over each live source; the capability report of
// each source, logged line by line; and the policy when a live source cannot attach (a DRM
// source missing next to a working CUDA source is expected on NVIDIA nodes, a CUDA source
// missing next to a working DRM source is a degradation). Pipeline then builds one
// pipeline with a branch per open source, one exporter and one metrics stream.
package graph

import (
	"errors"
	"github.com/ghostdriver/ghostdriver/internal/cupti"
	"slices"
	"time"

	"go.uber.org/zap"

	"github.com/ghostdriver/ghostdriver/internal/capability"
	"github.com/ghostdriver/ghostdriver/internal/emit"
	"github.com/ghostdriver/ghostdriver/internal/event"
	"github.com/ghostdriver/ghostdriver/internal/pipeline"
	"github.com/ghostdriver/ghostdriver/internal/probe"
	"github.com/ghostdriver/ghostdriver/internal/replay"
)

// MaxDRMMajors is how many device majors the ioctl filter holds: MAX_MAJORS of
// bpf/syscalls.c, generated into the probe.
const MaxDRMMajors = probe.MaxDRMMajors

// Spec says which sources run and how the pipeline over them is configured. Any set of
// Replay, Live and CUDA may be given (at least one).
type Spec struct {
	// Replay, when set, replays a capture into the DRM branch.
	Replay *replay.Config
	// Live, when set, loads the DRM eBPF programs (Linux).
	Live *LiveSpec
	// CUDA, when set, attaches the CUDA uprobes (Linux).
	CUDA *CUDASpec
	// Enrich attributes the live sources' jobs and submissions to processes, containers
	// and pods, and completes their application context (internal/enrich). Replayed
	// captures are never enriched: they come from another machine.
	Enrich bool
	// ProcRoot and SysRoot are the host's procfs and sysfs (default /proc, /sys).
	ProcRoot, SysRoot string
	// Context: the application trace-context tiers.
	Context ContextSpec
	// Pipeline configures the pipeline; its Enricher is set by the graph, and the live
	// sources' span-id salt is appended to its SpanOptions.
	Pipeline pipeline.Config
}

// LiveSpec configures the DRM live source; a nil list or zero value keeps the probe's
// default.
type LiveSpec struct {
	DRMMajors          []uint32
	BOValidationFuncs  []string
	RunJobFuncs        []string
	RingBufferBytes    int
	PollInterval       time.Duration
	IRQNames           []string
	ClassicTracepoints bool
	// NoTracefsMount forbids the probe to mount tracefs (probe.Config.NoTracefsMount).
	NoTracefsMount bool
	// FenceFilter: dma_fence events only of contexts seen in GPU jobs (probe.Config.FenceFilter).
	FenceFilter bool
	// SendJoblessIoctls: every followed ioctl's records, also those of known processes that
	// queue nothing (probe.Config.SendJoblessIoctls).
	SendJoblessIoctls bool
	// Records: probe.RecordsJobs or probe.RecordsEvents ("": the default).
	Records string
}

// CUDASpec configures the CUDA live source.
type CUDASpec struct {
	// Libraries are CUDA library files to hook at start (globs allowed).
	Libraries []string
	// RescanInterval: how often /proc/*/maps is scanned for new CUDA libraries; 0 scans
	// only at start.
	RescanInterval time.Duration
	// RingBufferBytes sizes the CUDA ring buffer (0: the source's default).
	RingBufferBytes int
	// IgnoreEntryPoints: do not hook the driver entry points learnt from cuGetProcAddress.
	IgnoreEntryPoints bool
	// NoXid: do not attach the nvidia:nvidia_dev_xid tracepoint.
	NoXid bool
	// Layers, LaunchesAtEntry, UprobeMulti: the hook-cost levers (cuda.Config).
	Layers          string
	LaunchesAtEntry bool
	UprobeMulti     bool
	// SyncWakeups: the blocking-sync split's hooks (cuda.Config.SyncWakeups).
	SyncWakeups bool
	// Timeline is when the GPU's own timeline (the injection library's CUPTI records,
	// internal/cupti) is on in the processes that loaded it; the zero Mode is off.
	Timeline cupti.Policy
}

// ContextSpec configures the application trace-context tiers.
type ContextSpec struct {
	// Tiers in lookup order (nil: enrich.DefaultTiers; empty: none).
	Tiers []string
	// OBIMapPath is where OBI pins traces_ctx_v1 ("": the default).
	OBIMapPath string
	// MaxWait bounds how long a DRM job waits for its process's first read (0: default).
	MaxWait time.Duration
}

// Graph is the set of open sources, ready to build the pipeline over them.
type Graph struct {
	spec Spec
	log  *zap.Logger

	// Reports are the capability reports of the live sources Open tried, in order
	// (Text is what `ghostdriver live` and `ghostdriver cuda` print, Summary one line).
	Reports []capability.Report
	// Degraded holds what was asked for but does not run while the rest does (a CUDA
	// source that could not attach next to a working DRM source); each was logged at warn.
	Degraded []error

	drm         event.Source      // the DRM branch's source (nil: none)
	drmEnricher pipeline.Enricher // nil: none
	spanOpts    []emit.SpanOption // appended to the DRM branch's span options
	addCUDA     func(*pipeline.Pipeline)
	closers     []func() error // run in reverse order by Close
	linux       linuxParts     // the Linux sources' handles (open_linux.go)
}

// errNoSource is Open's answer to a Spec without any source.
var errNoSource = errors.New("no source: want a capture to replay, the live DRM source, the live CUDA source, or a combination")

// Open opens the sources of spec. On error nothing stays open and the Graph returned
// still carries the capability reports (Reports) of the sources it tried.
func Open(spec Spec, log *zap.Logger) (*Graph, error) {
	if log == nil {
		log = zap.NewNop()
	}
	g := &Graph{spec: spec, log: log}
	if spec.Replay == nil && spec.Live == nil && spec.CUDA == nil {
		return g, errNoSource
	}
	if err := g.open(); err != nil {
		_ = g.Close()
		return g, err
	}
	return g, nil
}

// open opens the replay source, then the live ones (open_linux.go).
func (g *Graph) open() error {
	if rc := g.spec.Replay; rc != nil {
		src, err := replay.New(*rc)
		if err != nil {
			return err
		}
		g.drm = src
	}
	if g.spec.Live == nil && g.spec.CUDA == nil {
		return nil
	}
	return g.openLive()
}

// HasDRM and HasCUDA say which branches the pipeline will have.
func (g *Graph) HasDRM() bool  { return g.drm != nil }
func (g *Graph) HasCUDA() bool { return g.addCUDA != nil }

// OnSourceError has f called as soon as a source stops with an error (pipeline.Config's
// OnSourceError); set it before Pipeline.
func (g *Graph) OnSourceError(f func(error)) { g.spec.Pipeline.OnSourceError = f }

// Pipeline builds the one pipeline over the open sources, into out; run it with Run.
// Build it once: the sources feed one pipeline. log is the pipeline's (nil: Open's).
func (g *Graph) Pipeline(out pipeline.Outputs, log *zap.Logger) *pipeline.Pipeline {
	if log == nil {
		log = g.log
	}
	cfg := g.spec.Pipeline
	cfg.SpanOptions = append(slices.Clone(cfg.SpanOptions), g.spanOpts...)
	cfg.Enricher = g.drmEnricher
	p := pipeline.New(cfg, g.drm, out, log)
	if g.addCUDA != nil {
		g.addCUDA(p)
	}
	return p
}

// Close releases every source and enricher (closing a live source ends its reader);
// safe to call more than once.
func (g *Graph) Close() error {
	var errs []error
	for i := len(g.closers) - 1; i >= 0; i-- {
		errs = append(errs, g.closers[i]())
	}
	g.closers = nil
	return errors.Join(errs...)
}
