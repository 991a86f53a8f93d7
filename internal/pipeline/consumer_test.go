// A failing or blocked next consumer never stalls the reader: events keep being consumed
// and assembled, and what cannot be exported is counted.
package pipeline

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/ghostdriver/ghostdriver/internal/replay"
)

const floodJobs = 20_000

func floodCapture(t *testing.T) string {
	t.Helper()
	var ls []line
	ls = append(ls, jobs(floodJobs, 4, 1, "app", 234, base)...)
	path := filepath.Join(t.TempDir(), "capture")
	if err := os.WriteFile(path, render(ls), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func startPipeline(t *testing.T, path string, cfg Config, out Outputs) (*Pipeline, chan error) {
	t.Helper()
	src, err := replay.New(replay.Config{Path: path, HasEpoch: true})
	if err != nil {
		t.Fatal(err)
	}
	p := New(cfg, src, out, nil)
	errc := make(chan error, 1)
	go func() { errc <- p.Run(context.Background()) }()
	return p, errc
}

func TestFailingConsumerCounted(t *testing.T) {
	refused := errors.New("exporter queue is full")
	out := Outputs{
		Traces:  func(context.Context, ptrace.Traces) error { return refused },
		Metrics: func(context.Context, pmetric.Metrics) error { return refused },
	}
	p, errc := startPipeline(t, floodCapture(t), Config{FlushInterval: time.Millisecond, CollectionInterval: time.Millisecond}, out)
	select {
	case err := <-errc:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the pipeline stalled behind a failing consumer")
	}
	st := p.Stats()
	if st.Assembler.Completed != floodJobs || st.ExportErrors == 0 {
		t.Fatalf("completed %d of %d, export errors %d", st.Assembler.Completed, floodJobs, st.ExportErrors)
	}
}

func TestBlockedConsumerDoesNotStallReader(t *testing.T) {
	release := make(chan struct{})
	var exported, calls atomic.Int64
	out := Outputs{
		Traces: func(_ context.Context, td ptrace.Traces) error {
			calls.Add(1)
			<-release // the next consumer hangs (a stuck exporter without a timeout)
			exported.Add(int64(jobSpans(td)))
			return nil
		},
	}
	p, errc := startPipeline(t, floodCapture(t), Config{FlushInterval: time.Millisecond, MaxBufferedJobs: 512}, out)
	// While the consumer is blocked, the source reads the whole capture and the
	// assembler completes every job; the span buffer stays at its cap and drops count.
	deadline := time.Now().Add(60 * time.Second)
	for p.Stats().Assembler.Completed != floodJobs {
		if time.Now().After(deadline) {
			t.Fatalf("reader stalled behind a blocked consumer: %+v", p.Stats().Assembler)
		}
		time.Sleep(5 * time.Millisecond)
	}
	st := p.Stats()
	if calls.Load() != 1 || st.DroppedJobs == 0 {
		t.Errorf("while blocked: %d export calls, %d spans dropped", calls.Load(), st.DroppedJobs)
	}
	close(release)
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	st = p.Stats()
	if got := uint64(exported.Load()) + st.DroppedJobs; got != floodJobs {
		t.Errorf("exported %d + dropped %d = %d, want %d: a job vanished", exported.Load(), st.DroppedJobs, got, floodJobs)
	}
}
