// The enrich stage in a real pipeline (replayed tracefs lines, 6.17 drm_sched format): the
// pipeline holds jobs through Hold, a held job goes out in the spans with its process's
// TRACEPARENT once the read lands, everything held goes out at the end of input, and the
// metrics carry ghostdriver.context.held_jobs. Fake procfs with gated reads (hold_test.go).
package enrich

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/ghostdriver/ghostdriver/internal/metadata"
	"github.com/ghostdriver/ghostdriver/internal/pipeline"
	"github.com/ghostdriver/ghostdriver/internal/replay"
)

// capture: n jobs of process slowPID (tracefs lines with the tgid column) (queue, run, done on fence context 4), gap µs apart.
func capture(n int, gap int64) []byte {
	var b bytes.Buffer
	b.WriteString("# tracer: nop\n#\n")
	stamp := func(us int64) string { return fmt.Sprintf("%d.%06d", us/1e6, us%1e6) }
	for i := 0; i < n; i++ {
		t := 100_000_000 + int64(i)*gap
		fmt.Fprintf(&b, "%16s-%-7d (%7d) [001] .....  %s: drm_sched_job_queue: dev=vgpu, fence=4:%d, ring=vgpu-ring0, job count:0, hw job count:0, client_id:1\n", "trainer", slowPID, slowPID, stamp(t), i+1)
		fmt.Fprintf(&b, "    kworker/u8:1-29      (     29) [002] .....  %s: drm_sched_job_run: dev=vgpu, fence=4:%d, ring=vgpu-ring0, job count:0, hw job count:1, client_id:1\n", stamp(t+20), i+1)
		fmt.Fprintf(&b, "          <idle>-0       (-------) [000] d.h1.  %s: drm_sched_job_done: fence=4:%d signaled\n", stamp(t+120), i+1)
	}
	return b.Bytes()
}

// runPipeline replays data at speed through a pipeline with enricher e; opened (when not
// nil) is called once a job is held.
func runPipeline(t *testing.T, e *Enricher, data []byte, speed float64, opened func()) (ptrace.Traces, pmetric.Metrics) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "capture")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := replay.New(replay.Config{Path: path, Speed: speed, HasEpoch: true, Epoch: 1_700_000_000_000_000_000})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	traces, metrics := ptrace.NewTraces(), pmetric.NewMetrics()
	out := pipeline.Outputs{
		Traces: func(_ context.Context, td ptrace.Traces) error {
			mu.Lock()
			td.ResourceSpans().MoveAndAppendTo(traces.ResourceSpans())
			mu.Unlock()
			return nil
		},
		Metrics: func(_ context.Context, md pmetric.Metrics) error {
			mu.Lock()
			metrics = md // cumulative: the last collection has everything
			mu.Unlock()
			return nil
		},
	}
	p := pipeline.New(pipeline.Config{Enricher: e, Metrics: metadata.DefaultMetricsConfig(), FlushInterval: 10 * time.Millisecond, CollectionInterval: time.Hour}, src, out, nil)
	if opened != nil {
		go func() {
			for e.HeldJobs() == 0 {
				time.Sleep(time.Millisecond)
			}
			opened()
		}()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := p.Run(ctx); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	return traces, metrics
}

// jobSpans returns the gpu.job spans with their resource's service.name.
func jobSpans(td ptrace.Traces) (spans []ptrace.Span, services []string) {
	for i := 0; i < td.ResourceSpans().Len(); i++ {
		rs := td.ResourceSpans().At(i)
		svc, _ := rs.Resource().Attributes().Get("service.name")
		for k := 0; k < rs.ScopeSpans().Len(); k++ {
			ss := rs.ScopeSpans().At(k).Spans()
			for m := 0; m < ss.Len(); m++ {
				if ss.At(m).Name() == "gpu.job" {
					spans, services = append(spans, ss.At(m)), append(services, svc.AsString())
				}
			}
		}
	}
	return spans, services
}

// heldMetric returns ghostdriver.context.held_jobs by outcome.
func heldMetric(md pmetric.Metrics) map[string]int64 {
	out := map[string]int64{}
	rms := md.ResourceMetrics()
	for i := 0; i < rms.Len(); i++ {
		sms := rms.At(i).ScopeMetrics()
		for k := 0; k < sms.Len(); k++ {
			ms := sms.At(k).Metrics()
			for m := 0; m < ms.Len(); m++ {
				if ms.At(m).Name() != metadata.MetricContextHeldJobs {
					continue
				}
				dps := ms.At(m).Sum().DataPoints()
				for d := 0; d < dps.Len(); d++ {
					o, _ := dps.At(d).Attributes().Get(metadata.AttrHoldOutcome)
					out[o.AsString()] = dps.At(d).IntValue()
				}
			}
		}
	}
	return out
}

func TestPipelineHoldsJobsForTheRead(t *testing.T) {
	e, _, open := slowEnricher(t, Config{MaxWait: 10 * time.Second})
	// 20 jobs 20 ms apart in real time: the read lands while the source still runs.
	td, md := runPipeline(t, e, capture(20, 20_000), 1, open)
	spans, services := jobSpans(td)
	if len(spans) != 20 {
		t.Fatalf("%d gpu.job spans, want 20", len(spans))
	}
	trace := traceparentTraceID(t)
	for i, sp := range spans {
		if [16]byte(sp.TraceID()) != trace || services[i] != "trainer-svc" {
			t.Errorf("job span %d: trace %x, service %q; want the process's TRACEPARENT %x and trainer-svc", i, [16]byte(sp.TraceID()), services[i], trace)
		}
	}
	got := heldMetric(md)
	if got["read_landed"] == 0 || got["max_wait"] != 0 || got["max_held"] != 0 || got["shutdown"] != 0 {
		t.Errorf("held_jobs by outcome %v: want only read_landed", got)
	}
}

func TestPipelineReleasesHeldJobsAtEnd(t *testing.T) {
	e, _, _ := slowEnricher(t, Config{MaxWait: 10 * time.Second}) // the read never lands
	td, md := runPipeline(t, e, capture(50, 200), 0, nil)
	if spans, _ := jobSpans(td); len(spans) != 50 {
		t.Fatalf("%d gpu.job spans, want 50: held jobs lost at the end of input", len(spans))
	}
	if got := heldMetric(md); got["shutdown"] != 50 {
		t.Errorf("held_jobs by outcome %v, want 50 shutdown", got)
	}
}
