// Tests of the span model: a job in, the gpu.job span with its stage children, ids,
// times, attributes, status and links out.
package emit

import (
	"math"
	"reflect"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/ghostdriver/ghostdriver/internal/assemble"
	"github.com/ghostdriver/ghostdriver/internal/event"
	"github.com/ghostdriver/ghostdriver/internal/metadata"
)

// emitted is one span with its resource and scope, flattened for assertions.
type emitted struct {
	res   pcommon.Map
	scope pcommon.InstrumentationScope
	span  ptrace.Span
}

func flatten(td ptrace.Traces) []emitted {
	var out []emitted
	for i := 0; i < td.ResourceSpans().Len(); i++ {
		rs := td.ResourceSpans().At(i)
		for k := 0; k < rs.ScopeSpans().Len(); k++ {
			ss := rs.ScopeSpans().At(k)
			for n := 0; n < ss.Spans().Len(); n++ {
				out = append(out, emitted{rs.Resource().Attributes(), ss.Scope(), ss.Spans().At(n)})
			}
		}
	}
	return out
}

// build renders jobs with a fresh builder and returns the flattened spans.
func build(t *testing.T, jobs []*assemble.Job, opts ...SpanOption) []emitted {
	t.Helper()
	b := NewSpanBuilder(testClock, opts...)
	for _, j := range jobs {
		b.Append(j)
	}
	if b.Len() != len(jobs) {
		t.Fatalf("Len = %d, want %d", b.Len(), len(jobs))
	}
	return flatten(b.Take())
}

// jobSpans returns the gpu.job spans in emission order.
func jobSpans(spans []emitted) []emitted {
	var out []emitted
	for _, e := range spans {
		if e.span.Name() == JobSpanName {
			out = append(out, e)
		}
	}
	return out
}

// childrenOf returns the spans whose parent is id, in emission order.
func childrenOf(spans []emitted, id pcommon.SpanID) []ptrace.Span {
	var out []ptrace.Span
	for _, e := range spans {
		if e.span.ParentSpanID() == id {
			out = append(out, e.span)
		}
	}
	return out
}

func wantAttrs(t *testing.T, what string, got pcommon.Map, want map[string]any) {
	t.Helper()
	if g := got.AsRaw(); !reflect.DeepEqual(g, want) {
		t.Errorf("%s attributes:\n got  %v\n want %v", what, g, want)
	}
}

func ts(src int64) pcommon.Timestamp { return pcommon.Timestamp(src + testOffset) }

