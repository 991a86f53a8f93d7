// The live source: eBPF programs loaded inside this collector (Linux only).
package receiver

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"sort"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"
	"go.uber.org/zap"

	"github.com/ghostdriver/ghostdriver/internal/cuda"
	"github.com/ghostdriver/ghostdriver/internal/emit"
	"github.com/ghostdriver/ghostdriver/internal/emit/cudaspans"
	"github.com/ghostdriver/ghostdriver/internal/enrich"
	"github.com/ghostdriver/ghostdriver/internal/event"
	"github.com/ghostdriver/ghostdriver/internal/pipeline"
	"github.com/ghostdriver/ghostdriver/internal/probe"
	"github.com/ghostdriver/ghostdriver/internal/tenant"
)

func defaultLiveConfig() LiveConfig {
	d := probe.DefaultConfig()
	return LiveConfig{
		DRMMajors:             d.DRMMajors,
		BOValidationFunctions: d.BOValidationFuncs,
		RunJobFunctions:       d.RunJobFuncs,
		RingBufferSize:        d.RingBufferBytes,
		PollInterval:          d.PollInterval,
		IRQNames:              d.IRQNames,
		CUDA:                  defaultCUDAConfig(),
	}
}

func probeConfig(cfg *Config) probe.Config {
	l := cfg.Live
	c := probe.DefaultConfig()
	c.ContextTiers = enrich.KernelTiers(cfg.Context.Tiers)
	c.OBIMapPath = cfg.Context.OBIMapPath
	c.DRMMajors = l.DRMMajors
	c.BOValidationFuncs = l.BOValidationFunctions
	c.RunJobFuncs = l.RunJobFunctions
	c.RingBufferBytes = l.RingBufferSize
	c.PollInterval = l.PollInterval
	c.IRQNames = l.IRQNames
	c.ClassicTracepoints = l.ClassicTracepoints
	if l.CUDA.Enabled {
		c.DRMMajors, c.IoctlTypes = withNvidiaMajors(c.DRMMajors, cfg.Tenant.ProcRoot)
	}
	return c
}

