// Package pipeline is the one graph every job kind goes through, the same way for the
// collector receiver and the offline CLI (internal/graph builds it from a set of sources):
//
//	DRM source  ──events──▶ assemble ──jobs────────▶ enrich ──▶ emit      ─┐
//	                                                                        ├─▶ exporter ──▶ outputs
//	CUDA source ──calls───▶ cuda.Assembler ──submissions▶ enrich ──▶ cudaspans ─┘
//
// Either branch may be absent (a replay has no CUDA branch, an NVIDIA node often no DRM
// one). Each source's goroutine drives its assembler under the pipeline's one mutex; one
// exporter takes the buffered spans of both branches and the metrics of both into one
// Traces and one Metrics stream. Live, a slow or failing
// consumer never stalls the reader (the span buffer is bounded; overflow is counted and
// logged at warn). Lossless (replay: no live source to protect), the reader waits for the
// consumer instead: nothing is dropped and memory holds a few batches (flush.go).
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
	"github.com/ghostdriver/ghostdriver/internal/cuda"
	"github.com/ghostdriver/ghostdriver/internal/emit"
	"github.com/ghostdriver/ghostdriver/internal/event"
	"github.com/ghostdriver/ghostdriver/internal/metadata"
	"github.com/ghostdriver/ghostdriver/internal/sample"
)

// Config of a pipeline.
type Config struct {
	Assemble           assemble.Config
	Metrics            metadata.MetricsConfig
	FlushInterval      time.Duration // spans → Traces output
	CollectionInterval time.Duration // metrics → Metrics output
	// MaxBufferedJobs bounds the spans waiting for the flusher; beyond it jobs are
	// dropped from the trace output (still counted in metrics) and DroppedJobs grows.
	// Lossless, it is the batch size: a full batch is handed to the Traces output and
	// the source waits while the output is busy (default DefaultLosslessBatchJobs).
	MaxBufferedJobs int
	// Lossless: the source waits for the Traces output instead of dropping spans. For
	// finite inputs (replay), where there is no live source to protect.
	Lossless    bool
	SpanOptions []emit.SpanOption
	// Enricher, when set, attributes jobs to tenants and completes their application
	// context (internal/enrich). Only for the live source: replayed captures come from
	// another machine, whose processes the local /proc knows nothing about.
	Enricher Enricher
	// OnSourceError, when set, is called as soon as a source stops with an error, on that
	// source's goroutine, while the other sources may still run (Run returns all errors
	// only when every source has stopped).
	OnSourceError func(error)
	// Sampling, when set, decides which jobs and submissions get spans (internal/sample);
	// every one of them is in the metrics first. It must be valid (sample.Config.Validate).
	// nil: every job's spans.
	Sampling *sample.Config
}

// Enricher is the enrich stage. Both methods run on the source goroutine and must not
// block for long: Observe sees every batch before the assembler (first sight of a
// process, exec/exit), Enrich every finished job before its spans and metrics are built.
type Enricher interface {
	Observe(batch []event.Event)
	Enrich(j *assemble.Job)
}

// JobHolder is an Enricher that may hold a job until its process's first read lands
// (internal/enrich, hold.go). The pipeline then calls Hold instead of Enrich: Hold
// completes the job and hands it to now before returning (under the pipeline's lock),
// or keeps it and hands it to later from another goroutine (later takes the lock).
// ReleaseHeld, at the end of input, hands on everything held.
type JobHolder interface {
	Hold(j *assemble.Job, now, later func(*assemble.Job))
	ReleaseHeld()
}

// contextCounter is an Enricher with counts for the metrics (internal/enrich).
type contextCounter interface {
	ContextCounts() (held [4]uint64, rediscovery [3]uint64)
}

// Outputs receive what the pipeline produces. Any may be nil.
type Outputs struct {
	Traces  func(context.Context, ptrace.Traces) error
	Metrics func(context.Context, pmetric.Metrics) error
	// Encoded, when set and Traces is not, receives the spans already encoded as OTLP
	// requests in EncodedFormat: the DRM branch's jobs are encoded straight from the
	// assembled jobs (emit.JobEncoder, no pdata spans; the same bytes), other branches'
	// spans are added to the same request. For files; consumers that need pdata use
	// Traces. The pipeline releases each batch once the call returns.
	Encoded       func(context.Context, *emit.TraceBatch) error
	EncodedFormat emit.Format
	// Job is called for every assembled job under the pipeline's lock, on the source
	// goroutine, or on the enricher's for a job it held (keep it cheap).
	Job func(*assemble.Job)
}

