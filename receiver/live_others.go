//go:build !linux

// The live source needs Linux eBPF; elsewhere only replay works.
package receiver

import (
	"context"
	"errors"

	"go.opentelemetry.io/collector/component"

	"go.uber.org/zap"

	"github.com/ghostdriver/ghostdriver/internal/emit"
	"github.com/ghostdriver/ghostdriver/internal/event"
	"github.com/ghostdriver/ghostdriver/internal/pipeline"
)

func openLive(*Config, *zap.Logger) (event.Source, pipeline.Enricher, func() error, error) {
	return nil, nil, nil, errors.New(`source "live" needs Linux with eBPF; use source "replay" on this platform`)
}

func liveSpanOptions() []emit.SpanOption { return nil }

func openCUDA(*Config, pipeline.Outputs, *zap.Logger) (func(context.Context, component.Host), func() error, error) {
	return nil, nil, errors.New("live.cuda needs Linux with eBPF uprobes")
}

func defaultLiveConfig() LiveConfig {
	return LiveConfig{DRMMajors: []uint32{226}, RingBufferSize: 8 << 20, PollInterval: 10_000_000, CUDA: defaultCUDAConfig()}
}
