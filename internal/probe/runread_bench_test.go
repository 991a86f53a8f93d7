//go:build linux

// The events mode's reader per record, without the kernel (BENCHMARKS.md, the live reader).

package probe

import (
	"context"
	"math"
	"testing"

	"go.uber.org/zap"

	"github.com/ghostdriver/ghostdriver/internal/event"
	"github.com/ghostdriver/ghostdriver/internal/kclock"
)

// BenchmarkRunReadsRing is the events mode's reader alone, per record: Live.Run's poll
// over a generated ring (ringgen_bench_test.go) holding 1024 jobs' records (12 288, twelve
// full batches), decoded and handed to a sink that only counts them. No kernel, no
// pipeline: the poll loop, the in-place read and the decoding (BENCHMARKS.md, the live
// reader).
func BenchmarkRunReadsRing(b *testing.B) {
	cfg, err := DefaultConfig().withDefaults()
	if err != nil {
		b.Fatal(err)
	}
	cfg.IRQRefreshInterval = 0
	const jobs = 1024
	ring := newGenRing(cfg.RingBufferBytes)
	g := newJobGen()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		ring.prod.Store(0)
		ring.cons.Store(0)
		ring.next = 0
		t0 := uint64(kclock.MonoNow())
		for n := uint64(0); n < jobs; n++ {
			g.job(n, t0+n*1000)
		}
		g.flush(ring, math.MaxUint64)
		l := &Live{cfg: cfg, log: zap.NewNop(), rd: ring}
		l.stats.Unknown = map[string]uint64{}
		ctx, cancel := context.WithCancel(context.Background())
		sink := &countSink{want: jobs * genRecordsPerJob, done: cancel}
		b.StartTimer()
		if err := l.Run(ctx, sink); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		cancel()
		if sink.n != jobs*genRecordsPerJob {
			b.Fatalf("%d records read, want %d", sink.n, jobs*genRecordsPerJob)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*jobs*genRecordsPerJob), "ns/record")
}

// countSink counts events and calls done once it has want.
type countSink struct {
	n, want int
	done    func()
}

func (s *countSink) Consume(batch []event.Event) {
	s.n += len(batch)
	if s.n >= s.want {
		s.done()
	}
}
func (s *countSink) Watermark(int64) {}
