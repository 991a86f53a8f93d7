// The CUDA branch end to end on the stub libraries of internal/cuda (testdata/stub, built
// by internal/cuda/cudatest): a two-thread app → uprobes → assembler → cudaspans → the
// pipeline's outputs (the CUDA branch alone). Needs root (uprobes, BPF) and gcc; skips
// with the reason otherwise.
package pipeline

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/ghostdriver/ghostdriver/internal/cuda"
	"github.com/ghostdriver/ghostdriver/internal/cuda/cudatest"
	"github.com/ghostdriver/ghostdriver/internal/emit/cudaspans"
	"github.com/ghostdriver/ghostdriver/internal/event"
	"github.com/ghostdriver/ghostdriver/internal/metadata"
)

// onePID passes only one process's calls to the pipeline: the uprobes are system-wide and
// other packages' tests run stub workloads at the same time.
type onePID struct {
	src *cuda.Source
	pid atomic.Uint32
}

func (o *onePID) Run(ctx context.Context, sink cuda.Sink) error {
	return o.src.Run(ctx, &onePIDSink{Sink: sink, o: o})
}

type onePIDSink struct {
	cuda.Sink
	o    *onePID
	keep []cuda.Call
}

func (s *onePIDSink) Calls(batch []cuda.Call) {
	s.keep = s.keep[:0]
	for _, c := range batch {
		if c.PID == s.o.pid.Load() {
			s.keep = append(s.keep, c)
		}
	}
	s.Sink.Calls(s.keep)
}

// traceSink keeps what the runner exported.
type traceSink struct {
	mu      sync.Mutex
	traces  []ptrace.Traces
	metrics []pmetric.Metrics
}

func (s *traceSink) outputs() Outputs {
	return Outputs{
		Traces: func(_ context.Context, td ptrace.Traces) error {
			s.mu.Lock()
			s.traces = append(s.traces, td)
			s.mu.Unlock()
			return nil
		},
		Metrics: func(_ context.Context, md pmetric.Metrics) error {
			s.mu.Lock()
			s.metrics = append(s.metrics, md)
			s.mu.Unlock()
			return nil
		},
	}
}

func spansOf(tds []ptrace.Traces) []ptrace.Span {
	var out []ptrace.Span
	for _, td := range tds {
		for i := 0; i < td.ResourceSpans().Len(); i++ {
			ss := td.ResourceSpans().At(i).ScopeSpans()
			for k := 0; k < ss.Len(); k++ {
				for n := 0; n < ss.At(k).Spans().Len(); n++ {
					out = append(out, ss.At(k).Spans().At(n))
				}
			}
		}
	}
	return out
}

