// Package histogram is the cumulative explicit-bucket histogram (seconds,
// metadata.DurationBounds) shared by the DRM and CUDA metric recorders.
package histogram

import (
	"sort"

	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/ghostdriver/ghostdriver/internal/metadata"
)

// Histogram accumulates observations in metadata.DurationBounds buckets. OTLP buckets are
// upper-inclusive: bucket i counts (bounds[i-1], bounds[i]].
type Histogram struct {
	counts   []uint64 // len(metadata.DurationBounds)+1 once recorded
	count    uint64
	sum      float64
	min, max float64
}

// Record adds one observation (seconds).
func (h *Histogram) Record(v float64) {
	if h.counts == nil {
		h.counts = make([]uint64, len(metadata.DurationBounds)+1)
	}
	h.counts[sort.SearchFloat64s(metadata.DurationBounds, v)]++
	if h.count == 0 || v < h.min {
		h.min = v
	}
	if h.count == 0 || v > h.max {
		h.max = v
	}
	h.count++
	h.sum += v
}

// WriteTo fills a cumulative histogram data point (attributes and timestamps are the
// caller's).
func (h *Histogram) WriteTo(dp pmetric.HistogramDataPoint) {
	dp.SetCount(h.count)
	dp.SetSum(h.sum)
	dp.SetMin(h.min)
	dp.SetMax(h.max)
	dp.ExplicitBounds().FromRaw(metadata.DurationBounds)
	dp.BucketCounts().FromRaw(h.counts)
}