func TestJobWithAllStagesMeasured(t *testing.T) {
	spans := build(t, []*assemble.Job{fullJob()})
	if len(spans) != 9 {
		t.Fatalf("%d spans, want gpu.job + 8 stages", len(spans))
	}
	job := spans[0]
	if job.scope.Name() != metadata.ScopeName || job.scope.Version() != metadata.ScopeVersion {
		t.Errorf("scope = %s %s", job.scope.Name(), job.scope.Version())
	}
	wantAttrs(t, "resource", job.res, map[string]any{
		"process.pid": int64(1000), "process.executable.name": "vkcube", "service.name": "vkcube",
	})
	sp := job.span
	if sp.Name() != "gpu.job" || sp.Kind() != ptrace.SpanKindInternal {
		t.Errorf("job span %q kind %v", sp.Name(), sp.Kind())
	}
	if !sp.ParentSpanID().IsEmpty() {
		t.Errorf("job without app context has parent %v", sp.ParentSpanID())
	}
	wantTrace, wantSpan := derivedIDs(identityOfFence(0, event.FenceKey{Context: 1234, Seqno: 56}))
	if sp.TraceID() != wantTrace || sp.SpanID() != wantSpan {
		t.Errorf("ids %v/%v, want derived %v/%v", sp.TraceID(), sp.SpanID(), wantTrace, wantSpan)
	}
	if sp.TraceID().IsEmpty() || sp.SpanID().IsEmpty() {
		t.Error("empty id")
	}
	if sp.StartTimestamp() != ts(1000) || sp.EndTimestamp() != ts(8300) {
		t.Errorf("job span %d→%d, want %d→%d", sp.StartTimestamp(), sp.EndTimestamp(), ts(1000), ts(8300))
	}
	if sp.Status().Code() != ptrace.StatusCodeUnset {
		t.Errorf("completed job status %v", sp.Status().Code())
	}
	wantAttrs(t, "gpu.job", sp.Attributes(), map[string]any{
		"ghostdriver.driver":           "amdgpu",
		"ghostdriver.device":           "0000:03:00.0",
		"ghostdriver.ring":             "gfx",
		"ghostdriver.fence.context":    int64(1234),
		"ghostdriver.fence.seqno":      int64(56),
		"ghostdriver.hw_fence.context": int64(17),
		"ghostdriver.hw_fence.seqno":   int64(9001),
		"ghostdriver.job.id":           int64(42),
		"ghostdriver.client_id":        int64(7),
		"process.pid":                  int64(1000),
		"thread.id":                    int64(1000),
		"thread.name":                  "vkcube",
		"ghostdriver.job.outcome":      "completed",
		"ghostdriver.context.tier":     "none",
	})
	if sp.Links().Len() != 0 {
		t.Errorf("%d links, want none", sp.Links().Len())
	}

	children := childrenOf(spans, sp.SpanID())
	wantStages := []struct {
		name       string
		start, end int64
		rule       string
	}{
		{"ioctl", 1000, 2000, "sys_enter_ioctl→sys_exit_ioctl"},
		{"bo_validation", 1000, 1500, "sys_enter_ioctl→amdgpu_cs_parser_bos"},
		{"fence_dependency", 1800, 2500, "drm_sched_job_queue→dma_fence_signaled"},
		{"scheduler_queue", 2500, 2800, "dma_fence_signaled→drm_sched_job_run"},
		{"ring_emission", 2800, 3000, "drm_sched_job_run→dma_fence_emit"},
		{"dma_scheduling", 3000, 3200, "dma_fence_emit→dma_fence_signaled"},
		{"execution", 3200, 8000, "dma_fence_signaled→dma_fence_signaled"},
		{"fence_signal", 8000, 8300, "dma_fence_signaled→drm_sched_job_done"},
	}
	if len(children) != len(wantStages) {
		t.Fatalf("%d children, want %d", len(children), len(wantStages))
	}
	seen := map[pcommon.SpanID]bool{sp.SpanID(): true}
	for i, w := range wantStages {
		c := children[i]
		if c.Name() != w.name || c.Kind() != ptrace.SpanKindInternal {
			t.Errorf("child %d: %q kind %v, want %q", i, c.Name(), c.Kind(), w.name)
		}
		if c.TraceID() != sp.TraceID() {
			t.Errorf("%s: trace id %v, want the job's", w.name, c.TraceID())
		}
		if c.SpanID() != stageSpanID(sp.SpanID(), assemble.Stage(i)) || seen[c.SpanID()] {
			t.Errorf("%s: span id %v not the derived, unique one", w.name, c.SpanID())
		}
		seen[c.SpanID()] = true
		if c.StartTimestamp() != ts(w.start) || c.EndTimestamp() != ts(w.end) {
			t.Errorf("%s: %d→%d, want %d→%d", w.name, c.StartTimestamp(), c.EndTimestamp(), ts(w.start), ts(w.end))
		}
		wantAttrs(t, w.name, c.Attributes(), map[string]any{
			"ghostdriver.stage.source": "measured", "ghostdriver.stage.rule": w.rule,
		})
		if c.Status().Code() != ptrace.StatusCodeUnset {
			t.Errorf("%s: status %v", w.name, c.Status().Code())
		}
	}
}

