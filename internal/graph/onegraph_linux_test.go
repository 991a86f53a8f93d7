// The single graph: one pipeline built by Open carries a replayed DRM capture and the
// live CUDA source (the stub libraries) at the same time, into one Traces output and one
// Metrics stream.
package graph

import (
	"bufio"
	"context"
	"os"
	"regexp"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/ghostdriver/ghostdriver/internal/assemble"
	"github.com/ghostdriver/ghostdriver/internal/cuda/cudatest"
	"github.com/ghostdriver/ghostdriver/internal/emit"
	"github.com/ghostdriver/ghostdriver/internal/metadata"
	"github.com/ghostdriver/ghostdriver/internal/pipeline"
	"github.com/ghostdriver/ghostdriver/internal/replay"
)

const oneGraphCapture = "../../testdata/captures/gpuvis_amdgpu_4.11_gpu_only.trace-cmd-report.txt"

// distinctSchedJobs reads the capture a second way, without the ftrace decoder or the
// assembler: every amdgpu job is named by its sched_job pointer in the amdgpu_cs_ioctl
// (submission) and amdgpu_sched_run_job (run) lines, and each distinct one is one job.
func distinctSchedJobs(t *testing.T, path string) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	re := regexp.MustCompile(`amdgpu_(cs_ioctl|sched_run_job):\s+sched_job=(\d+)`)
	jobs := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m := re.FindStringSubmatch(sc.Text()); m != nil {
			jobs[m[2]] = true
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return len(jobs)
}

// recorder keeps every call of the outputs.
type recorder struct {
	mu      sync.Mutex
	traces  []ptrace.Traces
	metrics []pmetric.Metrics
}

func (r *recorder) outputs() pipeline.Outputs {
	return pipeline.Outputs{
		Traces: func(_ context.Context, td ptrace.Traces) error {
			r.mu.Lock()
			r.traces = append(r.traces, td)
			r.mu.Unlock()
			return nil
		},
		Metrics: func(_ context.Context, md pmetric.Metrics) error {
			r.mu.Lock()
			r.metrics = append(r.metrics, md)
			r.mu.Unlock()
			return nil
		},
	}
}

// sumOf is the sum of metric name's data points in md (-1: md has no such metric).
func sumOf(md pmetric.Metrics, name string) int64 {
	total := int64(-1)
	for i := 0; i < md.ResourceMetrics().Len(); i++ {
		sms := md.ResourceMetrics().At(i).ScopeMetrics()
		for j := 0; j < sms.Len(); j++ {
			ms := sms.At(j).Metrics()
			for k := 0; k < ms.Len(); k++ {
				if ms.At(k).Name() != name {
					continue
				}
				if total < 0 {
					total = 0
				}
				dps := ms.At(k).Sum().DataPoints()
				for n := 0; n < dps.Len(); n++ {
					total += dps.At(n).IntValue()
				}
			}
		}
	}
	return total
}

func TestOneGraphCarriesDRMAndCUDA(t *testing.T) {
	cudatest.Need(t)
	wantJobs := distinctSchedJobs(t, oneGraphCapture)
	if wantJobs < 100 {
		t.Fatalf("the capture names %d jobs: not the capture this test expects", wantJobs)
	}
	stubs := cudatest.Build(t)

	rc := replay.Config{Path: oneGraphCapture}
	g, err := Open(Spec{
		Replay: &rc,
		CUDA:   &CUDASpec{Libraries: stubs.Libraries()},
		Pipeline: pipeline.Config{
			Assemble:      assemble.DefaultConfig(),
			Metrics:       metadata.DefaultMetricsConfig(),
			FlushInterval: 10 * time.Millisecond,
		},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if !g.HasDRM() || !g.HasCUDA() {
		t.Fatalf("graph branches: DRM %v, CUDA %v; want both", g.HasDRM(), g.HasCUDA())
	}
	rec := &recorder{}
	p := g.Pipeline(rec.outputs(), nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()

	const threads, iters = 2, 30
	pid := cudatest.Run(t, stubs.App, iters, nil, nil, func(uint32) {
		cudatest.WaitFor(t, "entry points hooked", func() bool { return g.CUDASource().Stats().EntryPointHooks >= 2 })
	})
	// The workload has exited: its records are all in the ring, which the source reads to
	// its end before Run returns.
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	st := p.Stats()
	if !st.DRM || st.CUDA == nil {
		t.Fatalf("one pipeline's stats: DRM %v, CUDA %v; want both branches", st.DRM, st.CUDA)
	}
	jobIDs := map[pcommon.SpanID]bool{}
	launches, allLaunches := 0, 0
	for _, td := range rec.traces {
		for i := 0; i < td.ResourceSpans().Len(); i++ {
			rs := td.ResourceSpans().At(i)
			pidAttr, _ := rs.Resource().Attributes().Get("process.pid")
			for j := 0; j < rs.ScopeSpans().Len(); j++ {
				spans := rs.ScopeSpans().At(j).Spans()
				for k := 0; k < spans.Len(); k++ {
					switch sp := spans.At(k); sp.Name() {
					case emit.JobSpanName:
						if jobIDs[sp.SpanID()] {
							t.Errorf("gpu.job span id %s twice", sp.SpanID())
						}
						jobIDs[sp.SpanID()] = true
					case metadata.SpanCUDALaunch:
						allLaunches++
						if pidAttr.Int() == int64(pid) {
							launches++
						}
					}
				}
			}
		}
	}
	// Every job the capture names is one gpu.job span (complete or not).
	if len(jobIDs) != wantJobs {
		t.Errorf("gpu.job spans = %d, want %d (distinct sched_job in the capture)", len(jobIDs), wantJobs)
	}
	// The stub app's launches (testdata/stub/app.c): per thread, iters × (3 runtime + 1
	// driver launch) + 1.
	wantLaunches := threads * (iters*4 + 1)
	if launches != wantLaunches {
		t.Errorf("cuda.launch spans of the workload = %d, want %d", launches, wantLaunches)
	}
	// One metrics stream: the final collection is one Metrics holding both kinds.
	if len(rec.metrics) == 0 {
		t.Fatal("no metrics exported")
	}
	last := rec.metrics[len(rec.metrics)-1]
	if n := sumOf(last, metadata.MetricJobs); n != int64(wantJobs) {
		t.Errorf("final collection: %s = %d, want %d", metadata.MetricJobs, n, wantJobs)
	}
	// The source follows every process that maps a CUDA library (its /proc scan), so other
	// test binaries' stub apps running at the same time (go test runs packages in
	// parallel) are counted too: the metric must equal every cuda.launch span this
	// pipeline emitted, of which the workload's are exactly wantLaunches (above).
	if n := sumOf(last, metadata.MetricCUDALaunches); n != int64(allLaunches) || n < int64(wantLaunches) {
		t.Errorf("final collection: %s = %d, want the %d cuda.launch spans emitted (≥ the workload's %d), in the same Metrics as the jobs", metadata.MetricCUDALaunches, n, allLaunches, wantLaunches)
	}
}
