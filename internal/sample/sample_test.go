// The sampler against oracles that do not use pkg/sampling or the sampler's rules: the
// threshold read back from the tracestate's hex and compared with the trace id's low 56
// bits by hand, re-weighted counts against the true counts, each window's slowest
// computed offline, the budget against the spans actually kept.
package sample

import (
	"crypto/sha256"
	"encoding/binary"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"
)

// traceID is a random-looking trace id for item i (SHA-256, like internal/emit's).
func traceID(i int) (t [16]byte) {
	sum := sha256.Sum256([]byte("item " + strconv.Itoa(i)))
	copy(t[:], sum[:])
	return t
}

// thresholdOfState reads th's 56-bit threshold from "ot=th:…" by the spec's rule: the
// hex digits are the threshold's most significant digits, zeros trailing.
func thresholdOfState(t *testing.T, ts string) uint64 {
	t.Helper()
	v, ok := strings.CutPrefix(ts, "ot=")
	if !ok {
		t.Fatalf("tracestate %q has no ot= entry", ts)
	}
	for _, kv := range strings.Split(v, ";") {
		if h, ok := strings.CutPrefix(kv, "th:"); ok {
			if len(h) == 0 || len(h) > 14 {
				t.Fatalf("tracestate %q: th has %d digits", ts, len(h))
			}
			x, err := strconv.ParseUint(h+strings.Repeat("0", 14-len(h)), 16, 64)
			if err != nil {
				t.Fatalf("tracestate %q: %v", ts, err)
			}
			return x
		}
	}
	t.Fatalf("tracestate %q has no th", ts)
	return 0
}

// randomness56 is the trace id's low 56 bits (the spec's randomness, by hand).
func randomness56(id [16]byte) uint64 {
	return binary.BigEndian.Uint64(id[8:]) & (1<<56 - 1)
}

func TestUnderBudgetEverythingKeptWithCertainty(t *testing.T) {
	s := New(DefaultConfig())
	// 500 jobs a second of 9 spans: 4 500 spans/s, under the default 10 000
	for i := range 5000 {
		d := s.Decide(&Item{Root: traceID(i), Spans: 9, End: int64(i) * 2_000_000, Latency: 1000, Group: Group{A: "gfx"}})
		if !d.Keep {
			t.Fatalf("item %d dropped under the budget (%v)", i, d.Reason)
		}
		if d.Reason == ReasonProbability && d.TraceState != "ot=th:0" {
			t.Fatalf("item %d kept by the probability share at p=1 with tracestate %q, want ot=th:0", i, d.TraceState)
		}
	}
	if st := s.Stats(); st.Probability != 1 || st.Adjustments != 0 {
		t.Fatalf("probability %v after %d moves, want 1 and none", st.Probability, st.Adjustments)
	}
}

// steady runs n items at rate items a second of spans spans each through s.
func steady(s *Sampler, n int, rate float64, spans int, from int) (kept []Decision, items []Item) {
	for i := range n {
		it := Item{Root: traceID(from + i), Spans: spans, End: int64(float64(i) * 1e9 / rate), Latency: 1000, Group: Group{A: "gfx"}}
		d := s.Decide(&it)
		items = append(items, it)
		kept = append(kept, d)
	}
	return kept, items
}

func TestBudgetHeldAndCountsReweight(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Keep = KeepConfig{} // the probability share alone
	s := New(cfg)
	const rate, spans, seconds = 20_000.0, 9, 20 // 180 000 spans/s demanded, 18× the budget
	ds, items := steady(s, rate*seconds, rate, spans, 0)

	keptSpans := map[int]int{} // second → spans kept
	var adjusted float64
	for i, d := range ds {
		if !d.Keep {
			continue
		}
		th := thresholdOfState(t, d.TraceState)
		if r := randomness56(items[i].Root); r < th {
			t.Fatalf("item %d kept with randomness %014x below its threshold %014x", i, r, th)
		}
		adjusted += 1 / (1 - float64(th)/(1<<56)) // the spec's adjusted count, 1/p
		keptSpans[int(items[i].End/1e9)] += spans
	}
	// after the first second the budget holds within 15 % every second
	for sec := 1; sec < seconds; sec++ {
		if got := float64(keptSpans[sec]); math.Abs(got-DefaultSpansPerSecond) > 0.15*DefaultSpansPerSecond {
			t.Errorf("second %d: %v spans kept, budget %d", sec, got, DefaultSpansPerSecond)
		}
	}
	// re-weighted, the kept items count all of them (within 5 %: ≈ 22 000 kept)
	if n := float64(len(items)); math.Abs(adjusted-n) > 0.05*n {
		t.Errorf("adjusted count %.0f of %.0f items", adjusted, n)
	}
}