// Pipeline runs its sources to completion or cancellation.
type Pipeline struct {
	cfg Config
	src event.Source // the DRM branch's source; nil when only other branches run
	out Outputs
	log *zap.Logger

	mu      sync.Mutex // guards asm, spans, metrics
	asm     *assemble.Assembler
	spans   *emit.SpanBuilder // nil when the spans are encoded (enc)
	enc     *emit.JobEncoder
	metrics *emit.MetricsRecorder

	exp         *exporter
	droppedJobs atomic.Uint64

	sampler    *sample.Sampler // nil: every job's spans (sampling.go)
	stageSpans bool            // a job's spans are its span and one per stage
	started    time.Time       // the cumulative metrics' start

	holder         JobHolder             // cfg.Enricher when it holds jobs
	emitNow, later func(j *assemble.Job) // emitJob, and emitJob under p.mu

	// branches are the other job kinds beside the DRM one (AddCUDA), sharing mu and exp.
	branches []branch
}

// branch is another job kind's chain beside the DRM one: its own source, assembler,
// enrich step and span/metric builders (cuda_linux.go). run drives the source; the other
// methods are called under p.mu.
type branch interface {
	run(ctx context.Context) error
	flush()                                                  // end of input: close all open work
	takeSpans(dst ptrace.ResourceSpansSlice)                 // move the buffered spans out
	collect(now time.Time, dst pmetric.ResourceMetricsSlice) // append the branch's metrics
	droppedSpans() uint64                                    // spans dropped (buffer full)
	stats(st *Stats)
}

// New builds a pipeline with the DRM branch fed by src (nil: none; add another branch
// before Run); nothing runs until Run.
func New(cfg Config, src event.Source, out Outputs, log *zap.Logger) *Pipeline {
	if cfg.FlushInterval <= 0 {
		cfg.FlushInterval = 200 * time.Millisecond
	}
	if cfg.CollectionInterval <= 0 {
		cfg.CollectionInterval = 10 * time.Second
	}
	if cfg.MaxBufferedJobs <= 0 {
		cfg.MaxBufferedJobs = 65536
		if cfg.Lossless {
			cfg.MaxBufferedJobs = DefaultLosslessBatchJobs
		}
	}
	if log == nil {
		log = zap.NewNop()
	}
	p := &Pipeline{cfg: cfg, src: src, out: out, log: log, stageSpans: emit.StageSpans(cfg.SpanOptions...), started: time.Now()}
	if cfg.Sampling != nil {
		p.sampler = sample.New(*cfg.Sampling)
	}
	if h, ok := cfg.Enricher.(JobHolder); ok {
		p.holder, p.emitNow, p.later = h, p.emitJob, p.emitLater
	}
	clock := sourceClock{src}
	if out.Traces == nil && out.Encoded != nil {
		p.enc = emit.NewJobEncoder(clock, out.EncodedFormat, cfg.SpanOptions...)
	} else {
		p.spans = emit.NewSpanBuilder(clock, cfg.SpanOptions...)
	}
	p.metrics = emit.NewMetricsRecorder(cfg.Metrics, p.started)
	p.asm = assemble.New(cfg.Assemble, p.onJob)
	p.exp = newExporter(out, log, cfg.FlushInterval, cfg.CollectionInterval, "GPU job spans", p.takeSpans, p.collect,
		p.droppedSpans)
	if src != nil && emit.StageSpans(cfg.SpanOptions...) {
		// Most of a job's span cost is the collector's data model (BENCHMARKS.md): at high
		// job rates one span a job instead of one per stage is the lever the receiver has.
		// Stage spans are the DRM source's: a CUDA-only pipeline (no src) gets no hint.
		p.exp.dropHint = "; if the job rate stays this high, stage_spans: false (--no-stage-spans) sends one span a job instead of one per stage"
	}
	if cfg.Lossless && out.wantsSpans() {
		p.exp.lossless()
	}
	return p
}

// DefaultLosslessBatchJobs is the batch size of a lossless pipeline: jobs per Traces call
// (a job is up to 1 + number of stages spans). Small enough that a batch and its encoding
// stay a few MB, large enough that per-call costs do not matter.
const DefaultLosslessBatchJobs = 1024

