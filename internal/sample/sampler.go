// The Sampler: keep rules, then the parent, then the probability share; and its counts.

package sample

import (
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/sampling"
	"go.opentelemetry.io/collector/pdata/pcommon"
)

// Sampler decides items one at a time. It is not safe for concurrent use (the pipeline
// calls it under its lock, from both branches).
type Sampler struct {
	cfg     Config
	budget  budget
	slowest slowest
	states  traceStates
	stats   Stats
}

// Stats are the sampler's counts since it was made.
type Stats struct {
	// Kept and Dropped count items, Spans… their spans, by kind and reason.
	Kept, Dropped           [NumKinds][NumReasons]uint64
	SpansKept, SpansDropped [NumKinds][NumReasons]uint64
	// Probability is the probability share's current probability (0: the budget is spent
	// by what keep rules and parents force), Threshold its tvalue.
	Probability float64
	Threshold   string
	// Adjustments counts the threshold's moves.
	Adjustments uint64
	// GroupsReset counts the times the slowest rule's table was full and started over.
	GroupsReset uint64
}

// Spans are the spans kept and sampled out, of every kind and reason.
func (st *Stats) Spans() (kept, sampledOut uint64) {
	for k := range NumKinds {
		for r := range NumReasons {
			kept += st.SpansKept[k][r]
			sampledOut += st.SpansDropped[k][r]
		}
	}
	return kept, sampledOut
}

// SpansSampledOut are the spans of every kind sampled out for reason r.
func (st *Stats) SpansSampledOut(r Reason) (n uint64) {
	for k := range NumKinds {
		n += st.SpansDropped[k][r]
	}
	return n
}

// New returns a sampler for a valid cfg (Config.Validate).
func New(cfg Config) *Sampler {
	s := &Sampler{cfg: cfg}
	s.budget.init(cfg)
	s.slowest.init(cfg.Keep.SlowestWindow)
	return s
}

// Config is the sampler's configuration.
func (s *Sampler) Config() Config { return s.cfg }

// Stats is a snapshot of the counts.
func (s *Sampler) Stats() Stats {
	st := s.stats
	st.Probability = s.budget.th.Probability()
	st.Threshold = s.budget.th.TValue()
	st.Adjustments = s.budget.moves
	st.GroupsReset = s.slowest.resets
	return st
}

// Decide decides item it.
func (s *Sampler) Decide(it *Item) Decision {
	s.budget.advance(it.End)
	d := s.decide(it)
	k := it.Kind
	if k >= NumKinds {
		k = KindJob
	}
	if d.Keep {
		s.stats.Kept[k][d.Reason]++
		s.stats.SpansKept[k][d.Reason] += uint64(it.Spans)
	} else {
		s.stats.Dropped[k][d.Reason]++
		s.stats.SpansDropped[k][d.Reason] += uint64(it.Spans)
	}
	return d
}

func (s *Sampler) decide(it *Item) Decision {
	if r, ok := s.keepRule(it); ok {
		s.budget.forced(it.Spans)
		d := Decision{Keep: true, Reason: r}
		switch {
		case it.Linked && s.cfg.ParentBased && it.ParentSampled:
			// in the application's sampled trace: its tracestate is the application's
		case it.Linked && s.cfg.ParentBased:
			d.Detach, d.TraceState = true, s.states.of(sampling.AlwaysSampleThreshold)
		case it.Linked:
			// parent-based off: in the application's trace, kept with certainty
			d.TraceState = s.states.of(sampling.AlwaysSampleThreshold)
		default:
			d.TraceState = s.states.of(sampling.AlwaysSampleThreshold)
		}
		return d
	}
	if it.Linked && s.cfg.ParentBased {
		if it.ParentSampled {
			s.budget.forced(it.Spans)
			return Decision{Keep: true, Reason: ReasonParentSampled}
		}
		return Decision{Reason: ReasonParentUnsampled}
	}
	trace := it.Root
	if it.Linked {
		trace = it.Trace
	}
	th := s.budget.th
	if !th.ShouldSample(sampling.TraceIDToRandomness(pcommon.TraceID(trace))) {
		s.budget.eligible(it.Spans, false)
		return Decision{Reason: ReasonProbability}
	}
	s.budget.eligible(it.Spans, true)
	return Decision{Keep: true, Reason: ReasonProbability, Sampled: Sampled{TraceState: s.states.of(th)}}
}

// keepRule is the first keep rule that keeps it.
func (s *Sampler) keepRule(it *Item) (Reason, bool) {
	k := &s.cfg.Keep
	// the running maximum sees every finished item, kept by another rule or not, so that
	// a window's maximum is the window's whatever decided the others; an incomplete one's
	// span (cut by the capture, or ended by job_timeout) is no latency of the ring
	slow := k.SlowestWindow > 0 && !it.Incomplete && s.slowest.record(it.Group, it.End, it.Latency)
	switch {
	case k.Failed && it.Failed:
		return ReasonFailed, true
	case k.Incomplete && it.Incomplete:
		return ReasonIncomplete, true
	case k.LostEvents && it.Lost:
		return ReasonLostEvents, true
	case slow:
		return ReasonSlowest, true
	case k.LatencyAbove > 0 && it.Latency > int64(k.LatencyAbove):
		return ReasonLatency, true
	case k.DependencyWaitAbove > 0 && it.DependencyWait > int64(k.DependencyWaitAbove):
		return ReasonDependencyWait, true
	}
	return 0, false
}

// traceStates caches the tracestate string of each threshold (the threshold moves a few
// times a second at most; the string is built once per value).
type traceStates struct {
	m map[sampling.Threshold]string
}

// maxTraceStates bounds the cache.
const maxTraceStates = 1024

func (t *traceStates) of(th sampling.Threshold) string {
	if s, ok := t.m[th]; ok {
		return s
	}
	if t.m == nil || len(t.m) >= maxTraceStates {
		t.m = make(map[sampling.Threshold]string)
	}
	s := TraceState(th)
	t.m[th] = s
	return s
}

// TraceState is the W3C tracestate carrying threshold th (pkg/sampling's serialization).
func TraceState(th sampling.Threshold) string {
	w3c, err := sampling.NewW3CTraceState("")
	if err != nil {
		return ""
	}
	if err := w3c.OTelValue().UpdateTValueWithSampling(th); err != nil {
		return ""
	}
	var b stringBuilder
	if err := w3c.Serialize(&b); err != nil {
		return ""
	}
	return string(b)
}

// WithRandomness returns tracestate ts with the explicit randomness of trace id root
// (ot=…;rv:…): for spans that carry another trace id than the one the decision used
// (internal/emit renames a job whose ids a recent job had), so that samplers downstream
// read the randomness this one used. ts without a threshold is returned as it is.
func WithRandomness(ts string, root [16]byte) string {
	w3c, err := sampling.NewW3CTraceState(ts)
	if err != nil || w3c.OTelValue().TValue() == "" {
		return ts
	}
	w3c.OTelValue().SetRValue(sampling.TraceIDToRandomness(pcommon.TraceID(root)))
	var b stringBuilder
	if err := w3c.Serialize(&b); err != nil {
		return ts
	}
	return string(b)
}

// stringBuilder is an io.StringWriter into a string.
type stringBuilder string

func (b *stringBuilder) WriteString(s string) (int, error) {
	*b += stringBuilder(s)
	return len(s), nil
}
