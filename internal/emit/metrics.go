// MetricsRecorder: job and stage histograms, job counters and ring utilization from the
// assembled jobs, plus the source's and assembler's own counters, collected as cumulative
// pmetric data.
//
// Default attributes are low-cardinality only: driver, device, ring, stage, outcome and
// bound source. ghostdriver.device is among them because rings are per device: two GPUs
// both have a "gfx" ring, and merging them would double a ring's busy time. Further
// dimensions are opt-in (metadata.MetricsConfig.Dimensions).

package emit

import (
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/ghostdriver/ghostdriver/internal/assemble"
	"github.com/ghostdriver/ghostdriver/internal/event"
	"github.com/ghostdriver/ghostdriver/internal/metadata"
)

// AssemblerCounters are the assembler's counts the metrics need, kept separate from the
// assembler's own Stats layout. Completed and Incomplete are not emitted: the per-ring
// ghostdriver.jobs counter comes from the recorded jobs themselves.
type AssemblerCounters struct {
	Completed, Incomplete      uint64
	EvictedTimeout, EvictedCap uint64
	Pending                    int
	// DroppedSpans counts jobs whose spans the pipeline did not export (buffer full).
	DroppedSpans uint64
	// Events the assembler could not take as they came, by anomaly.
	Late, Duplicates, ClockJumps uint64
	// IoctlExitsNotSeen: finished jobs output without their submit ioctl's exit.
	IoctlExitsNotSeen uint64
	// Unmatched counts the events that matched no job, by kind name (assemble.Stats.Orphans).
	Unmatched map[string]uint64
	// Context: the enrich stage's counts, when the pipeline has one (live source).
	Context ContextCounters
}

// ContextCounters are the enrich stage's counts (internal/enrich), indexed as
// metadata.HoldOutcomes and metadata.RediscoveryOutcomes. Written only when Enriched.
type ContextCounters struct {
	Enriched    bool
	Held        [4]uint64
	Rediscovery [3]uint64
}

// MetricsRecorder accumulates job metrics between collections. It is not safe for
// concurrent use.
type MetricsRecorder struct {
	cfg   metadata.MetricsConfig
	start pcommon.Timestamp
	dims  dimensions

	series series
	clock  busyClock

	unknown unknownNames
}

// NewMetricsRecorder returns a recorder whose cumulative data points start at start.
func NewMetricsRecorder(cfg metadata.MetricsConfig, start time.Time) *MetricsRecorder {
	return &MetricsRecorder{
		cfg:   cfg,
		start: pcommon.NewTimestampFromTime(start),
		dims:  newDimensions(cfg.Dimensions),
	}
}

// RecordJob adds one assembled job. Durations and ring utilization are computed on the
// source clock from the job's own bounds, so the clock argument is unused today; it is in
// the signature for exemplars, which will need the wall time of the job's span.
func (m *MetricsRecorder) RecordJob(j *assemble.Job, _ event.Clock) {
	g := m.series.group(groupKey{ringKey{j.Driver, j.Device, j.Ring}, m.dims.key(j)})
	if m.cfg.GhostdriverStageDuration.Enabled {
		for i := range j.Stages {
			st := &j.Stages[i]
			if h := m.series.stageHist(g, st.Src, st.Stage); h != nil {
				h.Record(seconds(st.End - st.Start))
			}
		}
	}
	if m.cfg.GhostdriverJobDuration.Enabled {
		if h := m.series.jobHist(g, j.Outcome); h != nil {
			h.Record(seconds(j.End - j.Start))
		}
	}
	if m.cfg.GhostdriverJobs.Enabled {
		if n := m.series.jobCount(g, j.Outcome); n != nil {
			*n++
		}
	}
	m.clock.observe(j.Start)
	m.clock.observe(j.End)
	if m.cfg.GhostdriverRingBusyRatio.Enabled || m.cfg.GhostdriverRingBusyTime.Enabled {
		if ex, ok := j.Stage(assemble.StageExecution); ok && ex.End > ex.Start {
			m.clock.observe(ex.Start)
			m.clock.observe(ex.End)
			m.series.busyOf(g.ring).add(interval{ex.Start, ex.End}, &m.clock)
		}
	}
}

// Watermark tells the recorder that source time has reached t (the source's watermark):
// it ends busy_ratio windows where the source is, so idle time after the last job counts.
func (m *MetricsRecorder) Watermark(t int64) { m.clock.observe(t) }

// seconds converts a source-clock duration in ns to seconds; negative becomes 0.
func seconds(ns int64) float64 {
	if ns < 0 {
		return 0
	}
	return float64(ns) / 1e9
}

