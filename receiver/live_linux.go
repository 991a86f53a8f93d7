// The live source: eBPF programs loaded inside this collector (Linux only).
package receiver

import (
	"go.uber.org/zap"

	"github.com/ghostdriver/ghostdriver/internal/emit"
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
	return c
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
	if !cfg.Tenant.Enabled {
		return live, nil, live.Close, nil
	}
	tc := tenant.DefaultConfig()
	tc.ProcRoot, tc.SysRoot = cfg.Tenant.ProcRoot, cfg.Tenant.SysRoot
	enr := enrich.New(enrich.Config{Tiers: cfg.Context.Tiers}, tenant.NewResolver(tc), live, log)
	return live, enr, func() error { enr.Close(); return live.Close() }, nil
}

// liveSpanOptions salts span ids with the boot id: fence keys repeat across boots.
func liveSpanOptions() []emit.SpanOption {
	return []emit.SpanOption{emit.WithIDSalt(probe.BootSalt())}
}
