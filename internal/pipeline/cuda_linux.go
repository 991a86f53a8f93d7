// The CUDA branch of the one pipeline (Linux only, like internal/cuda):
//
//	cuda.Source ──calls──▶ cuda.Assembler ──submissions──▶ enrich ──▶ cudaspans (spans, metrics) ─▶ the pipeline's exporter
//
// The enrich stage is the DRM branch's (internal/enrich): the processes that make calls are
// read in the background and their thread-context recipes pushed into the CUDA source's
// kernel table; a submission gets TRACEPARENT when no in-kernel tier had a context.
//
// The source's goroutine drives the assembler (which is not safe for concurrent use) and
// the builders under the pipeline's mutex; the pipeline's one exporter (flush.go) takes
// the branch's spans and metrics together with the DRM branch's, into the same outputs.

package pipeline

import (
	"context"
	"errors"
	"fmt"
	"github.com/ghostdriver/ghostdriver/internal/kclock"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/ghostdriver/ghostdriver/internal/cuda"
	"github.com/ghostdriver/ghostdriver/internal/emit/cudaspans"
	"github.com/ghostdriver/ghostdriver/internal/event"
	"github.com/ghostdriver/ghostdriver/internal/sample"
)

// CUDASource is what the branch needs of *cuda.Source (tests substitute their own).
type CUDASource interface {
	Run(ctx context.Context, sink cuda.Sink) error
}

// CUDAConfig configures the CUDA branch (its metrics follow the pipeline's Config.Metrics).
type CUDAConfig struct {
	Assembler cuda.AssemblerConfig
	// MaxBufferedSubmissions bounds the submissions waiting for the exporter; beyond it
	// their spans are dropped (still counted in the metrics) and DroppedSubmissions grows.
	MaxBufferedSubmissions int
	Options                []cudaspans.Option
	// Clock converts the source's CLOCK_MONOTONIC times to wall time (default: a
	// re-synced monotonic→realtime offset; internal/graph passes the DRM live source's
	// clock when both run, so both kinds of spans use one conversion).
	Clock event.Clock
	// OnSubmission is called for every submission on the source goroutine (keep it cheap).
	OnSubmission func(*cuda.Submission)
	// Enricher is the enrich stage (nil: submissions keep what the kernel read).
	Enricher CUDAEnricher
	// Timeline is the GPU's own timeline (internal/cupti's channels; nil: none): its
	// records are joined to the submissions by a cuda.Fuser configured by Fuser.
	Timeline GPUTimeline
	Fuser    cuda.FuserConfig
}

// GPUTimeline is what the branch needs of the GPU timeline source.
type GPUTimeline interface {
	Run(ctx context.Context, sink cuda.GPUSink) error
}

// CUDAEnricher is what the branch needs of the enrich stage (receiver wires
// internal/enrich; tests substitute their own).
type CUDAEnricher interface {
	// Sight: pid made a traced call; queue its read (never blocks).
	Sight(pid uint32)
	// Gone: the kernel reported pid's exec or exit.
	Gone(pid uint32, exec bool)
	// Submission completes s's application context before it is rendered (may wait
	// briefly for a process read that is still running).
	Submission(s *cuda.Submission)
}

// cudaBranch is the CUDA branch: p.mu guards asm, spans and metrics.
type cudaBranch struct {
	p   *Pipeline
	cfg CUDAConfig
	src CUDASource

	asm     *cuda.Assembler
	fuser   *cuda.Fuser // nil without a timeline
	spans   *cudaspans.Builder
	metrics *cudaspans.Recorder

	submissions, dropped, xids atomic.Uint64
}

// AddCUDA adds the CUDA branch fed by src; call before Run, at most once.
func (p *Pipeline) AddCUDA(cfg CUDAConfig, src CUDASource) {
	if cfg.MaxBufferedSubmissions <= 0 {
		cfg.MaxBufferedSubmissions = 65536
	}
	if cfg.Clock == nil {
		cfg.Clock = kclock.New()
	}
	b := &cudaBranch{p: p, cfg: cfg, src: src}
	b.spans = cudaspans.NewBuilder(cfg.Clock, cfg.Options...)
	b.metrics = cudaspans.NewRecorder(p.cfg.Metrics, time.Now(), cfg.Options...)
	if cfg.Timeline != nil {
		b.fuser = cuda.NewFuser(cfg.Fuser, b.onSubmission)
		b.asm = cuda.NewAssembler(cfg.Assembler, b.fuser.Submission)
	} else {
		b.asm = cuda.NewAssembler(cfg.Assembler, b.onSubmission)
	}
	p.branches = append(p.branches, b)
	if p.src == nil {
		p.exp.what = "CUDA submission spans"
	} else {
		p.exp.what = "GPU job and CUDA submission spans"
	}
}

// onSubmission runs under p.mu (called from the assembler).
func (b *cudaBranch) onSubmission(s *cuda.Submission) {
	b.submissions.Add(1)
	if b.cfg.Enricher != nil {
		b.cfg.Enricher.Submission(s)
	}
	b.metrics.Record(s)
	if b.cfg.OnSubmission != nil {
		b.cfg.OnSubmission(s)
	}
	if !b.p.out.wantsSpans() {
		return
	}
	smp, keep := b.sample(s)
	if !keep {
		return
	}
	if b.spans.Len() >= b.cfg.MaxBufferedSubmissions {
		b.dropped.Add(1)
		return
	}
	b.spans.AppendSampled(s, smp)
	if b.spans.Len() >= b.cfg.MaxBufferedSubmissions/2 {
		b.p.exp.wake()
	}
}

