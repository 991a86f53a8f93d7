// The CUDA path, wired like the DRM one but with its own source, assembler and builders:
//
//	cuda.Source ──calls──▶ cuda.Assembler ──submissions──▶ enrich ──▶ cudaspans (spans, metrics) ──▶ outputs
//
// The enrich stage is the DRM path's (internal/enrich): the processes that make calls are
// read in the background and their thread-context recipes pushed into the CUDA source's
// kernel table; a submission gets TRACEPARENT when no in-kernel tier had a context.
//
// The source's goroutine drives the assembler (which is not safe for concurrent use) and
// the builders under a mutex; the shared exporter (flush.go) hands spans and metrics to the
// outputs, so the receiver and the CLI push CUDA data through the same consumers as DRM
// jobs.
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
	"golang.org/x/sys/unix"

	"github.com/ghostdriver/ghostdriver/internal/cuda"
	"github.com/ghostdriver/ghostdriver/internal/emit/cudaspans"
	"github.com/ghostdriver/ghostdriver/internal/event"
	"github.com/ghostdriver/ghostdriver/internal/metadata"
)

// CUDASource is what the runner needs of *cuda.Source (tests substitute their own).
type CUDASource interface {
	Run(ctx context.Context, sink cuda.Sink) error
}

// CUDAConfig configures a CUDA runner.
type CUDAConfig struct {
	Assembler          cuda.AssemblerConfig
	Metrics            metadata.MetricsConfig
	FlushInterval      time.Duration
	CollectionInterval time.Duration
	// MaxBufferedSubmissions bounds the submissions waiting for the exporter; beyond it
	// their spans are dropped (still counted in the metrics) and DroppedSubmissions grows.
	MaxBufferedSubmissions int
	Options                []cudaspans.Option
	// Clock converts the source's CLOCK_MONOTONIC times to wall time (default: a
	// re-synced monotonic→realtime offset).
	Clock event.Clock
	// OnSubmission is called for every submission on the source goroutine (keep it cheap).
	OnSubmission func(*cuda.Submission)
	// Enricher is the enrich stage (nil: submissions keep what the kernel read).
	Enricher CUDAEnricher
}

// CUDAEnricher is what the runner needs of the enrich stage (receiver wires
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

// CUDA runs one CUDA source to cancellation (or its Close).
type CUDA struct {
	cfg CUDAConfig
	src CUDASource
	out Outputs

	mu      sync.Mutex // guards asm, spans, metrics
	asm     *cuda.Assembler
	spans   *cudaspans.Builder
	metrics *cudaspans.Recorder
	exp     *exporter

	submissions, dropped, xids atomic.Uint64
}

// NewCUDA builds a runner; nothing runs until Run.
func NewCUDA(cfg CUDAConfig, src CUDASource, out Outputs, log *zap.Logger) *CUDA {
	if cfg.FlushInterval <= 0 {
		cfg.FlushInterval = 200 * time.Millisecond
	}
	if cfg.CollectionInterval <= 0 {
		cfg.CollectionInterval = 10 * time.Second
	}
	if cfg.MaxBufferedSubmissions <= 0 {
		cfg.MaxBufferedSubmissions = 65536
	}
	if cfg.Clock == nil {
		cfg.Clock = newMonoClock()
	}
	if log == nil {
		log = zap.NewNop()
	}
	r := &CUDA{cfg: cfg, src: src, out: out}
	r.spans = cudaspans.NewBuilder(cfg.Clock, cfg.Options...)
	r.metrics = cudaspans.NewRecorder(cfg.Metrics, time.Now(), cfg.Options...)
	r.asm = cuda.NewAssembler(cfg.Assembler, r.onSubmission)
	r.exp = newExporter(out, log, cfg.FlushInterval, cfg.CollectionInterval, "CUDA submission spans", r.takeSpans, r.collect,
		r.dropped.Load)
	return r
}

// onSubmission runs under r.mu (called from the assembler).
func (r *CUDA) onSubmission(s *cuda.Submission) {
	r.submissions.Add(1)
	if r.cfg.Enricher != nil {
		r.cfg.Enricher.Submission(s)
	}
	r.metrics.Record(s)
	if r.cfg.OnSubmission != nil {
		r.cfg.OnSubmission(s)
	}
	if r.out.Traces == nil {
		return
	}
	if r.spans.Len() >= r.cfg.MaxBufferedSubmissions {
		r.dropped.Add(1)
		return
	}
	r.spans.Append(s)
	if r.spans.Len() >= r.cfg.MaxBufferedSubmissions/2 {
		r.exp.wake()
	}
}

