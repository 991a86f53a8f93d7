// The live source: eBPF programs loaded inside this collector (Linux only).
package receiver

import (
	"go.uber.org/zap"

	"github.com/ghostdriver/ghostdriver/internal/emit"
	"github.com/ghostdriver/ghostdriver/internal/event"
	"github.com/ghostdriver/ghostdriver/internal/probe"
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

func probeConfig(l LiveConfig) probe.Config {
	c := probe.DefaultConfig()
	c.DRMMajors = l.DRMMajors
	c.BOValidationFuncs = l.BOValidationFunctions
	c.RunJobFuncs = l.RunJobFunctions
	c.RingBufferBytes = l.RingBufferSize
	c.PollInterval = l.PollInterval
	c.IRQNames = l.IRQNames
	return c
}

// openLive loads and attaches the programs. The capability report is logged as a table
// at Start, so an operator sees which stage is measured by which hook, or why not.
func openLive(cfg *Config, log *zap.Logger) (event.Source, func() error, error) {
	live, report, err := probe.Open(probeConfig(cfg.Live), log)
	for _, line := range report.Lines() {
		log.Info("ghostdriver capability", zap.String("stage", line.Stage), zap.String("hook", line.Hook),
			zap.String("status", line.Status), zap.String("reason", line.Reason))
	}
	if err != nil {
		return nil, nil, err
	}
	return live, live.Close, nil
}

// liveSpanOptions salts span ids with the boot id: fence keys repeat across boots.
func liveSpanOptions() []emit.SpanOption {
	return []emit.SpanOption{emit.WithIDSalt(probe.BootSalt())}
}
