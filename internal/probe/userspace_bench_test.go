//go:build linux

// User space a job without span output, in process (BENCHMARKS.md, "User space a job
// without span output"): what TestRingGeneratorLoss's "none" row measures over 60 s, without
// the wall clock, the pacing or the generator's thread.

package probe

import (
	"context"
	"math"
	"runtime"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/ghostdriver/ghostdriver/internal/assemble"
	"github.com/ghostdriver/ghostdriver/internal/event"
	"github.com/ghostdriver/ghostdriver/internal/kclock"
	"github.com/ghostdriver/ghostdriver/internal/metadata"
	"github.com/ghostdriver/ghostdriver/internal/pipeline"
)

// BenchmarkUserSpaceNoSpans is the events mode's user space a job with no span output:
// Live.Run's poll over a generated ring (ringgen_bench_test.go) holding 4096 jobs' 12
// records each, decoded and handed to the real pipeline (reorder, assembly, metrics), as in
// TestRingGeneratorLoss with GHOSTDRIVER_RINGGEN_SPANS=none. One Live and one pipeline for
// the whole run, so that the assembler and the metrics are in their steady state; each
// iteration refills the ring (outside the timer) with the next 4096 jobs, stamped 10 µs
// apart (100 000 jobs/s, in the records' own time, which runs on from one iteration to the
// next), and the pipeline gets a watermark after every 1024 jobs' records, at the last
// record's stamp: what a poll every 10 ms at that rate gives it, so that the reorder window
// holds what it holds in TestRingGeneratorLoss. Reported: ns/job (wall, one goroutine), cpu-ns/job (the process's
// CPU, the garbage collector's workers included) and allocs/job.
func BenchmarkUserSpaceNoSpans(b *testing.B) {
	cfg, err := DefaultConfig().withDefaults()
	if err != nil {
		b.Fatal(err)
	}
	cfg.IRQRefreshInterval = 0
	const jobs = 4096
	const step = uint64(10 * time.Microsecond)
	ring := newGenRing(cfg.RingBufferBytes)
	l := &Live{cfg: cfg, log: zap.NewNop(), rd: ring}
	l.stats.Unknown = map[string]uint64{}
	off, _ := kclock.SampleOffset()
	l.offset.Store(off)
	p := pipeline.New(pipeline.Config{Assemble: assemble.DefaultConfig(), Metrics: metadata.DefaultMetricsConfig()},
		genSource{l, ring}, pipeline.Outputs{}, nil)
	g := newJobGen()
	var n uint64                     // jobs generated
	next := uint64(kclock.MonoNow()) // the next job's stamp
	var mallocs uint64
	var cpu time.Duration
	var ms runtime.MemStats
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		ring.prod.Store(0)
		ring.cons.Store(0)
		ring.next = 0
		t0 := next
		for k := uint64(0); k < jobs; k++ {
			g.job(n+k, t0+k*step)
		}
		n += jobs
		next = t0 + jobs*step
		g.flush(ring, math.MaxUint64)
		if ring.lost.Load() != 0 {
			b.Fatalf("%d records did not fit the ring", ring.lost.Load())
		}
		ctx, cancel := context.WithCancel(context.Background())
		sink := &markSink{p: p, want: jobs * genRecordsPerJob, done: cancel}
		runtime.ReadMemStats(&ms)
		m0, c0 := ms.Mallocs, rusageCPU()
		b.StartTimer()
		if err := l.Run(ctx, sink); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		cpu += rusageCPU() - c0
		runtime.ReadMemStats(&ms)
		mallocs += ms.Mallocs - m0
		cancel()
		if sink.n != jobs*genRecordsPerJob {
			b.Fatalf("%d records read, want %d", sink.n, jobs*genRecordsPerJob)
		}
		b.StartTimer()
	}
	b.StopTimer()
	total := float64(b.N * jobs)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/total, "ns/job")
	b.ReportMetric(float64(cpu.Nanoseconds())/total, "cpu-ns/job")
	b.ReportMetric(float64(mallocs)/total, "allocs/job")
	b.ReportMetric(0, "ns/op")
	// Every job before the last window's was assembled whole.
	if st := p.Stats().Assembler; b.N > 2 && st.Completed < n-2*jobs {
		b.Fatalf("%d jobs completed of %d generated", st.Completed, n)
	}
}

// markSink hands the records to the pipeline, gives it a watermark at the last record's
// stamp after every markEvery records (the records' clock is the pipeline's), and ends
// the run once it has want.
type markSink struct {
	p       *pipeline.Pipeline
	n, want int
	done    func()
}

const markEvery = 1024 * genRecordsPerJob

func (s *markSink) Consume(batch []event.Event) {
	s.p.Consume(batch)
	s.n += len(batch)
	if s.n%markEvery == 0 {
		s.p.Watermark(batch[len(batch)-1].Time)
	}
	if s.n >= s.want {
		s.done()
	}
}
func (s *markSink) Watermark(t int64) { s.p.Watermark(t) }

func rusageCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