func TestConsistentAcrossThresholds(t *testing.T) {
	// Two samplers at fixed probabilities: every item the lower keeps, the higher keeps
	// (the property that lets a downstream sampler lower the rate, never raise it).
	lo, hi := DefaultConfig(), DefaultConfig()
	lo.Keep, hi.Keep = KeepConfig{}, KeepConfig{}
	lo.Probability, hi.Probability = 0.1, 0.4
	lo.SpansPerSecond, hi.SpansPerSecond = MaxSpansPerSecond, MaxSpansPerSecond
	a, b := New(lo), New(hi)
	nlo, nhi := 0, 0
	for i := range 20000 {
		it := Item{Root: traceID(i), Spans: 1, End: int64(i) * 1000}
		da, db := a.Decide(&it), b.Decide(&it)
		if da.Keep && !db.Keep {
			t.Fatalf("item %d kept at 0.1 and dropped at 0.4", i)
		}
		if da.Keep {
			nlo++
		}
		if db.Keep {
			nhi++
		}
	}
	// binomial: 20 000 × 0.1 = 2 000 ± 5σ (σ ≈ 42); 8 000 ± 5σ (σ ≈ 69)
	if math.Abs(float64(nlo)-2000) > 5*42 || math.Abs(float64(nhi)-8000) > 5*69 {
		t.Fatalf("kept %d at 0.1 and %d at 0.4 of 20 000", nlo, nhi)
	}
}

func TestKeepRulesWinOverBudgetAndParent(t *testing.T) {
	cfg := DefaultConfig()
	cfg.SpansPerSecond = 0
	cfg.Keep.LatencyAbove = 5 * time.Millisecond
	cfg.Keep.DependencyWaitAbove = time.Millisecond
	cfg.Keep.SlowestWindow = 0
	s := New(cfg)
	cases := []struct {
		name string
		it   Item
		keep bool
		why  Reason
	}{
		{"failed", Item{Failed: true}, true, ReasonFailed},
		{"incomplete", Item{Incomplete: true}, true, ReasonIncomplete},
		{"lost", Item{Lost: true}, true, ReasonLostEvents},
		{"slow", Item{Latency: int64(6 * time.Millisecond)}, true, ReasonLatency},
		{"waited", Item{DependencyWait: int64(2 * time.Millisecond)}, true, ReasonDependencyWait},
		{"ordinary", Item{Latency: 1000}, false, ReasonProbability},
		{"sampled parent", Item{Linked: true, ParentSampled: true}, true, ReasonParentSampled},
		{"unsampled parent", Item{Linked: true}, false, ReasonParentUnsampled},
		{"failed under an unsampled parent", Item{Linked: true, Failed: true}, true, ReasonFailed},
	}
	for i, c := range cases {
		c.it.Root, c.it.Trace, c.it.Spans, c.it.End = traceID(i), traceID(1000+i), 5, int64(i)
		d := s.Decide(&c.it)
		if d.Keep != c.keep || d.Reason != c.why {
			t.Errorf("%s: keep %v (%v), want %v (%v)", c.name, d.Keep, d.Reason, c.keep, c.why)
			continue
		}
		switch {
		case !d.Keep:
		case c.it.Linked && c.it.ParentSampled:
			if d.TraceState != "" || d.Detach {
				t.Errorf("%s: tracestate %q detach %v; the application's trace keeps its own", c.name, d.TraceState, d.Detach)
			}
		case c.it.Linked:
			if !d.Detach || d.TraceState != "ot=th:0" {
				t.Errorf("%s: detach %v tracestate %q; want its own trace, kept with certainty", c.name, d.Detach, d.TraceState)
			}
		default:
			if d.TraceState != "ot=th:0" {
				t.Errorf("%s: tracestate %q, want ot=th:0 (kept with certainty)", c.name, d.TraceState)
			}
		}
	}
	st := s.Stats()
	if st.Kept[KindJob][ReasonFailed] != 2 || st.Dropped[KindJob][ReasonParentUnsampled] != 1 ||
		st.SpansDropped[KindJob][ReasonProbability] != 5 {
		t.Fatalf("counts %+v", st)
	}
}

