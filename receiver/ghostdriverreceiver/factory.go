// The collector-facing factory: component type `ghostdriver`, traces and metrics at
// Development stability. Create is cheap and unprivileged; Start does the privileged work.
package ghostdriverreceiver

import (
	"context"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/receiver"

	"github.com/ghostdriver/ghostdriver/internal/ctxtier"
	"github.com/ghostdriver/ghostdriver/internal/enrich"
	"github.com/ghostdriver/ghostdriver/internal/metadata"
)

// NewFactory returns the factory of the ghostdriver receiver.
func NewFactory() receiver.Factory {
	return receiver.NewFactory(
		metadata.Type,
		createDefaultConfig,
		receiver.WithTraces(createTraces, metadata.TracesStability),
		receiver.WithMetrics(createMetrics, metadata.MetricsStability),
	)
}

func createDefaultConfig() component.Config {
	return &Config{
		Source:             SourceLive,
		Replay:             ReplayConfig{Speed: 0},
		Live:               defaultLiveConfig(),
		JobTimeout:         10 * time.Second,
		MaxPendingJobs:     100_000,
		ReorderWindow:      20 * time.Millisecond,
		FlushInterval:      200 * time.Millisecond,
		StageSpans:         true,
		CollectionInterval: 10 * time.Second,
		ErrorMode:          ErrorModePropagate,
		Metrics:            metadata.DefaultMetricsConfig(),
		Context: ContextConfig{
			Tiers:      append([]string(nil), enrich.DefaultTiers...),
			OBIMapPath: ctxtier.OBIMapPath,
			MaxWait:    enrich.DefaultMaxWait,
		},
		Tenant: TenantConfig{Enabled: true, ProcRoot: "/proc", SysRoot: "/sys"},
	}
}

// CreateTraces and CreateMetrics are called separately for one receiver ID; both get the
// same instance so the eBPF programs are loaded once.
func createTraces(_ context.Context, set receiver.Settings, cfg component.Config, next consumer.Traces) (receiver.Traces, error) {
	r, err := instances.getOrCreate(set, cfg.(*Config))
	if err != nil {
		return nil, err
	}
	r.setTraces(next)
	return r, nil
}

func createMetrics(_ context.Context, set receiver.Settings, cfg component.Config, next consumer.Metrics) (receiver.Metrics, error) {
	r, err := instances.getOrCreate(set, cfg.(*Config))
	if err != nil {
		return nil, err
	}
	r.setMetrics(next)
	return r, nil
}