// Collect returns every enabled metric that has data points, cumulative since the
// recorder's start, timestamped now. It also closes the busy_ratio window.
func (m *MetricsRecorder) Collect(now time.Time, src event.SourceStats, asm AssemblerCounters) pmetric.Metrics {
	md := pmetric.NewMetrics()
	sm := md.ResourceMetrics().AppendEmpty().ScopeMetrics().AppendEmpty()
	sm.Scope().SetName(metadata.ScopeName)
	sm.Scope().SetVersion(metadata.ScopeVersion)
	c := collection{start: m.start, now: pcommon.NewTimestampFromTime(now), ms: sm.Metrics()}

	m.collectBusy() // accounts pending intervals whether or not the metrics are enabled
	for i := range metadata.Metrics {
		d := &metadata.Metrics[i]
		if !m.cfg.Enabled(d.Name) {
			continue
		}
		switch d.Name {
		case metadata.MetricStageDuration:
			m.writeStageDurations(c, d)
		case metadata.MetricJobDuration:
			m.writeJobDurations(c, d)
		case metadata.MetricJobs:
			m.writeJobs(c, d)
		case metadata.MetricRingBusyRatio:
			m.writeBusyRatio(c, d)
		case metadata.MetricRingBusyTime:
			m.writeBusyTime(c, d)
		case metadata.MetricDecoderEvents:
			writeDecoderEvents(c, d, &src)
		case metadata.MetricDecoderUnknownEvents:
			m.unknown.write(c, d, src.Unknown)
		case metadata.MetricDecoderMalformed:
			c.sumPoint(c.metric(d).Sum().DataPoints(), src.Malformed)
		case metadata.MetricDecoderTruncated:
			c.sumPoint(c.metric(d).Sum().DataPoints(), src.Truncated)
		case metadata.MetricSourceLostEvents:
			c.sumPoint(c.metric(d).Sum().DataPoints(), src.Lost)
		case metadata.MetricSourceKernelDrops:
			writeKernelDrops(c, d, src.KernelDrops)
		case metadata.MetricJobEvictions:
			dps := c.metric(d).Sum().DataPoints()
			c.sumPoint(dps, asm.EvictedTimeout).Attributes().PutStr(metadata.AttrEvictionReason, metadata.EvictionReasonTimeout)
			c.sumPoint(dps, asm.EvictedCap).Attributes().PutStr(metadata.AttrEvictionReason, metadata.EvictionReasonMaxPending)
		case metadata.MetricJobPending:
			dp := c.metric(d).Gauge().DataPoints().AppendEmpty()
			dp.SetTimestamp(c.now)
			dp.SetIntValue(int64(asm.Pending))
		case metadata.MetricJobSpansDropped:
			c.sumPoint(c.metric(d).Sum().DataPoints(), asm.DroppedSpans)
		case metadata.MetricSourceHooks:
			writeHooks(c, d, src.Hooks)
		case metadata.MetricAssemblerAnomalies:
			dps := c.metric(d).Sum().DataPoints()
			c.sumPoint(dps, asm.Late).Attributes().PutStr(metadata.AttrAnomaly, metadata.AnomalyLate)
			c.sumPoint(dps, asm.Duplicates).Attributes().PutStr(metadata.AttrAnomaly, metadata.AnomalyDuplicate)
			c.sumPoint(dps, asm.ClockJumps).Attributes().PutStr(metadata.AttrAnomaly, metadata.AnomalyClockJump)
			c.sumPoint(dps, asm.IoctlExitsNotSeen).Attributes().PutStr(metadata.AttrAnomaly, metadata.AnomalyIoctlExitNotSeen)
		case metadata.MetricAssemblerUnmatched:
			writeUnmatched(c, d, asm.Unmatched)
		case metadata.MetricContextHeldJobs:
			writeOutcomes(c, d, asm.Context.Enriched, metadata.AttrHoldOutcome, metadata.HoldOutcomes, asm.Context.Held[:])
		case metadata.MetricContextRediscoveries:
			writeOutcomes(c, d, asm.Context.Enriched, metadata.AttrRediscoveryOutcome, metadata.RediscoveryOutcomes, asm.Context.Rediscovery[:])
		}
	}
	m.closeBusyWindow()
	c.ms.RemoveIf(func(x pmetric.Metric) bool { return dataPoints(x) == 0 })
	return md
}

// writeOutcomes writes one cumulative point per outcome (nothing without an enrich stage).
func writeOutcomes(c collection, d *metadata.MetricDesc, on bool, key string, names []string, counts []uint64) {
	if !on {
		return
	}
	dps := c.metric(d).Sum().DataPoints()
	for i, name := range names {
		c.sumPoint(dps, counts[i]).Attributes().PutStr(key, name)
	}
}

// writeKernelDrops writes one cumulative point per reason of the live source (none for
// a source without a kernel side).
func writeKernelDrops(c collection, d *metadata.MetricDesc, drops map[string]uint64) {
	if drops == nil {
		return
	}
	dps := c.metric(d).Sum().DataPoints()
	for _, reason := range event.KernelDropReasons {
		c.sumPoint(dps, drops[reason]).Attributes().PutStr(metadata.AttrKernelDropReason, reason)
	}
}

// writeHooks renders the capability report: one point of value 1 per stage and hook.
func writeHooks(c collection, d *metadata.MetricDesc, hooks []event.HookStatus) {
	if len(hooks) == 0 {
		return
	}
	dps := c.metric(d).Gauge().DataPoints()
	for _, h := range hooks {
		dp := dps.AppendEmpty()
		dp.SetTimestamp(c.now)
		dp.SetIntValue(1)
		a := dp.Attributes()
		a.PutStr(metadata.AttrHookStage, h.Stage)
		a.PutStr(metadata.AttrHookName, h.Hook)
		a.PutStr(metadata.AttrHookStatus, h.Status)
		a.PutStr(metadata.AttrHookReason, h.Reason)
	}
}
