// series: the durations of one (ring, stage) cell of the summary, in bounded memory.
//
// Up to exactCap values are kept as they are and the percentiles are exact (every capture
// the project ships, and any run of up to 65 536 jobs a ring). Past that the values move
// into a logarithmic sketch with a relative error of at most sketchAlpha (the DDSketch
// construction: bucket i holds (γ^(i-1), γ^i], γ = (1+α)/(1-α), and answers with the
// value 2γ^i/(γ+1)), so a replay of any size holds a few thousand counters per cell, not
// 8 bytes per job; the table marks such percentiles with "≈".

package summary

import (
	"math"
	"sort"
)

const (
	exactCap    = 1 << 16
	sketchAlpha = 0.005
)

var (
	sketchGamma  = (1 + sketchAlpha) / (1 - sketchAlpha)
	sketchLogGam = math.Log(sketchGamma)
)

type series struct {
	exact  []int64
	n      int
	zeros  int            // values ≤ 0 once sketched (durations of 0 are common)
	counts map[int]uint64 // bucket index → count, once sketched
}

func (s *series) add(v int64) {
	s.n++
	if s.counts == nil {
		s.exact = append(s.exact, v)
		if len(s.exact) <= exactCap {
			return
		}
		s.counts = map[int]uint64{}
		for _, x := range s.exact {
			s.sketch(x)
		}
		s.exact = nil
		return
	}
	s.sketch(v)
}

func (s *series) sketch(v int64) {
	if v <= 0 {
		s.zeros++
		return
	}
	s.counts[int(math.Ceil(math.Log(float64(v))/sketchLogGam))]++
}

// approx reports whether the percentiles are the sketch's.
func (s *series) approx() bool { return s.counts != nil }

// percentile returns the nearest-rank p-th percentile.
func (s *series) percentile(p float64) int64 {
	if s.counts == nil {
		return Percentile(s.exact, p)
	}
	rank := int(math.Ceil(p/100*float64(s.n))) - 1
	rank = max(0, min(rank, s.n-1))
	if rank < s.zeros {
		return 0
	}
	keys := make([]int, 0, len(s.counts))
	for k := range s.counts {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	seen := s.zeros
	for _, k := range keys {
		seen += int(s.counts[k])
		if rank < seen {
			return round3(2 * math.Pow(sketchGamma, float64(k)) / (sketchGamma + 1))
		}
	}
	return 0
}

// round3 rounds to three significant digits: the sketch's answer is ±0.5 %, more digits
// would only print noise.
func round3(v float64) int64 {
	if v < 1000 {
		return int64(math.Round(v))
	}
	e := math.Pow(10, math.Floor(math.Log10(v))-2)
	return int64(math.Round(v/e) * e)
}
