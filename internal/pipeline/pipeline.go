// Package pipeline wires one source to the assembler and the span/metric builders, the
// same way for the collector receiver and the offline CLI:
//
//	source ──events──▶ assemble ──jobs──▶ enrich ──▶ emit (spans, metrics) ──▶ outputs
//
// The source's goroutine drives the assembler under a mutex; a separate flusher takes
// the buffered spans and metrics and hands them to the outputs, so a slow or failing
// consumer never stalls the reader (the span buffer is bounded; overflow is counted).
package pipeline

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"

	"github.com/ghostdriver/ghostdriver/internal/assemble"
	"github.com/ghostdriver/ghostdriver/internal/emit"
	"github.com/ghostdriver/ghostdriver/internal/event"
	"github.com/ghostdriver/ghostdriver/internal/metadata"
)

// Config of a pipeline.
type Config struct {
	Assemble           assemble.Config
	Metrics            metadata.MetricsConfig
	FlushInterval      time.Duration // spans → Traces output
	CollectionInterval time.Duration // metrics → Metrics output
	// MaxBufferedJobs bounds the spans waiting for the flusher; beyond it jobs are
	// dropped from the trace output (still counted in metrics) and DroppedJobs grows.
	MaxBufferedJobs int
	SpanOptions     []emit.SpanOption
	// Enricher, when set, attributes jobs to tenants and completes their application
	// context (internal/enrich). Only for the live source: replayed captures come from
	// another machine, whose processes the local /proc knows nothing about.
	Enricher Enricher
}

// Enricher is the enrich stage. Both methods run on the source goroutine and must not
// block for long: Observe sees every batch before the assembler (first sight of a
// process, exec/exit), Enrich every finished job before its spans and metrics are built.
type Enricher interface {
	Observe(batch []event.Event)
	Enrich(j *assemble.Job)
}

// Outputs receive what the pipeline produces. Any may be nil.
type Outputs struct {
	Traces  func(context.Context, ptrace.Traces) error
	Metrics func(context.Context, pmetric.Metrics) error
	// Job is called for every assembled job, on the source goroutine (keep it cheap).
	Job func(*assemble.Job)
}

// Pipeline runs one source to completion or cancellation.
type Pipeline struct {
	cfg Config
	src event.Source
	out Outputs
	log *zap.Logger

	mu      sync.Mutex // guards asm, spans, metrics
	asm     *assemble.Assembler
	spans   *emit.SpanBuilder
	metrics *emit.MetricsRecorder

	kick        chan struct{}
	droppedJobs atomic.Uint64
	exportErrs  atomic.Uint64
}

// New builds a pipeline; nothing runs until Run.
func New(cfg Config, src event.Source, out Outputs, log *zap.Logger) *Pipeline {
	if cfg.FlushInterval <= 0 {
		cfg.FlushInterval = 200 * time.Millisecond
	}
	if cfg.CollectionInterval <= 0 {
		cfg.CollectionInterval = 10 * time.Second
	}
	if cfg.MaxBufferedJobs <= 0 {
		cfg.MaxBufferedJobs = 65536
	}
	if log == nil {
		log = zap.NewNop()
	}
	p := &Pipeline{cfg: cfg, src: src, out: out, log: log, kick: make(chan struct{}, 1)}
	clock := sourceClock{src}
	p.spans = emit.NewSpanBuilder(clock, cfg.SpanOptions...)
	p.metrics = emit.NewMetricsRecorder(cfg.Metrics, time.Now())
	p.asm = assemble.New(cfg.Assemble, p.onJob)
	return p
}

// sourceClock defers to the source's clock, which is only valid once events flow.
type sourceClock struct{ src event.Source }

func (c sourceClock) WallNanos(t int64) int64 { return c.src.Clock().WallNanos(t) }

// onJob runs under p.mu (called from the assembler).
func (p *Pipeline) onJob(j *assemble.Job) {
	if p.cfg.Enricher != nil {
		p.cfg.Enricher.Enrich(j)
	}
	p.metrics.RecordJob(j, sourceClock{p.src})
	if p.out.Job != nil {
		p.out.Job(j)
	}
	if p.out.Traces == nil {
		return
	}
	if p.spans.Len() >= p.cfg.MaxBufferedJobs {
		p.droppedJobs.Add(1)
		return
	}
	p.spans.Append(j)
	if p.spans.Len() >= p.cfg.MaxBufferedJobs/2 {
		select {
		case p.kick <- struct{}{}:
		default:
		}
	}
}

