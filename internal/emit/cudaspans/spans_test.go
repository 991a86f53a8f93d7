package cudaspans

import (
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/ghostdriver/ghostdriver/internal/cuda"
	"github.com/ghostdriver/ghostdriver/internal/event"
	"github.com/ghostdriver/ghostdriver/internal/metadata"
	"github.com/ghostdriver/ghostdriver/internal/sample"
)

var clock = event.OffsetClock{Offset: 1_700_000_000_000_000_000}

func call(t *testing.T, name string, tid uint32, start, end int64) cuda.Call {
	t.Helper()
	for i, a := range cuda.APIs() {
		if a.Name == name {
			return cuda.Call{API: i, PID: 100, TID: tid, Start: start, End: end, Comm: "trainer"}
		}
	}
	t.Fatalf("no API %s", name)
	return cuda.Call{}
}

// A stream submission of two launches closed by a stream sync, with an Xid while open.
func submission(t *testing.T) *cuda.Submission {
	l1 := cuda.Op{Call: call(t, "cudaLaunchKernel", 101, 1000, 2000)}
	l1.Stream, l1.Handle = 7, 0xf0
	l2 := cuda.Op{Call: call(t, "cuLaunchKernel", 101, 2100, 2200)}
	l2.Stream = 7
	sync := cuda.Op{Call: call(t, "cudaStreamSynchronize", 101, 3000, 9000)}
	sync.Stream = 7
	return &cuda.Submission{PID: 100, Comm: "trainer", Stream: 7, Scope: cuda.ScopeStream, Ops: []cuda.Op{l1, l2},
		Launches: 2, Sync: &sync, Start: 1000, End: 9000, Outcome: cuda.Synced,
		Xids: []cuda.Xid{{Time: 5000, Code: 79, Msg: "GPU has fallen off the bus", Device: "0000:01:00.0"}}}
}

func spans(td ptrace.Traces) []ptrace.Span {
	var out []ptrace.Span
	ss := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	for i := 0; i < ss.Len(); i++ {
		out = append(out, ss.At(i))
	}
	return out
}

func TestSubmissionSpans(t *testing.T) {
	b := NewBuilder(clock, WithIDSalt(1))
	b.Append(submission(t))
	got := spans(b.Take())
	names := []string{metadata.SpanCUDASubmission, metadata.SpanCUDALaunch, metadata.SpanCUDALaunch, metadata.SpanCUDASync}
	if len(got) != len(names) {
		t.Fatalf("%d spans, want %d", len(got), len(names))
	}
	root := got[0]
	for i, sp := range got {
		if sp.Name() != names[i] {
			t.Errorf("span %d is %s, want %s", i, sp.Name(), names[i])
		}
		if i > 0 && (sp.ParentSpanID() != root.SpanID() || sp.TraceID() != root.TraceID()) {
			t.Errorf("%s is not a child of the submission", sp.Name())
		}
	}
	if root.StartTimestamp() != pcommon.Timestamp(clock.Offset+1000) || root.EndTimestamp() != pcommon.Timestamp(clock.Offset+9000) {
		t.Errorf("submission %v..%v", root.StartTimestamp(), root.EndTimestamp())
	}
	if root.Status().Code() != ptrace.StatusCodeError || root.Status().Message() != "Xid 79: GPU has fallen off the bus" {
		t.Errorf("status %v %q", root.Status().Code(), root.Status().Message())
	}
	ev := root.Events()
	if ev.Len() != 1 || ev.At(0).Name() != metadata.EventNvidiaXid || ev.At(0).Timestamp() != pcommon.Timestamp(clock.Offset+5000) {
		t.Fatalf("xid events %d", ev.Len())
	}
	if code, _ := ev.At(0).Attributes().Get(metadata.AttrNvidiaXidCode); code.Int() != 79 {
		t.Errorf("xid code %v", code.AsRaw())
	}
	a := root.Attributes().AsRaw()
	want := map[string]any{
		metadata.AttrProcessPID: int64(100), metadata.AttrThreadID: int64(101), metadata.AttrThreadName: "trainer",
		metadata.AttrCUDAStream: int64(7), metadata.AttrCUDASyncScope: "stream", metadata.AttrCUDASubmissionOutcome: "synchronized",
		metadata.AttrCUDALaunchCount: int64(2), metadata.AttrCUDAOpCount: int64(2),
		metadata.AttrContextTier: metadata.ContextTierNone,
	}
	for k, v := range want {
		if a[k] != v {
			t.Errorf("%s = %v, want %v", k, a[k], v)
		}
	}
	if len(a) != len(want) {
		t.Errorf("attributes %v", a)
	}
	if fn, _ := got[1].Attributes().Get(metadata.AttrCUDAFunction); fn.Int() != 0xf0 {
		t.Errorf("launch function %v", fn.AsRaw())
	}
}