func TestSlowestOfEachWindowKept(t *testing.T) {
	cfg := DefaultConfig()
	cfg.SpansPerSecond = 0
	cfg.Keep = KeepConfig{SlowestWindow: time.Second}
	s := New(cfg)
	type key struct {
		ring string
		win  int64
	}
	slowest := map[key]int{} // offline: the index of each ring's slowest per window
	var items []Item
	for i := range 60000 {
		ring := []string{"gfx", "comp", "sdma"}[i%3]
		id := traceID(i + 1e6)
		lat := int64(binary.BigEndian.Uint32(id[:4]) % 10_000_000)
		it := Item{Root: traceID(i), Spans: 9, End: int64(i) * 200_000, Latency: lat, Group: Group{A: "card0", B: ring}}
		items = append(items, it)
		k := key{ring, it.End / int64(time.Second)}
		if j, ok := slowest[k]; !ok || lat > items[j].Latency {
			slowest[k] = i
		}
	}
	kept := 0
	var ds []Decision
	for i := range items {
		d := s.Decide(&items[i])
		ds = append(ds, d)
		if d.Keep {
			kept++
		}
	}
	for k, i := range slowest {
		if !ds[i].Keep || ds[i].Reason != ReasonSlowest {
			t.Errorf("ring %s window %d: its slowest (item %d) was not kept", k.ring, k.win, i)
		}
	}
	// 36 windows of ≈ 1 667 jobs: ≈ ln 1667 + 0.58 ≈ 8 each, well under 20
	if kept > 20*len(slowest) || kept < len(slowest) {
		t.Fatalf("%d kept for %d windows", kept, len(slowest))
	}
}

func TestValidateNamesTheKey(t *testing.T) {
	for _, c := range []struct {
		edit func(*Config)
		key  string
	}{
		{func(c *Config) { c.SpansPerSecond = -1 }, "spans_per_second"},
		{func(c *Config) { c.Probability = 0 }, "probability"},
		{func(c *Config) { c.Probability = 1.5 }, "probability"},
		{func(c *Config) { c.Tick = time.Millisecond }, "tick"},
		{func(c *Config) { c.Keep.LatencyAbove = -1 }, "keep.latency_above"},
		{func(c *Config) { c.Keep.DependencyWaitAbove = -1 }, "keep.dependency_wait_above"},
		{func(c *Config) { c.Keep.SlowestWindow = time.Millisecond * 20 }, "keep.slowest_window"},
		{func(c *Config) { c.SpansPerSecond, c.ParentBased, c.Keep = 0, false, KeepConfig{} }, "sampling.spans_per_second: 0 with sampling.parent_based off"},
	} {
		cfg := DefaultConfig()
		c.edit(&cfg)
		err := cfg.Validate()
		if err == nil || !strings.Contains(err.Error(), c.key) {
			t.Errorf("%s: %v", c.key, err)
		}
	}
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestExplicitRandomness(t *testing.T) {
	root := traceID(7)
	got := WithRandomness("ot=th:c", root)
	fields := map[string]bool{}
	for _, kv := range strings.Split(strings.TrimPrefix(got, "ot="), ";") {
		fields[kv] = true
	}
	rv := "rv:" + strconv.FormatUint(randomness56(root)|1<<56, 16)[1:] // 14 digits
	if !strings.HasPrefix(got, "ot=") || len(fields) != 2 || !fields["th:c"] || !fields[rv] {
		t.Fatalf("WithRandomness: %q, want th:c and %s", got, rv)
	}
	if WithRandomness("", root) != "" {
		t.Fatal("randomness added to a tracestate without threshold")
	}
}