// Consume implements event.Sink.
func (p *Pipeline) Consume(batch []event.Event) {
	if p.cfg.Enricher != nil {
		p.cfg.Enricher.Observe(batch)
	}
	p.mu.Lock()
	p.asm.Consume(batch)
	p.mu.Unlock()
}

// Watermark implements event.Sink.
func (p *Pipeline) Watermark(t int64) {
	p.mu.Lock()
	p.asm.Watermark(t)
	p.metrics.Watermark(t)
	p.mu.Unlock()
}

// Run drives the source until it ends (finite input) or ctx is cancelled, then flushes
// everything still buffered. The source's error, if any, is returned after the flush.
func (p *Pipeline) Run(ctx context.Context) error {
	flushCtx, stopFlusher := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		p.flushLoop(flushCtx)
	}()

	srcErr := p.src.Run(ctx, p)
	if errors.Is(srcErr, context.Canceled) {
		srcErr = nil
	}

	stopFlusher()
	wg.Wait()

	// End of input: every pending job goes out (incomplete ones with their reason).
	p.mu.Lock()
	p.asm.Flush()
	p.mu.Unlock()
	// The final export must not be cut short by the cancelled run context.
	final := context.WithoutCancel(ctx)
	p.flushSpans(final)
	p.collectMetrics(final)
	return srcErr
}

func (p *Pipeline) flushLoop(ctx context.Context) {
	spanTick := time.NewTicker(p.cfg.FlushInterval)
	defer spanTick.Stop()
	metricTick := time.NewTicker(p.cfg.CollectionInterval)
	defer metricTick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-spanTick.C:
			p.flushSpans(ctx)
		case <-p.kick:
			p.flushSpans(ctx)
		case <-metricTick.C:
			p.collectMetrics(ctx)
		}
	}
}

func (p *Pipeline) flushSpans(ctx context.Context) {
	if p.out.Traces == nil {
		return
	}
	p.mu.Lock()
	if p.spans.Len() == 0 {
		p.mu.Unlock()
		return
	}
	td := p.spans.Take()
	p.mu.Unlock()
	if err := p.out.Traces(ctx, td); err != nil {
		p.exportErrs.Add(1)
		p.log.Warn("next consumer refused GPU job spans", zap.Int("spans", td.SpanCount()), zap.Error(err))
	}
}

func (p *Pipeline) collectMetrics(ctx context.Context) {
	if p.out.Metrics == nil {
		return
	}
	p.mu.Lock()
	md := p.metrics.Collect(time.Now(), p.src.Stats(), p.assemblerCounters())
	p.mu.Unlock()
	if md.DataPointCount() == 0 {
		return
	}
	if err := p.out.Metrics(ctx, md); err != nil {
		p.exportErrs.Add(1)
		p.log.Warn("next consumer refused ghostdriver metrics", zap.Int("data_points", md.DataPointCount()), zap.Error(err))
	}
}

// assemblerCounters runs under p.mu.
func (p *Pipeline) assemblerCounters() emit.AssemblerCounters {
	s := p.asm.Stats()
	return emit.AssemblerCounters{
		Completed:      s.Completed,
		Incomplete:     s.Incomplete,
		EvictedTimeout: s.EvictedTimeout,
		EvictedCap:     s.EvictedCap,
		Pending:        s.Pending,
		DroppedSpans:   p.droppedJobs.Load(),
	}
}

// Stats is a snapshot of what the pipeline did.
type Stats struct {
	Source       event.SourceStats
	Assembler    assemble.Stats
	DroppedJobs  uint64 // spans not exported because the buffer was full
	ExportErrors uint64 // Consume calls refused by the next consumer
}

// Stats returns a snapshot; safe to call concurrently with Run.
func (p *Pipeline) Stats() Stats {
	p.mu.Lock()
	a := p.asm.Stats()
	p.mu.Unlock()
	return Stats{Source: p.src.Stats(), Assembler: a, DroppedJobs: p.droppedJobs.Load(), ExportErrors: p.exportErrs.Load()}
}
