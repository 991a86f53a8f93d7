// Writing the recorder's state as pmetric data points: one function per metric family.

package emit

import (
	"math"
	"slices"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/ghostdriver/ghostdriver/internal/emit/histogram"
	"github.com/ghostdriver/ghostdriver/internal/event"
	"github.com/ghostdriver/ghostdriver/internal/metadata"
)

// collection is one Collect call's output and timestamps.
type collection struct {
	start, now pcommon.Timestamp
	ms         pmetric.MetricSlice
}

// metric appends an empty metric of descriptor d.
func (c collection) metric(d *metadata.MetricDesc) pmetric.Metric { return d.AppendTo(c.ms) }

// sumPoint appends a cumulative int data point.
func (c collection) sumPoint(dps pmetric.NumberDataPointSlice, v uint64) pmetric.NumberDataPoint {
	dp := dps.AppendEmpty()
	dp.SetStartTimestamp(c.start)
	dp.SetTimestamp(c.now)
	dp.SetIntValue(int64(min(v, math.MaxInt64)))
	return dp
}

func (c collection) histPoint(dps pmetric.HistogramDataPointSlice, h *histogram.Histogram) pmetric.HistogramDataPoint {
	dp := dps.AppendEmpty()
	dp.SetStartTimestamp(c.start)
	dp.SetTimestamp(c.now)
	h.WriteTo(dp)
	return dp
}

// dataPoints counts a metric's data points.
func dataPoints(m pmetric.Metric) int {
	switch m.Type() {
	case pmetric.MetricTypeHistogram:
		return m.Histogram().DataPoints().Len()
	case pmetric.MetricTypeSum:
		return m.Sum().DataPoints().Len()
	case pmetric.MetricTypeGauge:
		return m.Gauge().DataPoints().Len()
	}
	return 0
}

// putRing sets the ring attributes that are known.
func putRing(a pcommon.Map, k ringKey) {
	if k.driver != "" {
		a.PutStr(metadata.AttrDriver, k.driver)
	}
	if k.device != "" {
		a.PutStr(metadata.AttrDevice, k.device)
	}
	if k.ring != "" {
		a.PutStr(metadata.AttrRing, k.ring)
	}
}

// putDims sets the configured optional dimensions that have a value.
func (m *MetricsRecorder) putDims(a pcommon.Map, key string) {
	for i, v := range m.dims.values(key) {
		if v != "" {
			a.PutStr(m.dims.keys[i], v)
		}
	}
}

func (m *MetricsRecorder) writeStageDurations(c collection, d *metadata.MetricDesc) {
	dps := c.metric(d).Histogram().DataPoints()
	dps.EnsureCapacity(len(m.series.stageOrder))
	for _, r := range m.series.stageOrder {
		a := c.histPoint(dps, r.g.stage[r.src][r.stage]).Attributes()
		a.PutStr(metadata.AttrStageName, r.stage.String())
		a.PutStr(metadata.AttrStageSource, r.src.String())
		putRing(a, r.g.key.ringKey)
		m.putDims(a, r.g.key.dims)
	}
}

func (m *MetricsRecorder) writeJobDurations(c collection, d *metadata.MetricDesc) {
	dps := c.metric(d).Histogram().DataPoints()
	dps.EnsureCapacity(len(m.series.jobDurOrder))
	for _, r := range m.series.jobDurOrder {
		a := c.histPoint(dps, r.g.jobDur[r.outcome]).Attributes()
		putRing(a, r.g.key.ringKey)
		a.PutStr(metadata.AttrJobOutcome, r.outcome.String())
		m.putDims(a, r.g.key.dims)
	}
}

func (m *MetricsRecorder) writeJobs(c collection, d *metadata.MetricDesc) {
	dps := c.metric(d).Sum().DataPoints()
	dps.EnsureCapacity(len(m.series.jobsOrder))
	for _, r := range m.series.jobsOrder {
		a := c.sumPoint(dps, *r.g.jobs[r.outcome]).Attributes()
		putRing(a, r.g.key.ringKey)
		a.PutStr(metadata.AttrJobOutcome, r.outcome.String())
		m.putDims(a, r.g.key.dims)
	}
}