// TestCUDAStubSpans: every launch the app made is one cuda.launch span, every
// synchronized submission has exactly one cuda.sync child, ids are unique, parents exist,
// and rendering the same submissions again gives the same ids.
func TestCUDAStubSpans(t *testing.T) {
	cudatest.Need(t)
	const threads, iters = 2, 50
	stubs := cudatest.Build(t)

	// Only this test's stub files are hooked (discovery from /proc/*/maps is internal/cuda's
	// test): uprobes are system-wide per file, and another package's stub workload running
	// at the same time (internal/cuda's flood) would otherwise share this source's ring.
	src, rep, err := cuda.Open(cuda.Config{RescanInterval: -1, ExtraLibraries: stubs.Libraries()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	t.Logf("report at open: %s", rep.Summary())
	filtered := &onePID{src: src}

	clock := event.OffsetClock{Offset: 1_700_000_000_000_000_000}
	const salt = 0x5eed
	var subs []*cuda.Submission
	sink := &traceSink{}
	runner := New(Config{Metrics: metadata.DefaultMetricsConfig(), FlushInterval: 10 * time.Millisecond}, nil, sink.outputs(), nil)
	runner.AddCUDA(CUDAConfig{
		Options:      []cudaspans.Option{cudaspans.WithIDSalt(salt)},
		Clock:        clock,
		OnSubmission: func(s *cuda.Submission) { subs = append(subs, s) },
	}, filtered)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- runner.Run(ctx) }()

	cudatest.Run(t, stubs.App, iters, nil, func(pid uint32) {
		filtered.pid.Store(pid)
		cudatest.WaitFor(t, "both stub libraries hooked", func() bool { return src.Stats().Libraries >= 2 })
	}, func(uint32) {
		cudatest.WaitFor(t, "entry points hooked", func() bool { return src.Stats().EntryPointHooks >= 2 })
	})
	// No wait for the reader: the workload has exited, so every record it made is in the
	// ring, and the source reads the ring to its end before Run returns.
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	spans := spansOf(sink.traces)
	byName := map[string]int{}
	ids := map[pcommon.SpanID]ptrace.Span{}
	for _, sp := range spans {
		byName[sp.Name()]++
		if _, dup := ids[sp.SpanID()]; dup {
			t.Errorf("span id %s twice", sp.SpanID())
		}
		ids[sp.SpanID()] = sp
	}
	t.Logf("spans by name: %v (%d submissions)", byName, len(subs))

	// 2 threads × (50 × (3 runtime + 1 driver launch) + 1): the driver launches the
	// runtime makes inside cudaLaunchKernel are attributes (inner_api), not spans.
	if want := threads * (iters*4 + 1); byName[metadata.SpanCUDALaunch] != want {
		t.Errorf("cuda.launch spans = %d, want %d (the launches the app made)", byName[metadata.SpanCUDALaunch], want)
	}
	if want := threads*(iters+1) + 1; byName[metadata.SpanCUDASync] != want {
		t.Errorf("cuda.sync spans = %d, want %d", byName[metadata.SpanCUDASync], want)
	}
	syncChildren := map[pcommon.SpanID]int{}
	for _, sp := range spans {
		if sp.Name() == metadata.SpanCUDASubmission {
			if !sp.ParentSpanID().IsEmpty() {
				t.Errorf("cuda.submission has a parent")
			}
			continue
		}
		parent, ok := ids[sp.ParentSpanID()]
		if !ok || parent.Name() != metadata.SpanCUDASubmission || parent.TraceID() != sp.TraceID() {
			t.Errorf("%s span without its cuda.submission parent", sp.Name())
		}
		if sp.Name() == metadata.SpanCUDASync {
			syncChildren[sp.ParentSpanID()]++
		}
	}
	synced := 0
	for _, sp := range spans {
		if sp.Name() != metadata.SpanCUDASubmission {
			continue
		}
		outcome, _ := sp.Attributes().Get(metadata.AttrCUDASubmissionOutcome)
		want := 0
		if outcome.Str() == cuda.Synced.String() {
			want = 1
			synced++
		}
		if syncChildren[sp.SpanID()] != want {
			t.Errorf("%s submission with %d cuda.sync children", outcome.Str(), syncChildren[sp.SpanID()])
		}
	}
	if want := threads*(iters+1) + 1; synced != want {
		t.Errorf("synchronized submissions = %d, want %d", synced, want)
	}

	// Same submissions, fresh builder: same ids, in the same order.
	b := cudaspans.NewBuilder(clock, cudaspans.WithIDSalt(salt))
	for _, s := range subs {
		b.Append(s)
	}
	again := spansOf([]ptrace.Traces{b.Take()})
	if len(again) != len(spans) {
		t.Fatalf("re-rendered %d spans, exported %d", len(again), len(spans))
	}
	for _, sp := range again {
		if got, ok := ids[sp.SpanID()]; !ok || got.TraceID() != sp.TraceID() || got.Name() != sp.Name() {
			t.Fatalf("re-rendered %s span %s not among the exported ones", sp.Name(), sp.SpanID())
		}
	}

	// The final collection counts every launch once.
	var launches int64 = -1
	for _, md := range sink.metrics {
		for i := 0; i < md.ResourceMetrics().Len(); i++ {
			ms := md.ResourceMetrics().At(i).ScopeMetrics().At(0).Metrics()
			for k := 0; k < ms.Len(); k++ {
				if ms.At(k).Name() == metadata.MetricCUDALaunches {
					launches = 0
					dps := ms.At(k).Sum().DataPoints()
					for n := 0; n < dps.Len(); n++ {
						launches += dps.At(n).IntValue()
					}
				}
			}
		}
	}
	if want := int64(threads * (iters*4 + 1)); launches != want {
		t.Errorf("ghostdriver.cuda.launches = %d, want %d", launches, want)
	}
}