// Calls implements cuda.Sink.
func (b *cudaBranch) Calls(batch []cuda.Call) {
	if e := b.cfg.Enricher; e != nil {
		var last uint32
		for i := range batch {
			if pid := batch[i].PID; pid != last {
				e.Sight(pid)
				last = pid
			}
		}
	}
	b.p.mu.Lock()
	b.asm.Calls(batch)
	b.p.mu.Unlock()
}

// Xid implements cuda.Sink: counted once here, attached to open submissions by the assembler.
func (b *cudaBranch) Xid(x cuda.Xid) {
	b.xids.Add(1)
	b.p.mu.Lock()
	b.metrics.RecordXid(x)
	b.asm.Xid(x)
	b.p.mu.Unlock()
}

// ProcessGone implements cuda.Sink.
func (b *cudaBranch) ProcessGone(pid uint32, exec bool) {
	if b.cfg.Enricher != nil {
		b.cfg.Enricher.Gone(pid, exec)
	}
	b.p.mu.Lock()
	b.asm.ProcessGone(pid, exec)
	b.p.mu.Unlock()
}

// Watermark implements cuda.Sink.
func (b *cudaBranch) Watermark(t int64) {
	b.p.mu.Lock()
	b.asm.Watermark(t)
	if b.fuser != nil {
		b.fuser.Watermark(t)
	}
	b.p.mu.Unlock()
}

// run drives the source (and the timeline, when there is one) until ctx is cancelled
// or the source is closed.
func (b *cudaBranch) run(ctx context.Context) error {
	var tlErr chan error
	if b.cfg.Timeline != nil {
		tlErr = make(chan error, 1)
		tctx, cancel := context.WithCancel(ctx)
		defer cancel()
		go func() { tlErr <- b.cfg.Timeline.Run(tctx, gpuSink{b}) }()
		defer func() {
			cancel()
			<-tlErr
		}()
	}
	if err := b.src.Run(ctx, b); err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("CUDA source: %w", err)
	}
	return nil
}

// flush closes all open work (as unsynchronized submissions) and hands on what waited
// for GPU records.
func (b *cudaBranch) flush() {
	b.asm.Flush()
	if b.fuser != nil {
		b.fuser.Flush()
	}
}

// gpuSink is the timeline's way into the fuser, under the pipeline's mutex.
type gpuSink struct{ b *cudaBranch }

func (g gpuSink) Kernel(k cuda.GPUKernel) { g.b.p.mu.Lock(); g.b.fuser.Kernel(k); g.b.p.mu.Unlock() }
func (g gpuSink) API(a cuda.GPUAPI)       { g.b.p.mu.Lock(); g.b.fuser.API(a); g.b.p.mu.Unlock() }
func (g gpuSink) State(s cuda.GPUState)   { g.b.p.mu.Lock(); g.b.fuser.State(s); g.b.p.mu.Unlock() }
func (g gpuSink) Mark(pid uint32, mono int64) {
	g.b.p.mu.Lock()
	g.b.fuser.Mark(pid, mono)
	g.b.p.mu.Unlock()
}
func (g gpuSink) Device(d cuda.GPUDevice) { g.b.p.mu.Lock(); g.b.fuser.Device(d); g.b.p.mu.Unlock() }
func (g gpuSink) Gone(pid uint32)         { g.b.p.mu.Lock(); g.b.fuser.Gone(pid); g.b.p.mu.Unlock() }

func (b *cudaBranch) takeSpans(dst ptrace.ResourceSpansSlice) {
	if b.spans.Len() == 0 {
		return
	}
	b.spans.Take().ResourceSpans().MoveAndAppendTo(dst)
}

func (b *cudaBranch) collect(now time.Time, dst pmetric.ResourceMetricsSlice) {
	b.metrics.Collect(now).ResourceMetrics().MoveAndAppendTo(dst)
}

func (b *cudaBranch) droppedSpans() uint64 { return b.dropped.Load() }

func (b *cudaBranch) stats(st *Stats) {
	st.CUDA = &CUDAStats{Submissions: b.submissions.Load(), DroppedSubmissions: b.dropped.Load(), Xids: b.xids.Load(),
		TopLevel: append([]uint64(nil), b.asm.Counts[:]...), Nested: append([]uint64(nil), b.asm.NestedCounts[:]...)}
	if b.fuser != nil {
		fs := b.fuser.Stats
		st.CUDA.GPU = &fs
	}
}

// sample decides submission s's spans (under p.mu; sampling.go).
func (b *cudaBranch) sample(s *cuda.Submission) (sample.Sampled, bool) {
	if b.p.sampler == nil {
		return sample.Sampled{}, true
	}
	it := sample.Item{
		Kind:          sample.KindSubmission,
		Root:          cudaspans.RootTraceID(b.spans.Salt(), s),
		Trace:         s.TraceID,
		Linked:        cudaspans.Linked(s),
		ParentSampled: s.TraceFlags&w3cSampled != 0,
		Spans:         cudaspans.SpanEstimate(s),
		End:           s.End,
		Latency:       s.End - s.Start,
		Failed:        len(s.Xids) > 0 || s.Sync != nil && s.Sync.Ret != 0,
		Incomplete:    s.Outcome != cuda.Synced,
		Group:         sample.Group{A: "cuda", N: uint64(s.PID)},
	}
	d := b.p.sampler.Decide(&it)
	if !d.Keep {
		b.spans.Skip(s)
	}
	return d.Sampled, d.Keep
}
