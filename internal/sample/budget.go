// The budget: the threshold of the probability share, moved every tick of source time so
// that the spans exported hold the configured rate.
//
// Each tick counts the spans that keep rules and sampled parents forced and the spans of
// the items the probability share decided (all of them, kept or not: the demand). At the
// tick's end both rates are smoothed (an exponentially weighted mean over ≈ 3 ticks) and
// the probability becomes (budget − forced) / demand, at most the configured ceiling. A
// burst inside a tick that keeps more than twice the tick's share halves the probability
// at once. The probability changes only when it moves by more than 5 %, so the
// tracestate's threshold stays put in a steady load.

package sample

import (
	"math"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/sampling"
)

// thresholdPrecision is how many hex digits a threshold keeps (the spec's recommended
// short form: th:fd7 rather than 14 digits).
const thresholdPrecision = 4

// ewmaWeight is the weight of the last tick in the smoothed rates.
const ewmaWeight = 0.3

// hysteresis is the relative change below which the probability is left as it is.
const hysteresis = 0.05

// maxIdleTicks: after this many ticks without items the rates are taken as zero (a long
// pause, or source time jumping ahead) instead of decaying tick by tick.
const maxIdleTicks = 64

type budget struct {
	rate    float64 // spans a second allowed
	ceiling float64 // the configured probability
	tick    int64   // ns

	started   bool
	tickStart int64
	// this tick's spans: forced by keep rules and parents; decided by the probability
	// share (demand) and kept by it
	forcedN, demandN, keptN float64
	// smoothed rates, spans a second
	forcedRate, demandRate float64
	primed                 bool // the rates have one tick in them

	p     float64
	th    sampling.Threshold
	moves uint64
}

func (b *budget) init(cfg Config) {
	b.rate = cfg.SpansPerSecond
	b.ceiling = cfg.Probability
	b.tick = int64(cfg.Tick)
	if b.tick <= 0 {
		b.tick = int64(DefaultTick)
	}
	p := b.ceiling
	if b.rate == 0 {
		p = 0
	}
	b.p, b.th = p, thresholdOf(p)
}

// advance moves the tick to source time t (ticks never go back: an earlier t counts in
// the current tick).
func (b *budget) advance(t int64) {
	if !b.started {
		b.started, b.tickStart = true, t
		return
	}
	if t < b.tickStart+b.tick {
		return
	}
	elapsed := (t - b.tickStart) / b.tick
	if elapsed > maxIdleTicks {
		b.endTick(1)
		b.forcedRate, b.demandRate = 0, 0
		b.tickStart = t
		b.adjust()
		return
	}
	b.endTick(1)
	for i := int64(1); i < elapsed; i++ {
		b.endTick(0)
	}
	b.tickStart += elapsed * b.tick
	b.adjust()
}

// endTick folds the current tick's counts (times scale: 0 for an empty tick) into the
// rates and starts the next tick.
func (b *budget) endTick(scale float64) {
	perSecond := 1e9 / float64(b.tick)
	f, d := b.forcedN*perSecond*scale, b.demandN*perSecond*scale
	if !b.primed {
		b.forcedRate, b.demandRate, b.primed = f, d, true
	} else {
		b.forcedRate += ewmaWeight * (f - b.forcedRate)
		b.demandRate += ewmaWeight * (d - b.demandRate)
	}
	b.forcedN, b.demandN, b.keptN = 0, 0, 0
}

// adjust sets the probability from the smoothed rates.
func (b *budget) adjust() {
	want := b.ceiling
	if b.demandRate > 0 {
		want = math.Min(b.ceiling, math.Max(0, b.rate-b.forcedRate)/b.demandRate)
	}
	if b.rate == 0 {
		want = 0
	}
	if math.Abs(want-b.p) <= hysteresis*b.p && want != 0 && want != b.ceiling {
		return
	}
	b.setProbability(want)
}

// setProbability moves the probability share to p, counting the threshold's moves.
func (b *budget) setProbability(p float64) {
	if p < sampling.MinSamplingProbability {
		p = 0
	}
	th := thresholdOf(p)
	if th != b.th {
		b.moves++
	}
	b.p, b.th = p, th
}

// thresholdOf is the threshold of probability p (below the smallest the encoding has:
// never sample).
func thresholdOf(p float64) sampling.Threshold {
	if p < sampling.MinSamplingProbability {
		return sampling.NeverSampleThreshold
	}
	th, err := sampling.ProbabilityToThresholdWithPrecision(math.Min(p, 1), thresholdPrecision)
	if err != nil {
		return sampling.NeverSampleThreshold
	}
	return th
}

// forced counts spans a keep rule or a parent forced.
func (b *budget) forced(spans int) { b.forcedN += float64(spans) }

// eligible counts the spans of an item the probability share decided; a burst that
// keeps more than twice the tick's share halves the probability at once.
func (b *budget) eligible(spans int, kept bool) {
	b.demandN += float64(spans)
	if !kept {
		return
	}
	b.keptN += float64(spans)
	share := math.Max(0, b.rate*float64(b.tick)/1e9-b.forcedN)
	if b.keptN > 2*share && b.p > 0 {
		b.setProbability(b.p / 2)
		b.keptN = 0
	}
}