// sourceClock defers to the source's clock, which is only valid once events flow.
type sourceClock struct{ src event.Source }

func (c sourceClock) WallNanos(t int64) int64 { return c.src.Clock().WallNanos(t) }

// onJob runs under p.mu (called from the assembler).
func (p *Pipeline) onJob(j *assemble.Job) {
	switch {
	case p.holder != nil:
		p.holder.Hold(j, p.emitNow, p.later)
		return
	case p.cfg.Enricher != nil:
		p.cfg.Enricher.Enrich(j)
	}
	p.emitJob(j)
}

// emitLater is emitJob for a job the enricher held (another goroutine).
func (p *Pipeline) emitLater(j *assemble.Job) {
	p.mu.Lock()
	p.emitJob(j)
	p.mu.Unlock()
}

// emitJob records an enriched job and buffers its spans. Runs under p.mu.
func (p *Pipeline) emitJob(j *assemble.Job) {
	p.metrics.RecordJob(j, sourceClock{p.src})
	if p.out.Job != nil {
		p.out.Job(j)
	}
	if !p.out.wantsSpans() {
		return
	}
	smp, keep := p.sampleJob(j)
	if !keep {
		return
	}
	if p.exp.isLossless() {
		p.appendSpans(j, smp)
		if p.bufferedJobs() >= p.cfg.MaxBufferedJobs {
			// Blocks while the writer is busy: the source waits (backpressure). The
			// writer never takes p.mu, so holding it here cannot deadlock.
			p.exp.send(p.takeDRMSpans())
		}
		return
	}
	if p.bufferedJobs() >= p.cfg.MaxBufferedJobs {
		p.droppedJobs.Add(1)
		return
	}
	p.appendSpans(j, smp)
	if p.bufferedJobs() >= p.cfg.MaxBufferedJobs/2 {
		p.exp.wake()
	}
}

// wantsSpans reports whether spans have an output.
func (o *Outputs) wantsSpans() bool { return o.Traces != nil || o.Encoded != nil }

// appendSpans, bufferedJobs and takeDRMSpans are the DRM branch's span buffer, built
// (SpanBuilder) or encoded (JobEncoder). They run under p.mu.
func (p *Pipeline) appendSpans(j *assemble.Job, smp sample.Sampled) {
	if p.enc != nil {
		p.enc.AppendSampled(j, smp)
		return
	}
	p.spans.AppendSampled(j, smp)
}

func (p *Pipeline) bufferedJobs() int {
	if p.enc != nil {
		return p.enc.Len()
	}
	return p.spans.Len()
}

