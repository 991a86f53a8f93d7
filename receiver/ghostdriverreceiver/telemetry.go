// The receiver's own health in the collector's internal telemetry: the counts that say the
// receiver is losing data (records lost, kernel drops, malformed input, evicted jobs,
// spans dropped), observed from the pipeline's counters whenever the collector's
// MeterProvider collects. They are the data stream's health metrics again (those stay:
// dashboards read them), for a collector's self-monitoring, which sees a receiver that
// loses events even when no pipeline carries the receiver's own metrics. The instruments
// are mdatagen's (metadata.yaml `telemetry:`, internal/metadata/generated_telemetry.go).

package ghostdriverreceiver

import (
	"context"
	"errors"
	"math"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/ghostdriver/ghostdriver/internal/event"
	"github.com/ghostdriver/ghostdriver/internal/metadata"
	"github.com/ghostdriver/ghostdriver/internal/pipeline"
	"github.com/ghostdriver/ghostdriver/internal/sample"
)

// Attribute sets of the points, made once.
var (
	evictedTimeout = metric.WithAttributeSet(attribute.NewSet(
		attribute.String(metadata.AttrEvictionReason, metadata.EvictionReasonTimeout)))
	evictedCap = metric.WithAttributeSet(attribute.NewSet(
		attribute.String(metadata.AttrEvictionReason, metadata.EvictionReasonMaxPending)))
	kernelDropReasons = func() []metric.ObserveOption {
		opts := make([]metric.ObserveOption, len(event.KernelDropReasons))
		for i, r := range event.KernelDropReasons {
			opts[i] = metric.WithAttributeSet(attribute.NewSet(attribute.String(metadata.AttrKernelDropReason, r)))
		}
		return opts
	}()
)

// registerHealth registers the callbacks that read stats (the running pipeline's) when the
// collector collects. A branch the pipeline does not run observes nothing: a replay has no
// kernel drops, a CUDA-only pipeline no DRM counts. tb.Shutdown unregisters them.
func registerHealth(tb *metadata.TelemetryBuilder, stats func() pipeline.Stats) error {
	drm := func(f func(st *pipeline.Stats, o metric.Int64Observer)) metric.Int64Callback {
		return func(_ context.Context, o metric.Int64Observer) error {
			if st := stats(); st.DRM {
				f(&st, o)
			}
			return nil
		}
	}
	return errors.Join(
		tb.RegisterGhostdriverSourceLostEventsCallback(drm(func(st *pipeline.Stats, o metric.Int64Observer) {
			o.Observe(count(st.Source.Lost))
		})),
		tb.RegisterGhostdriverSourceKernelDropsCallback(drm(func(st *pipeline.Stats, o metric.Int64Observer) {
			if st.Source.KernelDrops == nil {
				return // no kernel side (replay)
			}
			for i, r := range event.KernelDropReasons {
				o.Observe(count(st.Source.KernelDrops[r]), kernelDropReasons[i])
			}
		})),
		tb.RegisterGhostdriverDecoderMalformedCallback(drm(func(st *pipeline.Stats, o metric.Int64Observer) {
			o.Observe(count(st.Source.Malformed))
		})),
		tb.RegisterGhostdriverJobEvictionsCallback(drm(func(st *pipeline.Stats, o metric.Int64Observer) {
			o.Observe(count(st.Assembler.EvictedTimeout), evictedTimeout)
			o.Observe(count(st.Assembler.EvictedCap), evictedCap)
		})),
		tb.RegisterGhostdriverJobSpansDroppedCallback(drm(func(st *pipeline.Stats, o metric.Int64Observer) {
			o.Observe(count(st.DroppedJobs))
		})),
		tb.RegisterGhostdriverCudaSubmissionSpansDroppedCallback(func(_ context.Context, o metric.Int64Observer) error {
			if st := stats(); st.CUDA != nil {
				o.Observe(count(st.CUDA.DroppedSubmissions))
			}
			return nil
		}),
		tb.RegisterGhostdriverSamplingSpansSampledOutCallback(func(_ context.Context, o metric.Int64Observer) error {
			st := stats()
			if st.Sampling == nil {
				return nil // sampling off
			}
			for r := range sample.NumReasons {
				if n := st.Sampling.SpansSampledOut(r); n > 0 {
					o.Observe(count(n), samplingReasons[r])
				}
			}
			return nil
		}),
	)
}

// samplingReasons are the attribute sets of the sampler's reasons.
var samplingReasons = func() []metric.ObserveOption {
	opts := make([]metric.ObserveOption, sample.NumReasons)
	for r := range opts {
		opts[r] = metric.WithAttributeSet(attribute.NewSet(attribute.String(metadata.AttrSamplingReason, sample.ReasonNames[r])))
	}
	return opts
}()

// count is a counter's value as an int64 observation.
func count(v uint64) int64 { return int64(min(v, math.MaxInt64)) }
