// The exporting half of the pipeline, one for all its branches: one goroutine takes the
// buffered spans (of every branch, as one Traces, or as one encoded request for the
// Encoded output) every FlushInterval (or when kicked because the buffer is half full)
// and collects metrics every CollectionInterval, and hands both to the outputs.
//
// Two modes. Live (the default): the source is never held up by a consumer; spans that do
// not fit the buffer are dropped by the caller, counted, and reported here at warn level
// (at most once per dropWarnEvery, and once more at the end). A refused export is counted
// and logged, never retried. Lossless (replay): full batches go through a channel of
// lossless depth to one writer goroutine, and the sender blocks while it is full, so the
// source waits for the consumer (backpressure) and memory holds a few batches whatever the
// capture's size; a refusal the consumer marks as retryable is retried with backoff.

package pipeline

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"

	"github.com/ghostdriver/ghostdriver/internal/emit"
)

// dropWarnEvery rate-limits the warning about dropped spans in live mode.
const dropWarnEvery = 10 * time.Second

// losslessDepth is how many full batches may wait for the writer in lossless mode.
const losslessDepth = 1

// retryFor bounds how long one refused batch is retried in lossless mode.
const retryFor = time.Minute

type exporter struct {
	out          Outputs
	log          *zap.Logger
	flushEvery   time.Duration
	collectEvery time.Duration
	// what the spans are, for the log ("GPU job spans", "CUDA submission spans", both).
	what string
	// dropHint ends the dropped-spans warning: what the configuration can do about it.
	dropHint string
	// takeSpans returns the buffered spans (false when there are none); collect the
	// metrics. Both take the caller's lock themselves.
	takeSpans func() (spanBatch, bool)
	collect   func() pmetric.Metrics

	// dropped is the caller's count of spans dropped because the buffer was full (live).
	dropped func() uint64

	kick chan struct{}
	errs atomic.Uint64

	// Lossless mode: batches to the writer goroutine (nil in live mode).
	batches   chan spanBatch
	writerWG  sync.WaitGroup
	closeOnce sync.Once

	warnMu      sync.Mutex
	warnedDrops uint64
	warnedAt    time.Time
	// refusals: the first is logged at once, later ones at most once per dropWarnEvery
	// with the count since the last line (a dead output must not flood the log).
	refusedAt     time.Time
	refusedSilent uint64
}

func newExporter(out Outputs, log *zap.Logger, flushEvery, collectEvery time.Duration, what string,
	takeSpans func() (spanBatch, bool), collect func() pmetric.Metrics, dropped func() uint64,
) *exporter {
	return &exporter{out: out, log: log, flushEvery: flushEvery, collectEvery: collectEvery, what: what,
		takeSpans: takeSpans, collect: collect, dropped: dropped, kick: make(chan struct{}, 1)}
}

// lossless switches the exporter to lossless mode; call before start.
func (e *exporter) lossless() {
	e.batches = make(chan spanBatch, losslessDepth)
	e.writerWG.Add(1)
	go func() {
		defer e.writerWG.Done()
		for b := range e.batches {
			e.exportSpans(context.Background(), b)
		}
	}()
}

// isLossless reports whether full batches are handed over with send.
func (e *exporter) isLossless() bool { return e.batches != nil }

// send hands a full batch to the writer, blocking while it is busy (lossless mode only).
func (e *exporter) send(b spanBatch) { e.batches <- b }

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
			e.warnDrops(false)
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

// final exports what is left (in lossless mode: after every batch already handed over);
// ctx's cancellation does not cut it short.
func (e *exporter) final(ctx context.Context) {
	ctx = context.WithoutCancel(ctx)
	e.flushSpans(ctx)
	if e.isLossless() {
		e.closeOnce.Do(func() { close(e.batches) })
		e.writerWG.Wait()
	}
	e.collectMetrics(ctx)
	e.warnDrops(true)
}

// flushSpans takes what is buffered and exports it (lossless: queues it for the writer).
func (e *exporter) flushSpans(ctx context.Context) {
	if !e.out.wantsSpans() {
		return
	}
	b, ok := e.takeSpans()
	if !ok {
		return
	}
	if e.isLossless() {
		e.send(b)
		return
	}
	e.exportSpans(ctx, b)
}

// spanBatch is one batch of spans: pdata for the Traces output, or encoded for Encoded.
type spanBatch struct {
	td  ptrace.Traces
	enc *emit.TraceBatch
}

func (b spanBatch) spanCount() int {
	if b.enc != nil {
		return b.enc.SpanCount()
	}
	return b.td.SpanCount()
}

// to hands the batch to its output.
func (b spanBatch) to(ctx context.Context, out *Outputs) error {
	if b.enc != nil {
		return out.Encoded(ctx, b.enc)
	}
	return out.Traces(ctx, b.td)
}

// exportSpans hands td to the output. In lossless mode a refusal that the consumer does not
// mark permanent is retried with backoff for up to retryFor: the replay waits.
func (e *exporter) exportSpans(ctx context.Context, b spanBatch) {
	err := b.to(ctx, &e.out)
	if err != nil && e.isLossless() {
		backoff, deadline := 10*time.Millisecond, time.Now().Add(retryFor)
		for err != nil && !consumererror.IsPermanent(err) && time.Now().Before(deadline) {
			time.Sleep(backoff)
			backoff = min(2*backoff, time.Second)
			err = b.to(ctx, &e.out)
		}
	}
	if err != nil {
		e.refused("next consumer refused "+e.what, zap.Int("spans", b.spanCount()), err)
	}
	if b.enc != nil {
		b.enc.Release()
	}
}

// refused counts a refused export and logs it (rate-limited).
func (e *exporter) refused(msg string, size zap.Field, err error) {
	e.errs.Add(1)
	e.warnMu.Lock()
	defer e.warnMu.Unlock()
	if !e.refusedAt.IsZero() && time.Since(e.refusedAt) < dropWarnEvery {
		e.refusedSilent++
		return
	}
	e.log.Warn(msg, size, zap.Error(err), zap.Uint64("refused_since_last_report", e.refusedSilent+1),
		zap.Uint64("refused_total", e.errs.Load()))
	e.refusedAt, e.refusedSilent = time.Now(), 0
}

// warnDrops logs, at warn level, the spans dropped since the last warning: at most once per
// dropWarnEvery, and always at the end (final) when some are unreported.
func (e *exporter) warnDrops(final bool) {
	e.warnMu.Lock()
	defer e.warnMu.Unlock()
	if final && e.refusedSilent > 0 {
		e.log.Warn("next consumer refused "+e.what+" or metrics", zap.Uint64("refused_since_last_report", e.refusedSilent),
			zap.Uint64("refused_total", e.errs.Load()))
		e.refusedSilent = 0
	}
	if e.dropped == nil {
		return
	}
	total := e.dropped()
	if total == e.warnedDrops || (!final && time.Since(e.warnedAt) < dropWarnEvery) {
		return
	}
	e.log.Warn(e.what+" dropped: the next consumer is slower than the source (the span buffer was full); "+
		"they are still counted in the metrics"+e.dropHint,
		zap.Uint64("dropped_since_last_report", total-e.warnedDrops), zap.Uint64("dropped_total", total))
	e.warnedDrops, e.warnedAt = total, time.Now()
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
		e.refused("next consumer refused ghostdriver metrics", zap.Int("data_points", md.DataPointCount()), err)
	}
}
