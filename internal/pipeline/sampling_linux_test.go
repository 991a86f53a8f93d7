// The sampler on the CUDA branch: submissions handed to the branch as its assembler hands
// them (no uprobes needed) are kept or left out by their own facts — an Xid, an unsynced
// end, the application span's sampled flag — and a budget of 0 leaves the rest out.
package pipeline

import (
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/ghostdriver/ghostdriver/internal/ctxtier"
	"github.com/ghostdriver/ghostdriver/internal/cuda"
	"github.com/ghostdriver/ghostdriver/internal/event"
	"github.com/ghostdriver/ghostdriver/internal/metadata"
	"github.com/ghostdriver/ghostdriver/internal/sample"
)

func TestSamplerDecidesCUDASubmissions(t *testing.T) {
	sc := sample.DefaultConfig()
	sc.SpansPerSecond = 0     // only keep rules and parents
	sc.Keep.SlowestWindow = 0 // each process here is its own group: its first would be its slowest
	sink := &traceSink{}
	p := New(Config{Metrics: metadata.DefaultMetricsConfig(), Sampling: &sc}, nil, sink.outputs(), nil)
	p.AddCUDA(CUDAConfig{Clock: event.OffsetClock{Offset: 1_700_000_000_000_000_000}}, nil)
	b := p.branches[0].(*cudaBranch)

	app := [16]byte{0xa1, 0xa2, 15: 0x01}
	appSpan := [8]byte{0xb1, 7: 0x02}
	sync := func(ret int32) *cuda.Op {
		return &cuda.Op{Call: cuda.Call{Start: 900, End: 1000, Ret: ret}}
	}
	subs := []struct {
		name string
		s    cuda.Submission
		keep bool
		// parent: the application span (in its trace); detached: own trace, linked to it
		parent, detached bool
	}{
		{"xid under an unsampled parent", cuda.Submission{PID: 1, Start: 100, End: 1000, Sync: sync(0), Xids: []cuda.Xid{{Code: 79, Msg: "fell off the bus"}},
			CtxTier: ctxtier.OTEP4947, TraceID: app, SpanID: appSpan, TraceFlags: 0}, true, false, true},
		{"failed sync, no parent", cuda.Submission{PID: 2, Start: 100, End: 1000, Sync: sync(700)}, true, false, false},
		{"unsynced", cuda.Submission{PID: 3, Start: 100, End: 1000, Outcome: cuda.Unsynced}, true, false, false},
		{"sampled parent", cuda.Submission{PID: 4, Start: 100, End: 1000, Sync: sync(0),
			CtxTier: ctxtier.Traceparent, TraceID: app, SpanID: appSpan, TraceFlags: 0x01}, true, true, false},
		{"unsampled parent", cuda.Submission{PID: 5, Start: 100, End: 1000, Sync: sync(0),
			CtxTier: ctxtier.Traceparent, TraceID: app, SpanID: appSpan}, false, false, false},
		{"no parent, budget spent", cuda.Submission{PID: 6, Start: 100, End: 1000, Sync: sync(0)}, false, false, false},
	}
	p.mu.Lock()
	for i := range subs {
		b.onSubmission(&subs[i].s)
	}
	var td ptrace.Traces
	if b.spans.Len() > 0 {
		td = b.spans.Take()
	} else {
		td = ptrace.NewTraces()
	}
	st := p.sampler.Stats()
	p.mu.Unlock()

	byPID := map[int64]ptrace.Span{}
	for _, rs := range td.ResourceSpans().All() {
		pid, _ := rs.Resource().Attributes().Get(metadata.AttrProcessPID)
		for _, ss := range rs.ScopeSpans().All() {
			for _, sp := range ss.Spans().All() {
				if sp.Name() == metadata.SpanCUDASubmission {
					byPID[pid.Int()] = sp
				}
				if ts := sp.TraceState().AsRaw(); pid.Int() != 4 && ts != "ot=th:0" {
					t.Errorf("pid %d span %s: tracestate %q, want ot=th:0 (kept with certainty)", pid.Int(), sp.Name(), ts)
				}
			}
		}
	}
	for _, c := range subs {
		sp, kept := byPID[int64(c.s.PID)]
		if kept != c.keep {
			t.Errorf("%s: kept %v, want %v", c.name, kept, c.keep)
			continue
		}
		if !kept {
			continue
		}
		inApp := sp.TraceID() == pcommon.TraceID(app) && sp.ParentSpanID() == pcommon.SpanID(appSpan)
		if inApp != c.parent {
			t.Errorf("%s: in the application's trace %v, want %v", c.name, inApp, c.parent)
		}
		linked := sp.Links().Len() == 1 && sp.Links().At(0).SpanID() == pcommon.SpanID(appSpan)
		if linked != c.detached {
			t.Errorf("%s: linked to the application span %v, want %v", c.name, linked, c.detached)
		}
	}
	k := sample.KindSubmission
	if st.Kept[k][sample.ReasonFailed] != 2 || st.Kept[k][sample.ReasonIncomplete] != 1 || st.Kept[k][sample.ReasonParentSampled] != 1 ||
		st.Dropped[k][sample.ReasonParentUnsampled] != 1 || st.Dropped[k][sample.ReasonProbability] != 1 {
		t.Errorf("sampler counts kept %v dropped %v", st.Kept[k], st.Dropped[k])
	}
}