// A submission with an application context is a child of that span, in its trace; the
// children follow it. Without one (or with zero ids) it is a root.
func TestSubmissionParentedToApplicationSpan(t *testing.T) {
	app := [16]byte{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36}
	parent := [8]byte{0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7}
	for _, tc := range []struct {
		name   string
		tier   uint8
		trace  [16]byte
		span   [8]byte
		linked bool
		want   string
	}{
		{"otep4947", 1, app, parent, true, metadata.ContextTierOTEP4947},
		{"obi", 2, app, parent, true, metadata.ContextTierOBI},
		{"traceparent", 3, app, parent, true, metadata.ContextTierTraceparent},
		{"none", 0, [16]byte{}, [8]byte{}, false, metadata.ContextTierNone},
		{"zero span id", 1, app, [8]byte{}, false, metadata.ContextTierNone},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := submission(t)
			s.CtxTier, s.TraceID, s.SpanID = tc.tier, tc.trace, tc.span
			b := NewBuilder(clock, WithIDSalt(1))
			b.Append(s)
			got := spans(b.Take())
			root := got[0]
			if tc.linked != (root.TraceID() == pcommon.TraceID(app) && root.ParentSpanID() == pcommon.SpanID(parent)) {
				t.Errorf("linked %v: trace %v parent %v", tc.linked, root.TraceID(), root.ParentSpanID())
			}
			if !tc.linked && !root.ParentSpanID().IsEmpty() {
				t.Errorf("root has parent %v", root.ParentSpanID())
			}
			if v, _ := root.Attributes().Get(metadata.AttrContextTier); v.Str() != tc.want {
				t.Errorf("tier %q, want %q", v.Str(), tc.want)
			}
			for _, c := range got[1:] {
				if c.TraceID() != root.TraceID() || c.ParentSpanID() != root.SpanID() {
					t.Errorf("%s not under the submission", c.Name())
				}
			}
		})
	}
}

func TestIDsAreDeterministicAndSalted(t *testing.T) {
	render := func(salt uint64) []ptrace.Span {
		b := NewBuilder(clock, WithIDSalt(salt))
		b.Append(submission(t))
		return spans(b.Take())
	}
	a, b, c := render(1), render(1), render(2)
	seen := map[pcommon.SpanID]bool{}
	for i := range a {
		if a[i].SpanID() != b[i].SpanID() || a[i].TraceID() != b[i].TraceID() {
			t.Errorf("span %d: ids differ between two renderings", i)
		}
		if a[i].SpanID() == c[i].SpanID() {
			t.Errorf("span %d: the salt does not change the id", i)
		}
		if seen[a[i].SpanID()] {
			t.Errorf("span %d: id repeated", i)
		}
		seen[a[i].SpanID()] = true
	}
}

// Unsynchronized work: no sync child, scope none, no thread; the resource learns the
// executable name only from the main thread.
func TestUnsynchronizedSubmission(t *testing.T) {
	op := cuda.Op{Call: call(t, "cudaLaunchKernel", 100, 10, 20)}
	s := &cuda.Submission{PID: 100, Stream: 3, Scope: cuda.ScopeStream, Ops: []cuda.Op{op}, Launches: 1,
		Start: 10, End: 20, Outcome: cuda.Unsynced}
	b := NewBuilder(clock, WithHostName("node"))
	b.Append(s)
	td := b.Take()
	got := spans(td)
	if len(got) != 2 || got[1].Name() != metadata.SpanCUDALaunch {
		t.Fatalf("%d spans", len(got))
	}
	a := got[0].Attributes()
	if v, _ := a.Get(metadata.AttrCUDASyncScope); v.Str() != metadata.CUDASyncScopeNone {
		t.Errorf("scope %q", v.Str())
	}
	if _, ok := a.Get(metadata.AttrThreadID); ok {
		t.Error("thread.id on an unsynchronized submission")
	}
	res := td.ResourceSpans().At(0).Resource().Attributes().AsRaw()
	if res[metadata.AttrServiceName] != "trainer" || res[metadata.AttrProcessExecutableName] != "trainer" || res[metadata.AttrHostName] != "node" {
		t.Errorf("resource %v", res)
	}
}

