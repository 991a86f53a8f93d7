// source: replay through a next consumer slower than the reader: every job arrives (the
// reader waits), nothing is logged as dropped.
package ghostdriverreceiver

import (
	"context"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/ghostdriver/ghostdriver/internal/metadata"
	"github.com/ghostdriver/ghostdriver/internal/pipeline"
	"github.com/ghostdriver/ghostdriver/internal/testcapture"
)

func TestReplaySlowConsumerGetsEveryJob(t *testing.T) {
	const jobs = 20_000
	path := filepath.Join(t.TempDir(), "capture.txt")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := testcapture.Write(f, testcapture.Options{Style: "6.17", Jobs: jobs, Rings: 4, Procs: 8}); err != nil {
		t.Fatal(err)
	}
	f.Close()

	cfg := NewFactory().CreateDefaultConfig().(*Config)
	cfg.Source = SourceReplay
	cfg.Replay.Path = path
	cfg.Replay.Epoch = "1700000000000000000"
	var jobSpans, maxBatch atomic.Int64
	// ≈ 50 µs per job: slower than the reader, which waits. Live, the reader would run
	// ahead and the span buffer hold up to 65 536 jobs (≈ 250 MB of pdata; beyond that,
	// drops: the old replay lost 34 % of 200 000 jobs that way); lossless, the next
	// consumer gets batches of at most pipeline.DefaultLosslessBatchJobs jobs.
	slow, err := consumer.NewTraces(func(_ context.Context, td ptrace.Traces) error {
		time.Sleep(time.Duration(td.SpanCount()) * 50 * time.Microsecond / 8)
		before := jobSpans.Load()
		defer func() {
			n := jobSpans.Load() - before
			for m := maxBatch.Load(); n > m && !maxBatch.CompareAndSwap(m, n); m = maxBatch.Load() {
			}
		}()
		for i := 0; i < td.ResourceSpans().Len(); i++ {
			ss := td.ResourceSpans().At(i).ScopeSpans()
			for j := 0; j < ss.Len(); j++ {
				for k := 0; k < ss.At(j).Spans().Len(); k++ {
					if ss.At(j).Spans().At(k).Name() == "gpu.job" {
						jobSpans.Add(1)
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	core, logs := observer.New(zapcore.InfoLevel)
	set := receivertest.NewNopSettings(metadata.Type)
	set.Logger = zap.New(core)
	r, err := NewFactory().CreateTraces(context.Background(), set, cfg, slow)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for logs.FilterMessageSnippet("end of capture").Len() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the replay did not finish")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := r.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := jobSpans.Load(); got != jobs {
		t.Errorf("%d gpu.job spans reached the next consumer, want %d", got, jobs)
	}
	if m := maxBatch.Load(); m > pipeline.DefaultLosslessBatchJobs {
		t.Errorf("a batch of %d jobs reached the next consumer: the reader ran ahead of it (bound %d)", m, pipeline.DefaultLosslessBatchJobs)
	}
	end := logs.FilterMessageSnippet("end of capture").All()[0].ContextMap()
	if end["job_spans_dropped"] != uint64(0) || end["jobs_completed"] != uint64(jobs) {
		t.Errorf("end of capture log: %v", end)
	}
	if n := logs.FilterLevelExact(zapcore.WarnLevel).Len(); n != 0 {
		t.Errorf("%d warnings: %v", n, logs.FilterLevelExact(zapcore.WarnLevel).All())
	}
}
