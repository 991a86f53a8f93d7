// Package sample decides which finished GPU jobs and CUDA submissions get spans: sampling
// at the source (docs/design.md "Sampling at the source"). The pipeline records every job's
// metrics first and asks the Sampler only about its spans, so the metrics count every job
// whatever is decided here.
//
//	keep rules ──▶ parent-based ──▶ consistent probability (threshold moved by the budget)
//
// The first that applies decides:
//
//   - keep rules always win: a job that failed, is incomplete (or evicted) or overlaps a
//     loss window; the slowest of its ring in each window; one slower than a latency
//     threshold; one whose dependency wait is above a threshold. Such spans say in their
//     tracestate that they were kept with certainty (ot=th:0, adjusted count 1).
//   - parent-based: a job linked to an application span follows that span's W3C sampled
//     flag. A sampled parent keeps the job in the parent's trace (its tracestate is the
//     application's business: none is written). An unsampled parent drops it, unless a
//     keep rule kept it: it is then exported as the root of its own trace, with a link to
//     the application span (Decision.Detach), since its parent never reaches a backend.
//   - consistent probability sampling (the OpenTelemetry TraceState probability-sampling
//     specification): randomness is the low 56 bits of the trace id the spans will carry,
//     the job is kept when that randomness is at least the threshold, and the threshold is
//     written as ot=th:… in the span's tracestate, so that backends and the collector's
//     probabilisticsampler and tailsampling processors can re-weight counts. Thresholds
//     come from contrib's pkg/sampling.
//
// The budget (spans a second) moves the threshold to hold it: every tick of source time
// (budget.go) the spans that the keep rules and sampled parents forced are subtracted from
// the budget and what is left is shared by the rest; up to the budget every job is kept.
// Decisions use only the items and their source times, so a replay decides the same
// every run.
package sample

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/sampling"
)

// Kind is what an Item is: a DRM job or a CUDA submission (counted apart).
type Kind uint8

const (
	KindJob        Kind = iota // a gpu.job and its stage spans
	KindSubmission             // a cuda.submission and its children
	NumKinds
)

// KindNames are the metric attribute values of the kinds (ghostdriver.sampling.kind).
var KindNames = [NumKinds]string{"gpu.job", "cuda.submission"}

// Reason is why an item was kept or dropped.
type Reason uint8

const (
	ReasonFailed          Reason = iota // keep rule: the job failed (error status)
	ReasonIncomplete                    // keep rule: incomplete or evicted
	ReasonLostEvents                    // keep rule: events were lost while it ran
	ReasonSlowest                       // keep rule: the slowest of its ring so far in the window
	ReasonLatency                       // keep rule: slower than keep.latency_above
	ReasonDependencyWait                // keep rule: waited on dependencies longer than keep.dependency_wait_above
	ReasonParentSampled                 // parent-based: the application span is sampled
	ReasonProbability                   // the consistent probability share (kept or dropped)
	ReasonParentUnsampled               // parent-based: the application span is not sampled (dropped)
	NumReasons
)

// ReasonNames are the metric attribute values of the reasons (ghostdriver.sampling.reason).
var ReasonNames = [NumReasons]string{
	"failed", "incomplete", "lost_events", "slowest", "latency", "dependency_wait",
	"parent_sampled", "probability", "parent_unsampled",
}

func (r Reason) String() string {
	if r < NumReasons {
		return ReasonNames[r]
	}
	return "reason?"
}

// Config configures a Sampler. The zero value is not valid: start from DefaultConfig.
type Config struct {
	// SpansPerSecond is the budget: spans a second (source clock) the probability share may
	// use beside what keep rules and sampled parents force. 0: no probability share (only
	// keep rules and parents export spans).
	SpansPerSecond float64
	// Probability is the probability share's ceiling, in (0, 1]: 1 keeps every job while
	// the budget allows; below 1 is a fixed rate that the budget can only lower.
	Probability float64
	// ParentBased: jobs linked to an application span follow its sampled flag.
	ParentBased bool
	// Tick is how often (source clock) the threshold is moved to hold the budget.
	Tick time.Duration
	Keep KeepConfig
}

// KeepConfig are the keep rules; each always wins.
type KeepConfig struct {
	Failed     bool // error status: a failed job, an Xid, a sync that returned an error
	Incomplete bool // incomplete or evicted jobs, unfinished submissions
	LostEvents bool // jobs that overlap a window where the source lost events
	// SlowestWindow: keep the slowest job of each ring (a submission: of its process) per
	// window of this length. A running maximum: every job slower than all
	// before it in its window is kept, ≈ ln n of n jobs, the window's slowest among them.
	// 0: off.
	SlowestWindow time.Duration
	// LatencyAbove keeps every job whose span (submit to fence signal) is longer. 0: off.
	LatencyAbove time.Duration
	// DependencyWaitAbove keeps every job whose fence_dependency stage is longer. 0: off.
	DependencyWaitAbove time.Duration
}

// Default values (docs/design.md "Sampling at the source" says how they were chosen).
const (
	// DefaultSpansPerSecond: ≈ 1 000 jobs a second with their stage spans (≈ 9 a job).
	// Building and exporting them through pdata costs ≈ 7 µs a job (BENCHMARKS.md), 0.7 %
	// of a core at this budget.
	DefaultSpansPerSecond = 10_000
	DefaultTick           = 100 * time.Millisecond
	DefaultSlowestWindow  = 10 * time.Second
)

// DefaultConfig keeps every job up to the default budget, with every keep rule on except
// the thresholds, which depend on the workload.
func DefaultConfig() Config {
	return Config{
		SpansPerSecond: DefaultSpansPerSecond,
		Probability:    1,
		ParentBased:    true,
		Tick:           DefaultTick,
		Keep: KeepConfig{
			Failed: true, Incomplete: true, LostEvents: true,
			SlowestWindow: DefaultSlowestWindow,
		},
	}
}