func TestPartialJobWithAppContextAndLink(t *testing.T) {
	spans := build(t, []*assemble.Job{fullJob(), partialJob()})
	jobs := jobSpans(spans)
	if len(jobs) != 2 {
		t.Fatalf("%d job spans", len(jobs))
	}
	if len(spans) != 9+5 {
		t.Errorf("%d spans, want 9 + 5", len(spans))
	}
	full, part := jobs[0].span, jobs[1].span
	if part.TraceID() != pcommon.TraceID(appTrace) || part.ParentSpanID() != pcommon.SpanID(appSpan) {
		t.Errorf("app context not used: trace %v parent %v", part.TraceID(), part.ParentSpanID())
	}
	_, wantSpan := derivedIDs(identityOfFence(0, event.FenceKey{Context: 1234, Seqno: 57}))
	if part.SpanID() != wantSpan {
		t.Errorf("span id %v, want %v (independent of the app context)", part.SpanID(), wantSpan)
	}
	if v, _ := part.Attributes().Get("ghostdriver.context.tier"); v.Str() != "otep4947" {
		t.Errorf("context tier %q", v.Str())
	}
	if v, _ := part.Attributes().Get("ghostdriver.job.dependency_count"); v.Int() != 2 {
		t.Errorf("dependency_count %d, want 2", v.Int())
	}
	if _, ok := part.Attributes().Get("process.executable.name"); ok {
		t.Error("process.executable.name on a span (it is a resource attribute)")
	}
	if v, _ := part.Attributes().Get("thread.name"); v.Str() != "vk-submit" {
		t.Errorf("thread.name %q", v.Str())
	}

	// One link: the dependency on fullJob; the fence of no known job gives none.
	if part.Links().Len() != 1 {
		t.Fatalf("%d links, want 1", part.Links().Len())
	}
	l := part.Links().At(0)
	if l.TraceID() != full.TraceID() || l.SpanID() != full.SpanID() {
		t.Errorf("link → %v/%v, want fullJob %v/%v", l.TraceID(), l.SpanID(), full.TraceID(), full.SpanID())
	}
	wantAttrs(t, "link", l.Attributes(), map[string]any{
		"ghostdriver.fence.context": int64(1234), "ghostdriver.fence.seqno": int64(56),
		"ghostdriver.dependency.wait": "same_scheduler",
	})

	children := childrenOf(spans, part.SpanID())
	names := []string{}
	for _, c := range children {
		names = append(names, c.Name())
		if c.TraceID() != pcommon.TraceID(appTrace) {
			t.Errorf("%s: not in the app trace", c.Name())
		}
		if v, _ := c.Attributes().Get("ghostdriver.stage.source"); v.Str() != "inferred" {
			t.Errorf("%s: source %q, want inferred", c.Name(), v.Str())
		}
	}
	if !reflect.DeepEqual(names, []string{"fence_dependency", "ring_emission", "dma_scheduling", "execution"}) {
		t.Errorf("children %v", names)
	}

	// Both jobs come from PID 1000: one resource, named after the main thread's comm.
	if jobs[0].res.Len() == 0 || !reflect.DeepEqual(jobs[0].res.AsRaw(), jobs[1].res.AsRaw()) {
		t.Errorf("resources differ: %v / %v", jobs[0].res.AsRaw(), jobs[1].res.AsRaw())
	}
}

// A link to a job that was not emitted by this builder (or was forgotten) uses the
// derived ids, which equal that job's own span ids when it had no app context.
func TestLinkFallsBackToDerivedIDs(t *testing.T) {
	full := jobSpans(build(t, []*assemble.Job{fullJob()}))[0].span
	part := jobSpans(build(t, []*assemble.Job{partialJob()}))[0].span
	l := part.Links().At(0)
	if l.TraceID() != full.TraceID() || l.SpanID() != full.SpanID() {
		t.Errorf("fallback link → %v/%v, want %v/%v", l.TraceID(), l.SpanID(), full.TraceID(), full.SpanID())
	}
}