// withNvidiaMajors adds the majors of the NVIDIA character devices CUDA work goes through
// (the frontend, 195, and nvidia-uvm), read from <procRoot>/devices, to the ioctl filter,
// with their ioctl types. Their ioctls become ioctl events (counted, seen by the
// enricher), never jobs: NVIDIA work is submitted from user space, which the CUDA source
// traces. Other NVIDIA devices (nvidia-caps, nvswitch, nvlink) are left out: no CUDA work
// passes through their ioctls, and a major of unknown ioctl types would turn the kernel's
// type gate off, making every ioctl on the host pay the file lookup.
func withNvidiaMajors(majors []uint32, procRoot string) ([]uint32, map[uint32][]uint8) {
	if procRoot == "" {
		procRoot = "/proc"
	}
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
			if len(out) >= maxDRMMajors {
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

// openCUDA opens the CUDA source and returns the function that runs it through a
// pipeline.CUDA runner into out (until ctx is cancelled or the source is closed). The
// capability report is logged like the DRM source's.
func openCUDA(cfg *Config, out pipeline.Outputs, log *zap.Logger) (func(context.Context, component.Host), func() error, error) {
	cc := cfg.Live.CUDA
	rescan := cc.RescanInterval
	if rescan == 0 {
		rescan = -1 // scan only at start
	}
	src, report, err := cuda.Open(cuda.Config{
		ProcRoot:          cfg.Tenant.ProcRoot,
		ExtraLibraries:    cc.Libraries,
		RescanInterval:    rescan,
		IgnoreEntryPoints: !cc.FollowEntryPoints,
		NoXid:             !cc.Xid,
		ContextTiers:      enrich.KernelTiers(cfg.Context.Tiers),
		OBIMapPath:        cfg.Context.OBIMapPath,
	}, log)
	for _, e := range report.Entries {
		log.Info("ghostdriver CUDA capability", zap.String("stage", e.Stage), zap.String("hook", e.Hook),
			zap.String("status", e.Status), zap.String("reason", e.Reason))
	}
	if err != nil {
		return nil, nil, err
	}
	opts := []cudaspans.Option{cudaspans.WithIDSalt(probe.BootSalt()), cudaspans.WithLossFunc(src.Losses)}
	var enricher pipeline.CUDAEnricher
	closeAll := src.Close
	if cfg.Tenant.Enabled {
		// The DRM path's enrich stage, with the CUDA source's kernel table: processes
		// are read when they first call CUDA, their OTEP 4947 recipes pushed.
		tc := tenant.DefaultConfig()
		tc.ProcRoot, tc.SysRoot = cfg.Tenant.ProcRoot, cfg.Tenant.SysRoot
		enr := enrich.New(enrich.Config{Tiers: cfg.Context.Tiers}, tenant.NewResolver(tc), src, log)
		enricher = enrich.CUDA{Enricher: enr}
		opts = append(opts, cudaspans.WithResourceFunc(enrich.CUDA{Enricher: enr}.Resource))
		closeAll = func() error { enr.Close(); return src.Close() }
	}
	runner := pipeline.NewCUDA(pipeline.CUDAConfig{
		Metrics:            cfg.Metrics,
		FlushInterval:      cfg.FlushInterval,
		CollectionInterval: cfg.CollectionInterval,
		Options:            opts,
		Enricher:           enricher,
	}, src, out, log)
	run := func(ctx context.Context, host component.Host) {
		err := runner.Run(ctx)
		st := runner.Stats()
		fields := []zap.Field{zap.Uint64("submissions", st.Submissions), zap.Uint64("xids", st.Xids),
			zap.Uint64("records_lost", src.Stats().Lost), zap.Uint64("returns_missed", src.Stats().StaleFrames),
			zap.Uint64("entry_points_refused", src.Stats().EntryPointsRefused), zap.Uint64("maps_reads_cut", src.Stats().MapsTruncated)}
		if err != nil {
			log.Error("ghostdriver CUDA source stopped with an error", append(fields, zap.Error(err))...)
			componentstatus.ReportStatus(host, componentstatus.NewPermanentErrorEvent(err))
			return
		}
		log.Info("ghostdriver CUDA source stopped", fields...)
	}
	return run, closeAll, nil
}

// openLive loads and attaches the programs, and starts the enricher on top of them. The
// capability report is logged as a table at Start, so an operator sees which stage is
// measured by which hook, or why not.
func openLive(cfg *Config, log *zap.Logger) (event.Source, pipeline.Enricher, func() error, error) {
	live, report, err := probe.Open(probeConfig(cfg), log)
	for _, line := range report.Lines() {
		log.Info("ghostdriver capability", zap.String("stage", line.Stage), zap.String("hook", line.Hook),
			zap.String("status", line.Status), zap.String("reason", line.Reason))
	}
	if err != nil {
		return nil, nil, nil, err
	}
	// Attached hooks without a GPU job hook (ioctl, dma_fence only: no DRM driver, no
	// scheduler) make a source that runs and emits nothing: say so once, with why.
	if v := probe.Assess(report, probe.ProbeHost("/dev", cfg.Tenant.SysRoot)); !v.CanTraceJobs {
		log.Warn("ghostdriver live source: no GPU job hook attached, so no gpu.job spans will be emitted; run `ghostdriver doctor` on this host for every hook and reason",
			zap.String("verdict", v.Line))
	}
	if !cfg.Tenant.Enabled {
		return live, nil, live.Close, nil
	}
	tc := tenant.DefaultConfig()
	tc.ProcRoot, tc.SysRoot = cfg.Tenant.ProcRoot, cfg.Tenant.SysRoot
	enr := enrich.New(enrich.Config{Tiers: cfg.Context.Tiers, MaxWait: cfg.Context.enrichMaxWait()}, tenant.NewResolver(tc), live, log)
	return live, enr, func() error { enr.Close(); return live.Close() }, nil
}

// liveSpanOptions salts span ids with the boot id: fence keys repeat across boots.
func liveSpanOptions() []emit.SpanOption {
	return []emit.SpanOption{emit.WithIDSalt(probe.BootSalt())}
}