func TestRecorder(t *testing.T) {
	cfg := metadata.DefaultMetricsConfig()
	r := NewRecorder(cfg, time.Unix(0, 0), WithResourceFunc(func(pid uint32, m pcommon.Map) {
		m.PutStr(metadata.AttrServiceName, "training")
	}))
	s := submission(t)
	r.Record(s)
	r.Record(s)
	r.RecordXid(s.Xids[0])
	md := r.Collect(time.Unix(10, 0))
	got := map[string]pmetric.Metric{}
	ms := md.ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics()
	for i := 0; i < ms.Len(); i++ {
		got[ms.At(i).Name()] = ms.At(i)
	}
	if len(got) != 4 {
		t.Fatalf("metrics %v", got)
	}
	if dp := got[metadata.MetricCUDALaunches].Sum().DataPoints().At(0); dp.IntValue() != 4 ||
		dp.Attributes().AsRaw()[metadata.AttrServiceName] != "training" {
		t.Errorf("launches %d %v", dp.IntValue(), dp.Attributes().AsRaw())
	}
	if dp := got[metadata.MetricCUDASyncWait].Histogram().DataPoints().At(0); dp.Count() != 2 || dp.Sum() != 12e-6 {
		t.Errorf("sync wait count %d sum %v", dp.Count(), dp.Sum())
	}
	if dp := got[metadata.MetricNvidiaXid].Sum().DataPoints().At(0); dp.IntValue() != 1 {
		t.Errorf("xids %d", dp.IntValue())
	}
}

// The source's lost calls are reported by reason, zero included, and only when the
// recorder has a source to ask.
func TestRecorderLostCalls(t *testing.T) {
	lostCalls := func(r *Recorder) map[string]int64 {
		ms := r.Collect(time.Unix(10, 0)).ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics()
		for i := 0; i < ms.Len(); i++ {
			if m := ms.At(i); m.Name() == metadata.MetricCUDALostCalls {
				out := map[string]int64{}
				for j := 0; j < m.Sum().DataPoints().Len(); j++ {
					dp := m.Sum().DataPoints().At(j)
					reason, _ := dp.Attributes().Get(metadata.AttrCUDALossReason)
					out[reason.Str()] = dp.IntValue()
				}
				return out
			}
		}
		return nil
	}
	if got := lostCalls(NewRecorder(metadata.DefaultMetricsConfig(), time.Unix(0, 0))); got != nil {
		t.Errorf("without a source: %v", got)
	}
	r := NewRecorder(metadata.DefaultMetricsConfig(), time.Unix(0, 0), WithLossFunc(func() cuda.Losses {
		return cuda.Losses{RingBuffer: 7, NoFrame: 5}
	}))
	want := map[string]int64{metadata.CUDALossRingBuffer: 7, metadata.CUDALossMissedReturn: 0, metadata.CUDALossNoFrame: 5}
	if got := lostCalls(r); len(got) != 3 || got[metadata.CUDALossRingBuffer] != 7 || got[metadata.CUDALossMissedReturn] != 0 ||
		got[metadata.CUDALossNoFrame] != 5 {
		t.Errorf("lost calls %v, want %v", got, want)
	}
}

// A kept submission carries the sampler's tracestate on every one of its spans; detached
// (its application span unsampled), it is the root of its own trace, its children with it,
// linked to the application span.
func TestSampledSubmission(t *testing.T) {
	app := [16]byte{0x4b, 0xf9, 15: 0x36}
	parent := [8]byte{0x00, 0xf0, 7: 0xb7}
	s := submission(t)
	s.CtxTier, s.TraceID, s.SpanID = 1, app, parent
	b := NewBuilder(clock, WithIDSalt(1))
	b.AppendSampled(s, sample.Sampled{TraceState: "ot=th:0", Detach: true})
	got := spans(b.Take())
	if len(got) < 2 {
		t.Fatalf("%d spans", len(got))
	}
	root := got[0]
	if root.TraceID() != pcommon.TraceID(RootTraceID(1, s)) || !root.ParentSpanID().IsEmpty() {
		t.Errorf("detached submission: trace %v parent %v, want its own trace as root", root.TraceID(), root.ParentSpanID())
	}
	if root.Links().Len() != 1 || root.Links().At(0).TraceID() != pcommon.TraceID(app) || root.Links().At(0).SpanID() != pcommon.SpanID(parent) {
		t.Errorf("links %d, want one to the application span", root.Links().Len())
	} else if v, ok := root.Links().At(0).Attributes().Get(metadata.AttrSamplingUnsampledParent); !ok || !v.Bool() {
		t.Errorf("the link does not say its parent was unsampled")
	}
	for _, sp := range got {
		if sp.TraceState().AsRaw() != "ot=th:0" || sp.TraceID() != root.TraceID() {
			t.Errorf("%s: tracestate %q trace %v", sp.Name(), sp.TraceState().AsRaw(), sp.TraceID())
		}
	}
}
