//go:build unix

// User-space throughput of the whole receiver path on large generated captures:
// replay (read + ftrace decode) → assemble → emit (span pdata + metrics), as fast as
// possible. Reports events per CPU-second of the process (= events/s per core: the
// pipeline runs the source and a flusher goroutine), wall events/s, allocations and
// bytes per event, jobs per CPU-second. BENCHMARKS.md, step 4.
//
//	GHOSTDRIVER_BENCH_CAPTURES=a.txt,b.txt go test -run '^$' -bench ReplayPipeline ./bench/
//
// Without the variable, 4.11- and 6.17-style captures of 50 000 jobs are generated.
package bench

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/ghostdriver/ghostdriver/internal/assemble"
	"github.com/ghostdriver/ghostdriver/internal/emit"
	"github.com/ghostdriver/ghostdriver/internal/metadata"
	"github.com/ghostdriver/ghostdriver/internal/pipeline"
	"github.com/ghostdriver/ghostdriver/internal/replay"
	"github.com/ghostdriver/ghostdriver/internal/testcapture"
)

func benchCaptures(b *testing.B) []string {
	if env := os.Getenv("GHOSTDRIVER_BENCH_CAPTURES"); env != "" {
		return strings.Split(env, ",")
	}
	dir := b.TempDir()
	var paths []string
	for _, s := range []string{"4.11", "6.17"} {
		p := filepath.Join(dir, "gen-"+s+".txt")
		f, err := os.Create(p)
		if err != nil {
			b.Fatal(err)
		}
		if err := testcapture.Write(f, testcapture.Options{Style: s, Jobs: 50_000, Rings: 4, Procs: 8}); err != nil {
			b.Fatal(err)
		}
		f.Close()
		paths = append(paths, p)
	}
	return paths
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkReplayPipeline runs each capture with the defaults, then with stage_spans off
// (sub-benchmark "<capture>-no-stage-spans": one span per job; not the default, so the
// report keeps it out of the target's verdict and the CPU model).
func BenchmarkReplayPipeline(b *testing.B) {
	for _, path := range benchCaptures(b) {
		name := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
		b.Run(name, func(b *testing.B) { benchReplay(b, path, true) })
		b.Run(name+"-no-stage-spans", func(b *testing.B) { benchReplay(b, path, false) })
	}
}

func benchReplay(b *testing.B, path string, stageSpans bool) {
	var events, spans, jobs, dropped uint64
	var cpu time.Duration
	var ms0, ms1 runtime.MemStats
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		src, err := replay.New(replay.Config{Path: path, Epoch: 1})
		if err != nil {
			b.Fatal(err)
		}
		p := pipeline.New(pipeline.Config{
			Assemble:        assemble.DefaultConfig(),
			Metrics:         metadata.DefaultMetricsConfig(),
			FlushInterval:   50 * time.Millisecond,
			MaxBufferedJobs: 1 << 18,
			SpanOptions:     []emit.SpanOption{emit.WithStageSpans(stageSpans)},
		}, src, pipeline.Outputs{Traces: func(_ context.Context, td ptrace.Traces) error {
			spans += uint64(td.SpanCount())
			return nil
		}}, nil)
		runtime.GC()
		runtime.ReadMemStats(&ms0)
		c0 := cpuTime()
		b.StartTimer()
		if err := p.Run(context.Background()); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		cpu += cpuTime() - c0
		runtime.ReadMemStats(&ms1)
		st := p.Stats()
		for _, n := range st.Source.Events {
			events += n
		}
		jobs += st.Assembler.Completed + st.Assembler.Incomplete
		dropped += st.DroppedJobs
		b.ReportMetric(float64(ms1.Mallocs-ms0.Mallocs)/float64(max(1, sumEvents(st))), "allocs/event")
		b.ReportMetric(float64(ms1.TotalAlloc-ms0.TotalAlloc)/float64(max(1, sumEvents(st))), "B/event")
		b.StartTimer()
	}
	b.StopTimer()
	if dropped > 0 {
		b.Errorf("%d jobs dropped from the span buffer: the numbers exclude their spans", dropped)
	}
	b.ReportMetric(float64(events)/cpu.Seconds(), "events/cpu-s")
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(jobs)/cpu.Seconds(), "jobs/cpu-s")
	b.ReportMetric(cpu.Seconds()/b.Elapsed().Seconds(), "cores")
	b.ReportMetric(float64(spans)/float64(b.N), "spans/op")
}

func sumEvents(st pipeline.Stats) uint64 {
	var n uint64
	for _, v := range st.Source.Events {
		n += v
	}
	return n
}
