// The exporting half shared by the DRM pipeline and the CUDA runner: one goroutine takes
// the buffered spans every FlushInterval (or when kicked because the buffer is half full)
// and collects metrics every CollectionInterval, and hands both to the outputs. A refused
// export is counted and logged, never retried: the source is never held up by a consumer.
package pipeline

import (
	"context"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"
)

type exporter struct {
	out          Outputs
	log          *zap.Logger
	flushEvery   time.Duration
	collectEvery time.Duration
	// what the spans are, for the log ("GPU job spans", "CUDA submission spans").
	what string
	// takeSpans returns the buffered spans (false when there are none); collect the
	// metrics. Both take the caller's lock themselves.
	takeSpans func() (ptrace.Traces, bool)
	collect   func() pmetric.Metrics

	kick chan struct{}
	errs atomic.Uint64
}

func newExporter(out Outputs, log *zap.Logger, flushEvery, collectEvery time.Duration, what string,
	takeSpans func() (ptrace.Traces, bool), collect func() pmetric.Metrics,
) *exporter {
	return &exporter{out: out, log: log, flushEvery: flushEvery, collectEvery: collectEvery, what: what,
		takeSpans: takeSpans, collect: collect, kick: make(chan struct{}, 1)}
}

// wake asks for a span flush now (the buffer is filling up).
func (e *exporter) wake() {
	select {
	case e.kick <- struct{}{}:
	default:
	}
}

// loop exports until ctx is cancelled.
func (e *exporter) loop(ctx context.Context) {
	spanTick := time.NewTicker(e.flushEvery)
	defer spanTick.Stop()
	metricTick := time.NewTicker(e.collectEvery)
	defer metricTick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-spanTick.C:
			e.flushSpans(ctx)
		case <-e.kick:
			e.flushSpans(ctx)
		case <-metricTick.C:
			e.collectMetrics(ctx)
		}
	}
}

// start runs loop in a goroutine; the returned stop cancels it and waits.
func (e *exporter) start() (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		e.loop(ctx)
	}()
	return func() { cancel(); <-done }
}

// final exports what is left; ctx's cancellation does not cut it short.
func (e *exporter) final(ctx context.Context) {
	ctx = context.WithoutCancel(ctx)
	e.flushSpans(ctx)
	e.collectMetrics(ctx)
}

func (e *exporter) flushSpans(ctx context.Context) {
	if e.out.Traces == nil {
		return
	}
	td, ok := e.takeSpans()
	if !ok {
		return
	}
	if err := e.out.Traces(ctx, td); err != nil {
		e.errs.Add(1)
		e.log.Warn("next consumer refused "+e.what, zap.Int("spans", td.SpanCount()), zap.Error(err))
	}
}

func (e *exporter) collectMetrics(ctx context.Context) {
	if e.out.Metrics == nil {
		return
	}
	md := e.collect()
	if md.DataPointCount() == 0 {
		return
	}
	if err := e.out.Metrics(ctx, md); err != nil {
		e.errs.Add(1)
		e.log.Warn("next consumer refused ghostdriver metrics", zap.Int("data_points", md.DataPointCount()), zap.Error(err))
	}
}