func (p *Pipeline) takeDRMSpans() spanBatch {
	if p.enc != nil {
		return spanBatch{enc: p.enc.Take()}
	}
	return spanBatch{td: p.spans.Take()}
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

// droppedSpans is the exporter's count of spans dropped in every branch.
func (p *Pipeline) droppedSpans() uint64 {
	n := p.droppedJobs.Load()
	for _, b := range p.branches {
		n += b.droppedSpans()
	}
	return n
}

// Run drives every source until each ends (finite input) or ctx is cancelled, then
// flushes everything still buffered. The sources' errors, if any, are returned (joined)
// after the flush.
func (p *Pipeline) Run(ctx context.Context) error {
	stopExporter := p.exp.start()
	errs := make([]error, 1+len(p.branches))
	stopped := func(i int, err error) {
		if errors.Is(err, context.Canceled) {
			err = nil
		}
		errs[i] = err
		if err != nil && p.cfg.OnSourceError != nil {
			p.cfg.OnSourceError(err)
		}
	}
	var wg sync.WaitGroup
	for i, b := range p.branches {
		wg.Add(1)
		go func() {
			defer wg.Done()
			stopped(1+i, b.run(ctx))
		}()
	}
	if p.src != nil {
		stopped(0, p.src.Run(ctx, p))
	}
	wg.Wait()
	stopExporter()

	// End of input: every pending job goes out (incomplete ones with their reason).
	p.mu.Lock()
	p.asm.Flush()
	for _, b := range p.branches {
		b.flush()
	}
	p.mu.Unlock()
	if p.holder != nil {
		p.holder.ReleaseHeld() // jobs waiting for their process's read go out now
	}
	// The final export must not be cut short by the cancelled run context.
	p.exp.final(ctx)
	return errors.Join(errs...)
}

// takeSpans is the exporter's span source: the buffered spans of every branch, in one
// Traces (or one encoded batch).
func (p *Pipeline) takeSpans() (spanBatch, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.enc != nil {
		b := p.enc.Take()
		td := ptrace.NewTraces()
		for _, br := range p.branches {
			br.takeSpans(td.ResourceSpans())
		}
		if td.ResourceSpans().Len() > 0 {
			b.AddTraces(td)
		}
		if b.Empty() {
			b.Release()
			return spanBatch{}, false
		}
		return spanBatch{enc: b}, true
	}
	var td ptrace.Traces
	if p.spans.Len() > 0 {
		td = p.spans.Take()
	} else {
		td = ptrace.NewTraces()
	}
	for _, b := range p.branches {
		b.takeSpans(td.ResourceSpans())
	}
	if td.ResourceSpans().Len() == 0 {
		return spanBatch{}, false
	}
	return spanBatch{td: td}, true
}

// collect is the exporter's metric source: the metrics of every branch, in one Metrics.
func (p *Pipeline) collect() pmetric.Metrics {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	var md pmetric.Metrics
	if p.src != nil {
		md = p.metrics.Collect(now, p.src.Stats(), p.assemblerCounters())
	} else {
		md = pmetric.NewMetrics()
	}
	for _, b := range p.branches {
		b.collect(now, md.ResourceMetrics())
	}
	if p.sampler != nil {
		emit.AppendSamplingMetrics(md, p.cfg.Metrics, p.started, now, p.sampler.Stats())
	}
	return md
}

// assemblerCounters runs under p.mu.
func (p *Pipeline) assemblerCounters() emit.AssemblerCounters {
	s := p.asm.Stats()
	var ctx emit.ContextCounters
	if c, ok := p.cfg.Enricher.(contextCounter); ok {
		ctx.Enriched = true
		ctx.Held, ctx.Rediscovery = c.ContextCounts()
	}
	return emit.AssemblerCounters{
		Context:           ctx,
		Completed:         s.Completed,
		Incomplete:        s.Incomplete,
		EvictedTimeout:    s.EvictedTimeout,
		EvictedCap:        s.EvictedCap,
		Pending:           s.Pending,
		DroppedSpans:      p.droppedJobs.Load(),
		Late:              s.Late,
		Duplicates:        s.Duplicates,
		ClockJumps:        s.ClockJumps,
		IoctlExitsNotSeen: s.IoctlExitsNotSeen,
		Unmatched:         s.Orphans,
	}
}

// Stats is a snapshot of what the pipeline did.
type Stats struct {
	Source       event.SourceStats
	Assembler    assemble.Stats
	DroppedJobs  uint64 // spans not exported because the buffer was full
	ExportErrors uint64 // Consume calls refused by the next consumer
	// RenamedSpanIDs counts jobs whose derived span ids a recent span already had: they
	// got the next derivation (emit/ids.go), so no span id repeats.
	RenamedSpanIDs uint64
	// DRM: the DRM branch ran (Source, Assembler, DroppedJobs, RenamedSpanIDs are its).
	DRM bool
	// Sampling is the sampler's snapshot; nil when sampling is off.
	Sampling *sample.Stats
	// CUDA is the CUDA branch's snapshot; nil when the pipeline has none.
	CUDA *CUDAStats
}

// CUDAStats is a snapshot of what the CUDA branch did.
type CUDAStats struct {
	Submissions        uint64
	DroppedSubmissions uint64 // spans not exported because the buffer was full
	Xids               uint64
	// TopLevel and Nested count the assembler's calls by class (cuda.Class order).
	TopLevel, Nested []uint64
	// GPU is what the GPU timeline's fuser counted (nil without a timeline).
	GPU *cuda.FuserStats
}

// Stats returns a snapshot; safe to call concurrently with Run.
func (p *Pipeline) Stats() Stats {
	st := Stats{DroppedJobs: p.droppedJobs.Load(), ExportErrors: p.exp.errs.Load(), DRM: p.src != nil}
	if p.enc != nil {
		st.RenamedSpanIDs = p.enc.RenamedIDs()
	} else {
		st.RenamedSpanIDs = p.spans.RenamedIDs()
	}
	if p.src != nil {
		st.Source = p.src.Stats()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	st.Assembler = p.asm.Stats()
	for _, b := range p.branches {
		b.stats(&st)
	}
	if p.sampler != nil {
		ss := p.sampler.Stats()
		st.Sampling = &ss
	}
	return st
}