// A dependency with an app context lives in the app's trace: the remembered ids carry it,
// the derived fallback cannot (only the span id stays right).
func TestLinkToJobWithAppContext(t *testing.T) {
	dep := fullJob()
	dep.TraceID = [16]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	dep.SpanID = [8]byte{1, 1, 1, 1, 1, 1, 1, 1}

	remembered := jobSpans(build(t, []*assemble.Job{dep, partialJob()}))
	depSpan, l := remembered[0].span, remembered[1].span.Links().At(0)
	if l.TraceID() != pcommon.TraceID(dep.TraceID) || l.SpanID() != depSpan.SpanID() {
		t.Errorf("remembered link → %v/%v, want %v/%v", l.TraceID(), l.SpanID(), dep.TraceID, depSpan.SpanID())
	}

	forgotten := jobSpans(build(t, []*assemble.Job{dep, partialJob()}, WithLinkMemory(0)))
	l = forgotten[1].span.Links().At(0)
	if l.SpanID() != depSpan.SpanID() || l.TraceID() == pcommon.TraceID(dep.TraceID) {
		t.Errorf("fallback link → %v/%v: want span %v and the derived trace", l.TraceID(), l.SpanID(), depSpan.SpanID())
	}
}

func TestIncompleteAndEvictedJobs(t *testing.T) {
	spans := build(t, []*assemble.Job{incompleteJob(), evictedJob()})
	jobs := jobSpans(spans)
	inc, ev := jobs[0], jobs[1]

	if inc.span.Status().Code() != ptrace.StatusCodeError || inc.span.Status().Message() != "capture ended before the job finished" {
		t.Errorf("incomplete status %v %q", inc.span.Status().Code(), inc.span.Status().Message())
	}
	if v, _ := inc.span.Attributes().Get("ghostdriver.job.outcome"); v.Str() != "incomplete" {
		t.Errorf("outcome %q", v.Str())
	}
	if v, _ := inc.span.Attributes().Get("ghostdriver.context.tier"); v.Str() != "traceparent" {
		t.Errorf("tier %q", v.Str())
	}
	// Worker thread of a process never seen from its main thread: name unknown.
	wantAttrs(t, "incomplete resource", inc.res, map[string]any{"process.pid": int64(2000), "service.name": "unknown_service"})
	if got := len(childrenOf(spans, inc.span.SpanID())); got != 1 {
		t.Errorf("incomplete job has %d children, want the ioctl only", got)
	}

	if ev.span.Status().Code() != ptrace.StatusCodeError || ev.span.Status().Message() != "no progress for job_timeout (5s)" {
		t.Errorf("evicted status %v %q", ev.span.Status().Code(), ev.span.Status().Message())
	}
	wantAttrs(t, "evicted job", ev.span.Attributes(), map[string]any{
		"ghostdriver.driver":       "amdgpu",
		"ghostdriver.ring":         "sdma0",
		"ghostdriver.job.id":       int64(77),
		"ghostdriver.job.outcome":  "evicted",
		"ghostdriver.context.tier": "none",
	})
	wantAttrs(t, "evicted resource", ev.res, map[string]any{"service.name": "unknown_service"})
	if !ev.span.ParentSpanID().IsEmpty() || ev.span.TraceID().IsEmpty() {
		t.Error("evicted job without context must be a root span of its own trace")
	}

	// An outcome other than completed with no reason still explains itself.
	j := evictedJob()
	j.Reason = ""
	if msg := jobSpans(build(t, []*assemble.Job{j}))[0].span.Status().Message(); msg != "evicted" {
		t.Errorf("status message %q, want the outcome", msg)
	}
}

func TestUint64ValuesDoNotWrap(t *testing.T) {
	spans := build(t, []*assemble.Job{overflowJob()})
	a := spans[0].span.Attributes().AsRaw()
	want := map[string]any{
		"ghostdriver.fence.context":    "9223372036854775813",
		"ghostdriver.fence.seqno":      "18446744073709551615",
		"ghostdriver.hw_fence.context": int64(math.MaxInt64),
		"ghostdriver.hw_fence.seqno":   "9223372036854775808",
		"ghostdriver.job.id":           "18446744073709551615",
		"ghostdriver.client_id":        "9223372036854775808",
		"ghostdriver.context.tier":     "unknown",
	}
	for k, v := range want {
		if a[k] != v {
			t.Errorf("%s = %#v, want %#v", k, a[k], v)
		}
	}
}