// Calls implements cuda.Sink.
func (r *CUDA) Calls(batch []cuda.Call) {
	if e := r.cfg.Enricher; e != nil {
		var last uint32
		for i := range batch {
			if pid := batch[i].PID; pid != last {
				e.Sight(pid)
				last = pid
			}
		}
	}
	r.mu.Lock()
	r.asm.Calls(batch)
	r.mu.Unlock()
}

// Xid implements cuda.Sink: counted once here, attached to open submissions by the assembler.
func (r *CUDA) Xid(x cuda.Xid) {
	r.xids.Add(1)
	r.mu.Lock()
	r.metrics.RecordXid(x)
	r.asm.Xid(x)
	r.mu.Unlock()
}

// ProcessGone implements cuda.Sink.
func (r *CUDA) ProcessGone(pid uint32, exec bool) {
	if r.cfg.Enricher != nil {
		r.cfg.Enricher.Gone(pid, exec)
	}
	r.mu.Lock()
	r.asm.ProcessGone(pid, exec)
	r.mu.Unlock()
}

// Watermark implements cuda.Sink.
func (r *CUDA) Watermark(t int64) {
	r.mu.Lock()
	r.asm.Watermark(t)
	r.mu.Unlock()
}

// Run drives the source until ctx is cancelled or the source is closed, then closes all
// open work (as unsynchronized submissions) and exports everything still buffered.
func (r *CUDA) Run(ctx context.Context) error {
	stop := r.exp.start()
	err := r.src.Run(ctx, r)
	if errors.Is(err, context.Canceled) {
		err = nil
	}
	stop()
	r.mu.Lock()
	r.asm.Flush()
	r.mu.Unlock()
	r.exp.final(ctx)
	return err
}

func (r *CUDA) takeSpans() (ptrace.Traces, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.spans.Len() == 0 {
		return ptrace.Traces{}, false
	}
	return r.spans.Take(), true
}

func (r *CUDA) collect() pmetric.Metrics {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.metrics.Collect(time.Now())
}

// CUDAStats is a snapshot of what the runner did.
type CUDAStats struct {
	Submissions        uint64
	DroppedSubmissions uint64 // spans not exported because the buffer was full
	Xids               uint64
	ExportErrors       uint64
	// TopLevel and Nested count the assembler's calls by class (cuda.Class order).
	TopLevel, Nested []uint64
}

// Stats returns a snapshot; safe to call concurrently with Run.
func (r *CUDA) Stats() CUDAStats {
	r.mu.Lock()
	top := append([]uint64(nil), r.asm.Counts[:]...)
	nested := append([]uint64(nil), r.asm.NestedCounts[:]...)
	r.mu.Unlock()
	return CUDAStats{Submissions: r.submissions.Load(), DroppedSubmissions: r.dropped.Load(),
		Xids: r.xids.Load(), ExportErrors: r.exp.errs.Load(), TopLevel: top, Nested: nested}
}

// monoClock converts CLOCK_MONOTONIC (bpf_ktime_get_ns) to wall time with an offset
// re-sampled at most every 5 s, lazily, so NTP steps reach the spans within that time.
// (The DRM live source keeps its own, equivalent clock.)
type monoClock struct {
	offset atomic.Int64
	next   atomic.Int64 // monotonic time of the next re-sample
}

func newMonoClock() *monoClock {
	c := &monoClock{}
	c.sample()
	return c
}

func (c *monoClock) sample() {
	var best int64 = -1
	var off int64
	for i := 0; i < 8; i++ {
		m1 := clockNanos(unix.CLOCK_MONOTONIC)
		rt := clockNanos(unix.CLOCK_REALTIME)
		m2 := clockNanos(unix.CLOCK_MONOTONIC)
		if d := m2 - m1; d >= 0 && (best < 0 || d < best) {
			best, off = d, rt-(m1+d/2)
		}
	}
	c.offset.Store(off)
	c.next.Store(clockNanos(unix.CLOCK_MONOTONIC) + 5e9)
}

// WallNanos implements event.Clock.
func (c *monoClock) WallNanos(t int64) int64 {
	if clockNanos(unix.CLOCK_MONOTONIC) >= c.next.Load() {
		c.sample()
	}
	return t + c.offset.Load()
}

func clockNanos(id int32) int64 {
	var ts unix.Timespec
	_ = unix.ClockGettime(id, &ts)
	return ts.Nano()
}
