// The sampler on the DRM branch: jobs handed to the pipeline as the assembler hands them
// are kept or left out by their own facts — incomplete, lost events, slow, a long
// dependency wait, the application span's sampled flag — with the metrics counting all.
package pipeline

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/ghostdriver/ghostdriver/internal/assemble"
	"github.com/ghostdriver/ghostdriver/internal/ctxtier"
	"github.com/ghostdriver/ghostdriver/internal/event"
	"github.com/ghostdriver/ghostdriver/internal/metadata"
	"github.com/ghostdriver/ghostdriver/internal/sample"
)

// clockSource is a DRM source that only gives a clock.
type clockSource struct{}

func (clockSource) Clock() event.Clock                    { return event.OffsetClock{Offset: 1_700_000_000_000_000_000} }
func (clockSource) Run(context.Context, event.Sink) error { return nil }
func (clockSource) Stats() event.SourceStats              { return event.SourceStats{} }

func TestSamplerDecidesDRMJobs(t *testing.T) {
	sc := sample.DefaultConfig()
	sc.SpansPerSecond = 0
	sc.Keep.SlowestWindow = 0
	sc.Keep.LatencyAbove = 5 * time.Millisecond
	sc.Keep.DependencyWaitAbove = time.Millisecond
	var td ptrace.Traces
	p := New(Config{Metrics: metadata.DefaultMetricsConfig(), Sampling: &sc}, clockSource{},
		Outputs{Traces: func(context.Context, ptrace.Traces) error { return nil }}, nil)

	app := [16]byte{0xa1, 15: 0x01}
	appSpan := [8]byte{0xb1, 7: 0x02}
	job := func(seq uint64, f func(*assemble.Job)) *assemble.Job {
		j := &assemble.Job{Driver: "amdgpu", Device: "card0", Ring: "gfx", Finished: event.FenceKey{Context: 9, Seqno: seq},
			Start: 1000, End: 2000, Outcome: assemble.Completed, PID: 7, TID: 7}
		f(j)
		return j
	}
	cases := []struct {
		name             string
		j                *assemble.Job
		keep             bool
		parent, detached bool
	}{
		{"incomplete under an unsampled parent", job(1, func(j *assemble.Job) {
			j.Outcome, j.TraceID, j.SpanID, j.CtxTier = assemble.Incomplete, app, appSpan, ctxtier.OTEP4947
		}), true, false, true},
		{"lost events", job(2, func(j *assemble.Job) { j.Loss.Windows = 1 }), true, false, false},
		{"slow", job(3, func(j *assemble.Job) { j.End = j.Start + int64(6*time.Millisecond) }), true, false, false},
		{"waited on dependencies", job(4, func(j *assemble.Job) {
			j.Stages = []assemble.StageSpan{{Stage: assemble.StageFenceDependency, Start: 1000, End: 1000 + int64(2*time.Millisecond)}}
		}), true, false, false},
		{"sampled parent", job(5, func(j *assemble.Job) {
			j.TraceID, j.SpanID, j.CtxTier, j.TraceFlags = app, appSpan, ctxtier.Traceparent, 0x01
		}), true, true, false},
		{"unsampled parent", job(6, func(j *assemble.Job) { j.TraceID, j.SpanID, j.CtxTier = app, appSpan, ctxtier.OBI }), false, false, false},
		{"ordinary, budget spent", job(7, func(*assemble.Job) {}), false, false, false},
	}
	p.mu.Lock()
	for _, c := range cases {
		p.emitJob(c.j)
	}
	td = p.spans.Take()
	st := p.sampler.Stats()
	md := p.metrics.Collect(time.Now(), event.SourceStats{}, p.assemblerCounters())
	p.mu.Unlock()

	bySeq := map[int64]ptrace.Span{}
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, sp := range ss.Spans().All() {
				if sp.Name() == "gpu.job" {
					seq, _ := sp.Attributes().Get(metadata.AttrFenceSeqno)
					bySeq[seq.Int()] = sp
				}
			}
		}
	}
	for _, c := range cases {
		sp, kept := bySeq[int64(c.j.Finished.Seqno)]
		if kept != c.keep {
			t.Errorf("%s: kept %v, want %v", c.name, kept, c.keep)
			continue
		}
		if !kept {
			continue
		}
		inApp := sp.TraceID() == pcommon.TraceID(app) && sp.ParentSpanID() == pcommon.SpanID(appSpan)
		linked := sp.Links().Len() == 1 && sp.Links().At(0).SpanID() == pcommon.SpanID(appSpan)
		if inApp != c.parent || linked != c.detached {
			t.Errorf("%s: in the application's trace %v (want %v), linked to it %v (want %v)", c.name, inApp, c.parent, linked, c.detached)
		}
		if ts := sp.TraceState().AsRaw(); c.parent && ts != "" || !c.parent && ts != "ot=th:0" {
			t.Errorf("%s: tracestate %q", c.name, ts)
		}
	}
	k := sample.KindJob
	if st.Kept[k][sample.ReasonIncomplete] != 1 || st.Kept[k][sample.ReasonLostEvents] != 1 || st.Kept[k][sample.ReasonLatency] != 1 ||
		st.Kept[k][sample.ReasonDependencyWait] != 1 || st.Kept[k][sample.ReasonParentSampled] != 1 ||
		st.Dropped[k][sample.ReasonParentUnsampled] != 1 || st.Dropped[k][sample.ReasonProbability] != 1 {
		t.Errorf("sampler counts kept %v dropped %v", st.Kept[k], st.Dropped[k])
	}
	// every job in the metrics, kept or not
	var jobs int64
	for _, rm := range md.ResourceMetrics().All() {
		for _, sm := range rm.ScopeMetrics().All() {
			for _, m := range sm.Metrics().All() {
				if m.Name() == metadata.MetricJobs {
					for _, dp := range m.Sum().DataPoints().All() {
						jobs += dp.IntValue()
					}
				}
			}
		}
	}
	if jobs != int64(len(cases)) {
		t.Errorf("ghostdriver.jobs counts %d, want every one of the %d jobs", jobs, len(cases))
	}
}
