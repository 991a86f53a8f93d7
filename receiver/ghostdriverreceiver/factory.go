// The collector-facing factory: component type `ghostdriver`, traces and metrics at
// Development stability. Create is cheap and unprivileged; Start does the privileged work.

package ghostdriverreceiver

import (
	"context"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/receiver"

	"github.com/ghostdriver/ghostdriver/internal/graph"
	"github.com/ghostdriver/ghostdriver/internal/metadata"
	"github.com/ghostdriver/ghostdriver/internal/sample"
)

// NewFactory returns the factory of the ghostdriver receiver.
func NewFactory() receiver.Factory { return NewFactoryWithOptions() }

// NewFactoryWithOptions returns the factory of the ghostdriver receiver with the options
// of a distribution that embeds it (options.go).
func NewFactoryWithOptions(opts ...Option) receiver.Factory {
	o := newOptions(opts)
	return receiver.NewFactory(
		metadata.Type,
		func() component.Config { return o.defaultConfig() },
		receiver.WithTraces(o.createTraces, metadata.TracesStability),
		receiver.WithMetrics(o.createMetrics, metadata.MetricsStability),
	)
}

func createDefaultConfig() component.Config { return (&options{}).defaultConfig() }

// defaultConfig is internal/graph's DefaultSpec in the receiver's keys, with the
// embedder's roots.
func (o *options) defaultConfig() *Config {
	d := graph.DefaultSpec()
	cfg := &Config{
		Source:             SourceLive,
		Replay:             ReplayConfig{Speed: 0},
		Live:               liveConfigOf(d),
		JobTimeout:         d.Pipeline.Assemble.JobTimeout,
		MaxPendingJobs:     d.Pipeline.Assemble.MaxPendingJobs,
		ReorderWindow:      d.Pipeline.Assemble.ReorderWindow,
		FlushInterval:      d.Pipeline.FlushInterval,
		StageSpans:         graph.DefaultStageSpans,
		Sampling:           samplingConfigOf(sample.DefaultConfig()),
		CollectionInterval: d.Pipeline.CollectionInterval,
		ErrorMode:          ErrorModePropagate,
		Metrics:            d.Pipeline.Metrics,
		Context: ContextConfig{
			Tiers:      d.Context.Tiers,
			OBIMapPath: d.Context.OBIMapPath,
			MaxWait:    d.Context.MaxWait,
		},
		Tenant: TenantConfig{Enabled: d.Enrich, ProcRoot: d.ProcRoot, SysRoot: d.SysRoot},
	}
	if o.procRoot != "" {
		cfg.Tenant.ProcRoot = o.procRoot
	}
	if o.sysRoot != "" {
		cfg.Tenant.SysRoot = o.sysRoot
	}
	return cfg
}

// liveConfigOf is the live section of the default spec d (the DRM and CUDA sources).
func liveConfigOf(d graph.Spec) LiveConfig {
	l, c := d.Live, d.CUDA
	return LiveConfig{
		DRMMajors:             l.DRMMajors,
		BOValidationFunctions: l.BOValidationFuncs,
		RunJobFunctions:       l.RunJobFuncs,
		RingBufferSize:        l.RingBufferBytes,
		PollInterval:          l.PollInterval,
		IRQNames:              l.IRQNames,
		MountTracefs:          !l.NoTracefsMount,
		CUDA: CUDAConfig{
			RescanInterval:    c.RescanInterval,
			FollowEntryPoints: !c.IgnoreEntryPoints,
			Xid:               !c.NoXid,
			RingBufferSize:    c.RingBufferBytes,
			Layers:            c.Layers,
			LaunchesAtEntry:   c.LaunchesAtEntry,
			UprobeMulti:       c.UprobeMulti,
			SyncWakeups:       c.SyncWakeups,
			Timeline:          CUDATimelineConfig{Mode: string(c.Timeline.Mode), OnFor: c.Timeline.OnFor, Every: c.Timeline.Every},
		},
	}
}

// CreateTraces and CreateMetrics are called separately for one receiver ID; both get the
// same instance so the eBPF programs are loaded once.
func (o *options) createTraces(_ context.Context, set receiver.Settings, cfg component.Config, next consumer.Traces) (receiver.Traces, error) {
	r, err := instances.getOrCreate(set, cfg.(*Config), o)
	if err != nil {
		return nil, err
	}
	r.setTraces(next)
	return r, nil
}

func (o *options) createMetrics(_ context.Context, set receiver.Settings, cfg component.Config, next consumer.Metrics) (receiver.Metrics, error) {
	r, err := instances.getOrCreate(set, cfg.(*Config), o)
	if err != nil {
		return nil, err
	}
	r.setMetrics(next)
	return r, nil
}