func TestIDsAreDeterministicAndSalted(t *testing.T) {
	ids := func(opts ...SpanOption) []pcommon.SpanID {
		var out []pcommon.SpanID
		for _, e := range build(t, allJobs(), opts...) {
			out = append(out, e.span.SpanID())
		}
		return out
	}
	a, b, salted := ids(), ids(), ids(WithIDSalt(0x5eed))
	if !reflect.DeepEqual(a, b) {
		t.Error("same jobs, different ids")
	}
	unique := map[pcommon.SpanID]bool{}
	for i := range a {
		unique[a[i]] = true
		if a[i] == salted[i] {
			t.Errorf("span %d: salt did not change id %v", i, a[i])
		}
	}
	if len(unique) != len(a) {
		t.Errorf("%d distinct ids among %d spans", len(unique), len(a))
	}

	// Jobs without a finished fence are told apart by their other fields.
	j1, j2 := evictedJob(), evictedJob()
	j2.Start++
	if identityOf(0, j1) == identityOf(0, j2) {
		t.Error("fence-less jobs with different starts share an identity")
	}
	// A job's identity is its finished fence: the device does not enter it, so that a
	// dependency record (which names only the fence) can derive it.
	j3 := fullJob()
	j3.Device, j3.JobID, j3.Start = "other", 1, 5
	if identityOf(0, j3) != identityOf(0, fullJob()) {
		t.Error("identity of a fenced job depends on more than the fence")
	}
}

func TestTakeResetsBatch(t *testing.T) {
	b := NewSpanBuilder(testClock)
	b.Append(fullJob())
	b.Append(incompleteJob())
	td := b.Take()
	if td.SpanCount() != 9+2 || td.ResourceSpans().Len() != 2 {
		t.Errorf("first batch: %d spans in %d resources", td.SpanCount(), td.ResourceSpans().Len())
	}
	if b.Len() != 0 || b.Take().SpanCount() != 0 {
		t.Error("Take did not reset")
	}
	// A later batch still links to jobs of an earlier one with their real ids.
	dep := fullJob()
	dep.TraceID, dep.SpanID = [16]byte{9: 9}, [8]byte{3: 3}
	b.Append(dep)
	b.Take()
	b.Append(partialJob())
	l := jobSpans(flatten(b.Take()))[0].span.Links().At(0)
	if l.TraceID() != pcommon.TraceID(dep.TraceID) {
		t.Errorf("link across batches → trace %v, want %v", l.TraceID(), dep.TraceID)
	}
}

func TestResourceHookAndHostName(t *testing.T) {
	calls := 0
	hook := func(j *assemble.Job, attrs pcommon.Map) {
		calls++
		if j.PID == 1000 {
			attrs.PutStr("service.name", "renderer")
		}
	}
	spans := build(t, []*assemble.Job{fullJob(), partialJob(), incompleteJob()}, WithResourceFunc(hook), WithHostName("gpu-node-7"), WithScopeVersion("1.2.3"))
	if calls != 2 {
		t.Errorf("hook called %d times, want once per tenant", calls)
	}
	wantAttrs(t, "pid 1000 resource", spans[0].res, map[string]any{
		"process.pid": int64(1000), "process.executable.name": "vkcube", "service.name": "renderer", "host.name": "gpu-node-7",
	})
	if spans[0].scope.Version() != "1.2.3" {
		t.Errorf("scope version %q", spans[0].scope.Version())
	}
}

// The process name is learnt from its main thread and kept: a batch that starts with a
// worker thread's job gets the name once the main thread shows up, later batches at once.
func TestExecutableNameLearntFromMainThread(t *testing.T) {
	b := NewSpanBuilder(testClock)
	b.Append(partialJob()) // worker thread 1001 of pid 1000
	b.Append(fullJob())    // main thread
	res := b.Take().ResourceSpans()
	if res.Len() != 1 {
		t.Fatalf("%d resources, want 1", res.Len())
	}
	wantAttrs(t, "upgraded resource", res.At(0).Resource().Attributes(), map[string]any{
		"process.pid": int64(1000), "process.executable.name": "vkcube", "service.name": "vkcube",
	})
	b.Append(partialJob())
	wantAttrs(t, "next batch", b.Take().ResourceSpans().At(0).Resource().Attributes(), map[string]any{
		"process.pid": int64(1000), "process.executable.name": "vkcube", "service.name": "vkcube",
	})
}