// Limits of the configuration.
const (
	MinTick = 10 * time.Millisecond
	MaxTick = time.Minute
	// MaxSpansPerSecond bounds the budget (beyond it sampling is moot: turn it off).
	MaxSpansPerSecond = 1e9
)

// Validate says what cannot work, naming the key (sampling.…, the receiver's YAML).
func (c Config) Validate() error {
	var errs []string
	if c.SpansPerSecond < 0 || c.SpansPerSecond > MaxSpansPerSecond || c.SpansPerSecond != c.SpansPerSecond {
		errs = append(errs, fmt.Sprintf("sampling.spans_per_second: %v is out of range [0, %g]", c.SpansPerSecond, float64(MaxSpansPerSecond)))
	}
	if !(c.Probability > 0 && c.Probability <= 1) {
		errs = append(errs, fmt.Sprintf("sampling.probability: %v is out of range (0, 1]", c.Probability))
	} else if c.Probability < sampling.MinSamplingProbability {
		errs = append(errs, fmt.Sprintf("sampling.probability: %v is below the smallest the threshold encoding has (%g)", c.Probability, sampling.MinSamplingProbability))
	}
	if c.Tick < MinTick || c.Tick > MaxTick {
		errs = append(errs, fmt.Sprintf("sampling.tick: %v is out of range [%v, %v]", c.Tick, MinTick, MaxTick))
	}
	k := c.Keep
	if k.SlowestWindow < 0 {
		errs = append(errs, fmt.Sprintf("sampling.keep.slowest_window: %v is negative (0 turns the rule off)", k.SlowestWindow))
	} else if k.SlowestWindow > 0 && k.SlowestWindow < c.Tick {
		errs = append(errs, fmt.Sprintf("sampling.keep.slowest_window: %v is shorter than tick (%v)", k.SlowestWindow, c.Tick))
	}
	if k.LatencyAbove < 0 {
		errs = append(errs, fmt.Sprintf("sampling.keep.latency_above: %v is negative (0 turns the rule off)", k.LatencyAbove))
	}
	if k.DependencyWaitAbove < 0 {
		errs = append(errs, fmt.Sprintf("sampling.keep.dependency_wait_above: %v is negative (0 turns the rule off)", k.DependencyWaitAbove))
	}
	if len(errs) == 0 && c.SpansPerSecond == 0 && !c.ParentBased && !k.any() {
		errs = append(errs, "sampling.spans_per_second: 0 with sampling.parent_based off and every keep rule off exports no span at all; "+
			"raise the budget, turn a keep rule or parent_based on, or set enabled: false to export every job's spans")
	}
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "; "))
	}
	return nil
}

func (k KeepConfig) any() bool {
	return k.Failed || k.Incomplete || k.LostEvents || k.SlowestWindow > 0 || k.LatencyAbove > 0 || k.DependencyWaitAbove > 0
}

// String is the configuration in one line, for the log and doctor.
func (c Config) String() string {
	var keep []string
	k := c.Keep
	for _, r := range []struct {
		on   bool
		name string
	}{{k.Failed, "failed"}, {k.Incomplete, "incomplete"}, {k.LostEvents, "lost_events"}} {
		if r.on {
			keep = append(keep, r.name)
		}
	}
	if k.SlowestWindow > 0 {
		keep = append(keep, "slowest per "+k.SlowestWindow.String())
	}
	if k.LatencyAbove > 0 {
		keep = append(keep, "latency > "+k.LatencyAbove.String())
	}
	if k.DependencyWaitAbove > 0 {
		keep = append(keep, "dependency wait > "+k.DependencyWaitAbove.String())
	}
	if len(keep) == 0 {
		keep = append(keep, "none")
	}
	parent := "off"
	if c.ParentBased {
		parent = "on"
	}
	return fmt.Sprintf("budget %g spans/s, probability ≤ %g, parent-based %s, keep: %s",
		c.SpansPerSecond, c.Probability, parent, strings.Join(keep, ", "))
}

// Item is what the sampler is told of a finished job or submission.
type Item struct {
	Kind Kind
	// Root is the trace id the item's spans carry when it is the root of its own trace
	// (internal/emit's derivation): its randomness decides the probability share.
	Root [16]byte
	// Trace is the application's trace id when the item is linked to an application span
	// (Linked), ParentSampled that span's W3C sampled flag.
	Trace         [16]byte
	Linked        bool
	ParentSampled bool
	// Spans is how many spans the item exports if kept (the budget's unit).
	Spans int
	// End is when the item finished on the source clock (ns): the budget's and the
	// windows' clock.
	End int64
	// Latency is the item's span duration, DependencyWait its fence_dependency stage (ns).
	Latency, DependencyWait  int64
	Failed, Incomplete, Lost bool
	// Group is the item's ring (a submission: its device and process) for the slowest rule.
	Group Group
}

// Group names the ring of the slowest-per-window rule (a job: driver, device, ring; a
// submission: its process).
type Group struct {
	A, B, C string
	N       uint64
}

// Decision is the sampler's answer for one item.
type Decision struct {
	Keep   bool
	Reason Reason
	Sampled
}

// Sampled is how a kept item's spans carry the decision (internal/emit and
// internal/emit/cudaspans render it). The zero value: no tracestate, the item in its
// application's trace when it has one (no sampler).
type Sampled struct {
	// TraceState is the W3C tracestate of every span of the item ("": none), ot=th:… when
	// the item is the root of its own trace.
	TraceState string
	// Detach: the item is kept but its application parent is not sampled; its spans are
	// the root of their own trace (Item.Root), linked to the application span.
	Detach bool
}