// collectBusy accounts every ring's pending execution intervals.
func (m *MetricsRecorder) collectBusy() {
	for _, r := range m.series.ringOrder {
		r.busy.flush(&m.clock)
	}
}

// closeBusyWindow starts the next busy_ratio window at the current mark.
func (m *MetricsRecorder) closeBusyWindow() {
	if _, _, ok := m.clock.window(); !ok {
		return // no source progress: keep accumulating into the same window
	}
	for _, r := range m.series.ringOrder {
		r.busy.window = 0
	}
	m.clock.close()
}

func (m *MetricsRecorder) writeBusyRatio(c collection, d *metadata.MetricDesc) {
	start, end, ok := m.clock.window()
	if !ok {
		return
	}
	span := float64(end - start)
	dps := c.metric(d).Gauge().DataPoints()
	dps.EnsureCapacity(len(m.series.ringOrder))
	for _, r := range m.series.ringOrder {
		dp := dps.AppendEmpty()
		dp.SetTimestamp(c.now)
		dp.SetDoubleValue(min(1, float64(r.busy.window)/span))
		putRing(dp.Attributes(), r.key)
	}
}

func (m *MetricsRecorder) writeBusyTime(c collection, d *metadata.MetricDesc) {
	dps := c.metric(d).Sum().DataPoints()
	dps.EnsureCapacity(len(m.series.ringOrder))
	for _, r := range m.series.ringOrder {
		dp := dps.AppendEmpty()
		dp.SetStartTimestamp(c.start)
		dp.SetTimestamp(c.now)
		dp.SetDoubleValue(seconds(r.busy.total))
		putRing(dp.Attributes(), r.key)
	}
}

// writeDecoderEvents writes one point per kind the source has decoded at least once.
func writeDecoderEvents(c collection, d *metadata.MetricDesc, src *event.SourceStats) {
	dps := c.metric(d).Sum().DataPoints()
	for _, k := range event.Kinds() {
		if n := src.EventsOf(k); n > 0 {
			c.sumPoint(dps, n).Attributes().PutStr(metadata.AttrEventKind, k.String())
		}
	}
}

// writeUnmatched writes one point per event kind that matched no job, in kind order (the
// kinds are a fixed set, so the series are bounded).
func writeUnmatched(c collection, d *metadata.MetricDesc, unmatched map[string]uint64) {
	if len(unmatched) == 0 {
		return
	}
	dps := c.metric(d).Sum().DataPoints()
	for _, k := range event.Kinds() {
		if n := unmatched[k.String()]; n > 0 {
			c.sumPoint(dps, n).Attributes().PutStr(metadata.AttrEventKind, k.String())
		}
	}
}

// maxUnknownNames bounds the per-name series of ghostdriver.decoder.unknown_events; a
// full trace-cmd report can carry any number of event families.
const maxUnknownNames = 64

// unknownNames remembers which unknown-event names have a series of their own. The set
// only grows (first come, in name order within a collection), so every series, including
// the "_other" remainder, stays monotonic.
type unknownNames struct {
	own    map[string]bool
	sorted []string // scratch
}

func (u *unknownNames) write(c collection, d *metadata.MetricDesc, counts map[string]uint64) {
	if len(counts) == 0 {
		return
	}
	if u.own == nil {
		u.own = make(map[string]bool)
	}
	u.sorted = u.sorted[:0]
	for name := range counts {
		u.sorted = append(u.sorted, name)
	}
	slices.Sort(u.sorted)
	dps := c.metric(d).Sum().DataPoints()
	var other uint64
	hasOther := false
	for _, name := range u.sorted {
		if !u.own[name] && len(u.own) < maxUnknownNames {
			u.own[name] = true
		}
		if !u.own[name] {
			other += counts[name]
			hasOther = true
			continue
		}
		c.sumPoint(dps, counts[name]).Attributes().PutStr(metadata.AttrEventName, name)
	}
	if hasOther {
		c.sumPoint(dps, other).Attributes().PutStr(metadata.AttrEventName, metadata.EventNameOther)
	}
}