func TestInvertedBoundsCollapse(t *testing.T) {
	j := fullJob()
	j.End = j.Start - 10
	j.Stages = j.Stages[:1]
	j.Stages[0].End = j.Stages[0].Start - 5
	spans := build(t, []*assemble.Job{j})
	for _, e := range spans {
		if e.span.EndTimestamp() != e.span.StartTimestamp() {
			t.Errorf("%s: end %d before start %d not collapsed", e.span.Name(), e.span.EndTimestamp(), e.span.StartTimestamp())
		}
	}
}

func TestRecentEvictsOldest(t *testing.T) {
	hash := func(k int) uint64 { return uint64(k) }
	r := newRecent[int, int](3, hash)
	for i := 1; i <= 5; i++ {
		r.put(i, i*10)
	}
	r.put(5, 51) // update in place, no eviction
	for k, want := range map[int]bool{1: false, 2: false, 3: true, 4: true, 5: true} {
		if _, ok := r.get(k); ok != want {
			t.Errorf("key %d present=%v, want %v", k, ok, want)
		}
	}
	if v, _ := r.get(5); v != 51 || r.len() != 3 {
		t.Errorf("value %d len %d", v, r.len())
	}
	zero := newRecent[int, int](0, hash)
	zero.put(1, 1)
	if zero.len() != 0 {
		t.Error("zero-capacity map stored an entry")
	}
}

// Keys whose index probes collide (here: all of them) are still found, and eviction
// keeps exactly the newest capacity keys.
func TestRecentCollidingKeys(t *testing.T) {
	const capacity = 50
	r := newRecent[int, int](capacity, func(k int) uint64 { return uint64(k % 3) })
	for i := 0; i < 1000; i++ {
		r.put(i, -i)
		for k := max(0, i-2*capacity); k <= i; k++ {
			v, ok := r.get(k)
			if want := k > i-capacity; ok != want || (ok && v != -k) {
				t.Fatalf("after put %d: key %d = %d %v, want present=%v", i, k, v, ok, want)
			}
		}
	}
}

// Stage spans off: each job is its gpu.job span alone, identical to the one with
// children (ids, times, attributes, status, links); links to it still resolve.
func TestWithoutStageSpans(t *testing.T) {
	jobs := []*assemble.Job{fullJob(), partialJob()}
	with, without := build(t, jobs), build(t, jobs, WithStageSpans(false))
	if len(without) != len(jobs) || len(jobSpans(without)) != len(jobs) {
		t.Fatalf("%d spans (%d gpu.job) for %d jobs, want the job spans only", len(without), len(jobSpans(without)), len(jobs))
	}
	if n := len(with); n <= len(jobs) {
		t.Fatalf("with stage spans: %d spans, the fixtures have stages", n)
	}
	for i, w := range jobSpans(with) {
		o := without[i].span
		if o.SpanID() != w.span.SpanID() || o.TraceID() != w.span.TraceID() || o.ParentSpanID() != w.span.ParentSpanID() ||
			o.StartTimestamp() != w.span.StartTimestamp() || o.EndTimestamp() != w.span.EndTimestamp() ||
			o.Status().Code() != w.span.Status().Code() || o.Links().Len() != w.span.Links().Len() ||
			!reflect.DeepEqual(o.Attributes().AsRaw(), w.span.Attributes().AsRaw()) ||
			!reflect.DeepEqual(without[i].res.AsRaw(), w.res.AsRaw()) {
			t.Errorf("job %d differs without stage spans", i)
		}
		if len(childrenOf(without, o.SpanID())) != 0 {
			t.Errorf("job %d has children without stage spans", i)
		}
	}
}
