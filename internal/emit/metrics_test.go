// Tests of the metrics: known jobs in, histogram buckets, counters, ring utilization and
// the source/assembler counters out, cumulative across collections.
package emit

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/ghostdriver/ghostdriver/internal/assemble"
	"github.com/ghostdriver/ghostdriver/internal/attr"
	"github.com/ghostdriver/ghostdriver/internal/event"
	"github.com/ghostdriver/ghostdriver/internal/metadata"
)

var (
	t0 = time.Unix(1_700_000_000, 0)
	t1 = t0.Add(10 * time.Second)
	t2 = t0.Add(20 * time.Second)
)

func metricsByName(md pmetric.Metrics) map[string]pmetric.Metric {
	out := map[string]pmetric.Metric{}
	rms := md.ResourceMetrics()
	for i := 0; i < rms.Len(); i++ {
		sms := rms.At(i).ScopeMetrics()
		for k := 0; k < sms.Len(); k++ {
			ms := sms.At(k).Metrics()
			for n := 0; n < ms.Len(); n++ {
				out[ms.At(n).Name()] = ms.At(n)
			}
		}
	}
	return out
}

// matches reports whether attrs equal want exactly.
func matches(attrs pcommon.Map, want map[string]any) bool {
	return reflect.DeepEqual(attrs.AsRaw(), want)
}

func histPoint(t *testing.T, m pmetric.Metric, want map[string]any) pmetric.HistogramDataPoint {
	t.Helper()
	dps := m.Histogram().DataPoints()
	for i := 0; i < dps.Len(); i++ {
		if matches(dps.At(i).Attributes(), want) {
			return dps.At(i)
		}
	}
	t.Fatalf("%s: no data point with %v", m.Name(), want)
	return pmetric.HistogramDataPoint{}
}

func numPoint(t *testing.T, m pmetric.Metric, want map[string]any) pmetric.NumberDataPoint {
	t.Helper()
	var dps pmetric.NumberDataPointSlice
	switch m.Type() {
	case pmetric.MetricTypeSum:
		dps = m.Sum().DataPoints()
	case pmetric.MetricTypeGauge:
		dps = m.Gauge().DataPoints()
	default:
		t.Fatalf("metric %q is %v, not a sum or gauge", m.Name(), m.Type())
	}
	for i := 0; i < dps.Len(); i++ {
		if matches(dps.At(i).Attributes(), want) {
			return dps.At(i)
		}
	}
	t.Fatalf("%s: no data point with %v", m.Name(), want)
	return pmetric.NumberDataPoint{}
}

// buckets returns counts with ones at the given bucket indexes (repeated = more).
func buckets(idx ...int) []uint64 {
	out := make([]uint64, len(metadata.DurationBounds)+1)
	for _, i := range idx {
		out[i]++
	}
	return out
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Max(1, math.Abs(b)) }

var gfx = map[string]any{"ghostdriver.driver": "amdgpu", "ghostdriver.device": "0000:03:00.0", "ghostdriver.ring": "gfx"}

func with(base map[string]any, kv ...any) map[string]any {
	out := map[string]any{}
	for k, v := range base {
		out[k] = v
	}
	for i := 0; i < len(kv); i += 2 {
		out[kv[i].(string)] = kv[i+1]
	}
	return out
}

func TestStageAndJobHistograms(t *testing.T) {
	m := NewMetricsRecorder(noDims(), t0)
	m.RecordJob(fullJob(), testClock)
	m.RecordJob(partialJob(), testClock)
	ms := metricsByName(m.Collect(t1, event.SourceStats{}, AssemblerCounters{}))

	stage := ms["ghostdriver.stage.duration"]
	if stage.Unit() != "s" || stage.Histogram().AggregationTemporality() != pmetric.AggregationTemporalityCumulative {
		t.Fatalf("stage.duration unit %q temporality %v", stage.Unit(), stage.Histogram().AggregationTemporality())
	}
	// fullJob: execution 4800 ns → (2.5 µs, 5 µs], bucket 2.
	dp := histPoint(t, stage, with(gfx, "ghostdriver.stage.name", "execution", "ghostdriver.stage.source", "measured"))
	if dp.Count() != 1 || !near(dp.Sum(), 4.8e-6) || !reflect.DeepEqual(dp.BucketCounts().AsRaw(), buckets(2)) {
		t.Errorf("measured execution: count %d sum %g buckets %v", dp.Count(), dp.Sum(), dp.BucketCounts().AsRaw())
	}
	if !reflect.DeepEqual(dp.ExplicitBounds().AsRaw(), metadata.DurationBounds) {
		t.Errorf("bounds %v", dp.ExplicitBounds().AsRaw())
	}
	if dp.StartTimestamp() != pcommon.NewTimestampFromTime(t0) || dp.Timestamp() != pcommon.NewTimestampFromTime(t1) {
		t.Errorf("timestamps %v → %v", dp.StartTimestamp(), dp.Timestamp())
	}
	// ioctl 1000 ns is exactly 1 µs: buckets are upper-inclusive, so bucket 0.
	dp = histPoint(t, stage, with(gfx, "ghostdriver.stage.name", "ioctl", "ghostdriver.stage.source", "measured"))
	if !reflect.DeepEqual(dp.BucketCounts().AsRaw(), buckets(0)) || dp.Min() != 1e-6 || dp.Max() != 1e-6 {
		t.Errorf("ioctl buckets %v min %g max %g", dp.BucketCounts().AsRaw(), dp.Min(), dp.Max())
	}
	// partialJob: inferred execution 10600 ns → (10 µs, 25 µs], bucket 4; own series.
	dp = histPoint(t, stage, with(gfx, "ghostdriver.stage.name", "execution", "ghostdriver.stage.source", "inferred"))
	if dp.Count() != 1 || !near(dp.Sum(), 10.6e-6) || !reflect.DeepEqual(dp.BucketCounts().AsRaw(), buckets(4)) {
		t.Errorf("inferred execution: count %d sum %g buckets %v", dp.Count(), dp.Sum(), dp.BucketCounts().AsRaw())
	}
	if n := stage.Histogram().DataPoints().Len(); n != 8+4 {
		t.Errorf("%d stage series, want 8 measured + 4 inferred", n)
	}

	// job.duration: 7300 ns and 11000 ns, both completed on gfx.
	job := ms["ghostdriver.job.duration"]
	dp = histPoint(t, job, with(gfx, "ghostdriver.job.outcome", "completed"))
	if dp.Count() != 2 || !near(dp.Sum(), 18.3e-6) || dp.Min() != 7.3e-6 || dp.Max() != 11e-6 ||
		!reflect.DeepEqual(dp.BucketCounts().AsRaw(), buckets(3, 4)) {
		t.Errorf("job.duration: count %d sum %g min %g max %g buckets %v", dp.Count(), dp.Sum(), dp.Min(), dp.Max(), dp.BucketCounts().AsRaw())
	}
	jobs := ms["ghostdriver.jobs"]
	if !jobs.Sum().IsMonotonic() || jobs.Sum().AggregationTemporality() != pmetric.AggregationTemporalityCumulative {
		t.Error("ghostdriver.jobs is not a cumulative monotonic sum")
	}
	if v := numPoint(t, jobs, with(gfx, "ghostdriver.job.outcome", "completed")).IntValue(); v != 2 {
		t.Errorf("jobs completed = %d, want 2", v)
	}
}

func TestCollectIsCumulative(t *testing.T) {
	m := NewMetricsRecorder(noDims(), t0)
	m.RecordJob(fullJob(), testClock)
	m.Collect(t1, event.SourceStats{}, AssemblerCounters{})
	m.RecordJob(fullJob(), testClock)
	m.RecordJob(incompleteJob(), testClock)
	ms := metricsByName(m.Collect(t2, event.SourceStats{}, AssemblerCounters{}))

	dp := histPoint(t, ms["ghostdriver.job.duration"], with(gfx, "ghostdriver.job.outcome", "completed"))
	if dp.Count() != 2 || !near(dp.Sum(), 14.6e-6) || !reflect.DeepEqual(dp.BucketCounts().AsRaw(), buckets(3, 3)) {
		t.Errorf("second collection: count %d sum %g buckets %v", dp.Count(), dp.Sum(), dp.BucketCounts().AsRaw())
	}
	if dp.StartTimestamp() != pcommon.NewTimestampFromTime(t0) || dp.Timestamp() != pcommon.NewTimestampFromTime(t2) {
		t.Errorf("timestamps %v → %v, want fixed start and now", dp.StartTimestamp(), dp.Timestamp())
	}
	comp := map[string]any{"ghostdriver.driver": "amdgpu", "ghostdriver.device": "0000:03:00.0", "ghostdriver.ring": "comp_1.0.0"}
	if v := numPoint(t, ms["ghostdriver.jobs"], with(comp, "ghostdriver.job.outcome", "incomplete")).IntValue(); v != 1 {
		t.Errorf("incomplete jobs = %d", v)
	}
	if v := numPoint(t, ms["ghostdriver.jobs"], with(gfx, "ghostdriver.job.outcome", "completed")).IntValue(); v != 2 {
		t.Errorf("completed jobs = %d, want 2 (cumulative)", v)
	}
}

// execJob is a job whose only stage is an execution interval [s, e] on ring of device.
func execJob(device, ring string, s, e int64) *assemble.Job {
	return &assemble.Job{
		Driver: "amdgpu", Device: device, Ring: ring,
		Stages: []assemble.StageSpan{measured(assemble.StageExecution, s, e, "")},
		Start:  s, End: e,
	}
}

func TestRingBusyRatioIsTheUnionOverTheWindow(t *testing.T) {
	m := NewMetricsRecorder(noDims(), t0)
	dev := "0000:03:00.0"
	// [0,100] ∪ [50,150] ∪ [300,400] = 250 ns busy; window [0, 1000] by watermark.
	m.RecordJob(execJob(dev, "gfx", 300, 400), testClock)
	m.RecordJob(execJob(dev, "gfx", 0, 100), testClock)
	m.RecordJob(execJob(dev, "gfx", 50, 150), testClock)
	// Same ring name on another device: its own series, not merged.
	m.RecordJob(execJob("0000:04:00.0", "gfx", 0, 1000), testClock)
	m.Watermark(1000)
	ms := metricsByName(m.Collect(t1, event.SourceStats{}, AssemblerCounters{}))

	ratio, busy := ms["ghostdriver.ring.busy_ratio"], ms["ghostdriver.ring.busy_time"]
	if v := numPoint(t, ratio, gfx).DoubleValue(); !near(v, 0.25) {
		t.Errorf("busy_ratio = %g, want 0.25", v)
	}
	other := with(gfx, "ghostdriver.device", "0000:04:00.0")
	if v := numPoint(t, ratio, other).DoubleValue(); !near(v, 1) {
		t.Errorf("other device busy_ratio = %g, want 1", v)
	}
	if v := numPoint(t, busy, gfx).DoubleValue(); !near(v, 250e-9) {
		t.Errorf("busy_time = %g, want 250 ns", v)
	}
	if !busy.Sum().IsMonotonic() || busy.Unit() != "s" || ratio.Unit() != "1" {
		t.Error("busy metric shape")
	}

	// Next window [1000, 2000]: [900,1100] is new busy time (200 ns), of which 100 ns
	// lie inside the window; the part before it was already reported. [350,450] arrives
	// after [300,400] was accounted: only [400,450] is new, and none of it in the window.
	m.RecordJob(execJob(dev, "gfx", 900, 1100), testClock)
	m.RecordJob(execJob(dev, "gfx", 350, 450), testClock)
	m.Watermark(2000)
	ms = metricsByName(m.Collect(t2, event.SourceStats{}, AssemblerCounters{}))
	if v := numPoint(t, ms["ghostdriver.ring.busy_ratio"], gfx).DoubleValue(); !near(v, 0.1) {
		t.Errorf("second busy_ratio = %g, want 0.1", v)
	}
	if v := numPoint(t, ms["ghostdriver.ring.busy_ratio"], other).DoubleValue(); v != 0 {
		t.Errorf("idle ring busy_ratio = %g, want 0", v)
	}
	if v := numPoint(t, ms["ghostdriver.ring.busy_time"], gfx).DoubleValue(); !near(v, 500e-9) {
		t.Errorf("second busy_time = %g, want 500 ns", v)
	}

	// No source progress: no ratio (nothing to divide by), busy_time unchanged.
	ms = metricsByName(m.Collect(t2.Add(time.Second), event.SourceStats{}, AssemblerCounters{}))
	if _, ok := ms["ghostdriver.ring.busy_ratio"]; ok {
		t.Error("busy_ratio emitted for an empty window")
	}
	if v := numPoint(t, ms["ghostdriver.ring.busy_time"], gfx).DoubleValue(); !near(v, 500e-9) {
		t.Errorf("busy_time after an empty window = %g", v)
	}
}

// Without watermarks, the window ends at the latest job end seen.
func TestRingBusyWindowFromJobsAlone(t *testing.T) {
	m := NewMetricsRecorder(noDims(), t0)
	j := execJob("", "gfx", 200, 300)
	j.Start, j.End = 0, 400 // job span wider than its execution
	m.RecordJob(j, testClock)
	ms := metricsByName(m.Collect(t1, event.SourceStats{}, AssemblerCounters{}))
	want := map[string]any{"ghostdriver.driver": "amdgpu", "ghostdriver.ring": "gfx"}
	if v := numPoint(t, ms["ghostdriver.ring.busy_ratio"], want).DoubleValue(); !near(v, 0.25) {
		t.Errorf("busy_ratio = %g, want 100/400", v)
	}
}

// More intervals than the per-ring reorder bound between two collections, arriving out
// of order (each block of 16 reversed) and overlapping: the union is exact.
func TestRingBusyManyIntervalsOutOfOrder(t *testing.T) {
	var ivs []interval
	for i := int64(0); i < 5*busyReorder; i++ {
		s := i * 100
		ivs = append(ivs, interval{s, s + 50})
		if i%7 == 3 {
			ivs = append(ivs, interval{s + 20, s + 130}) // bridges into the next slot
		}
	}
	for b := 0; b < len(ivs); b += 16 {
		slices.Reverse(ivs[b:min(b+16, len(ivs))])
	}
	// Expected: sort, merge, sum.
	sorted := slices.Clone(ivs)
	slices.SortFunc(sorted, func(a, b interval) int { return int(a.start - b.start) })
	var want, end int64 = 0, math.MinInt64
	for _, iv := range sorted {
		s := max(iv.start, end)
		if iv.end > s {
			want += iv.end - s
		}
		end = max(end, iv.end)
	}

	m := NewMetricsRecorder(noDims(), t0)
	for _, iv := range ivs {
		m.RecordJob(execJob("", "gfx", iv.start, iv.end), testClock)
	}
	m.Watermark(5 * busyReorder * 100)
	ms := metricsByName(m.Collect(t1, event.SourceStats{}, AssemblerCounters{}))
	attrs := map[string]any{"ghostdriver.driver": "amdgpu", "ghostdriver.ring": "gfx"}
	if v := numPoint(t, ms["ghostdriver.ring.busy_time"], attrs).DoubleValue(); !near(v, float64(want)*1e-9) {
		t.Errorf("busy_time = %g, want %g", v, float64(want)*1e-9)
	}
	if v := numPoint(t, ms["ghostdriver.ring.busy_ratio"], attrs).DoubleValue(); !near(v, float64(want)/(5*busyReorder*100)) {
		t.Errorf("busy_ratio = %g, want %g", v, float64(want)/(5*busyReorder*100))
	}
}

func TestDisabledMetricsAreAbsent(t *testing.T) {
	cfg := noDims()
	cfg.GhostdriverStageDuration.Enabled = false
	cfg.GhostdriverRingBusyRatio.Enabled = false
	cfg.GhostdriverDecoderUnknownEvents.Enabled = false
	m := NewMetricsRecorder(cfg, t0)
	for _, j := range allJobs() {
		m.RecordJob(j, testClock)
	}
	src := event.SourceStats{Unknown: map[string]uint64{"sched_switch": 3}}
	ms := metricsByName(m.Collect(t1, src, AssemblerCounters{}))
	for _, name := range []string{"ghostdriver.stage.duration", "ghostdriver.ring.busy_ratio", "ghostdriver.decoder.unknown_events"} {
		if _, ok := ms[name]; ok {
			t.Errorf("%s emitted while disabled", name)
		}
	}
	for _, name := range []string{"ghostdriver.job.duration", "ghostdriver.jobs", "ghostdriver.ring.busy_time", "ghostdriver.job.pending"} {
		if _, ok := ms[name]; !ok {
			t.Errorf("%s missing", name)
		}
	}
}

func TestSourceAndAssemblerCounters(t *testing.T) {
	m := NewMetricsRecorder(noDims(), t0)
	var src event.SourceStats
	src.Events[event.JobQueue] = 10
	src.Events[event.FenceSignaled] = 25
	src.Unknown = map[string]uint64{}
	for i := 0; i < maxUnknownNames+6; i++ {
		src.Unknown[fmt.Sprintf("ev_%03d", i)] = uint64(i + 1)
	}
	src.Malformed, src.Lost, src.Truncated = 4, 9, 1
	src.Hooks = []event.HookStatus{
		{Stage: "ioctl", Hook: "tracepoint/syscalls/sys_enter_ioctl", Status: "attached"},
		{Stage: "queue", Hook: "tp_btf/drm_sched_job_queue", Status: "unavailable", Reason: "tracepoint not present"},
	}
	asm := AssemblerCounters{Completed: 8, Incomplete: 1, EvictedTimeout: 2, EvictedCap: 3, Pending: 17, DroppedSpans: 5,
		Late: 6, Duplicates: 7, ClockJumps: 1}
	ms := metricsByName(m.Collect(t1, src, asm))

	hooks := ms["ghostdriver.source.hooks"]
	if hooks.Gauge().DataPoints().Len() != 2 {
		t.Errorf("%d hook points, want one per report line", hooks.Gauge().DataPoints().Len())
	}
	if v := numPoint(t, hooks, map[string]any{"ghostdriver.hook.stage": "queue", "ghostdriver.hook.status": "unavailable",
		"ghostdriver.hook.name": "tp_btf/drm_sched_job_queue", "ghostdriver.hook.reason": "tracepoint not present"}).IntValue(); v != 1 {
		t.Errorf("unavailable hook point = %d", v)
	}
	anom := ms["ghostdriver.assembler.anomalies"]
	for kind, want := range map[string]int64{"late": 6, "duplicate": 7, "clock_jump": 1} {
		if v := numPoint(t, anom, map[string]any{"ghostdriver.anomaly": kind}).IntValue(); v != want {
			t.Errorf("anomalies %s = %d, want %d", kind, v, want)
		}
	}

	ev := ms["ghostdriver.decoder.events"]
	if ev.Sum().DataPoints().Len() != 2 {
		t.Errorf("%d decoder.events points, want one per kind seen", ev.Sum().DataPoints().Len())
	}
	if v := numPoint(t, ev, map[string]any{"ghostdriver.event.kind": "job_queue"}).IntValue(); v != 10 {
		t.Errorf("job_queue = %d", v)
	}
	if v := numPoint(t, ev, map[string]any{"ghostdriver.event.kind": "fence_signaled"}).IntValue(); v != 25 {
		t.Errorf("fence_signaled = %d", v)
	}

	unk := ms["ghostdriver.decoder.unknown_events"]
	if unk.Sum().DataPoints().Len() != maxUnknownNames+1 {
		t.Errorf("%d unknown_events series, want %d names + _other", unk.Sum().DataPoints().Len(), maxUnknownNames)
	}
	if v := numPoint(t, unk, map[string]any{"ghostdriver.event.name": "ev_000"}).IntValue(); v != 1 {
		t.Errorf("ev_000 = %d", v)
	}
	// ev_064 … ev_069 (counts 65 … 70) share the remainder.
	if v := numPoint(t, unk, map[string]any{"ghostdriver.event.name": "_other"}).IntValue(); v != 65+66+67+68+69+70 {
		t.Errorf("_other = %d", v)
	}
	// A name that appears later does not displace one that has its own series.
	src.Unknown["aaa_first_alphabetically"] = 1
	unk = metricsByName(m.Collect(t2, src, asm))["ghostdriver.decoder.unknown_events"]
	if v := numPoint(t, unk, map[string]any{"ghostdriver.event.name": "_other"}).IntValue(); v != 65+66+67+68+69+70+1 {
		t.Errorf("_other after a new name = %d", v)
	}
	numPoint(t, unk, map[string]any{"ghostdriver.event.name": "ev_063"})

	for name, want := range map[string]int64{
		"ghostdriver.decoder.malformed":       4,
		"ghostdriver.decoder.truncated_lines": 1,
		"ghostdriver.source.lost_events":      9,
		"ghostdriver.job.pending":             17,
		"ghostdriver.job.spans_dropped":       5,
	} {
		if v := numPoint(t, ms[name], map[string]any{}).IntValue(); v != want {
			t.Errorf("%s = %d, want %d", name, v, want)
		}
	}
	evict := ms["ghostdriver.job.evictions"]
	if v := numPoint(t, evict, map[string]any{"ghostdriver.eviction.reason": "timeout"}).IntValue(); v != 2 {
		t.Errorf("evicted by timeout = %d", v)
	}
	if v := numPoint(t, evict, map[string]any{"ghostdriver.eviction.reason": "max_pending_jobs"}).IntValue(); v != 3 {
		t.Errorf("evicted by cap = %d", v)
	}
	if ms["ghostdriver.job.pending"].Type() != pmetric.MetricTypeGauge {
		t.Error("job.pending is not a gauge")
	}
	// No jobs recorded: the job metrics are absent rather than empty.
	if _, ok := ms["ghostdriver.job.duration"]; ok {
		t.Error("job.duration emitted without jobs")
	}
}

func TestOptionalDimensions(t *testing.T) {
	cfg := metadata.DefaultMetricsConfig()
	cfg.Dimensions = []string{metadata.AttrProcessExecutableName}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	m := NewMetricsRecorder(cfg, t0)
	m.RecordJob(fullJob(), testClock)    // main thread: vkcube
	m.RecordJob(partialJob(), testClock) // worker thread: name unknown here
	ms := metricsByName(m.Collect(t1, event.SourceStats{}, AssemblerCounters{}))
	jobs := ms["ghostdriver.jobs"]
	if v := numPoint(t, jobs, with(gfx, "ghostdriver.job.outcome", "completed", "process.executable.name", "vkcube")).IntValue(); v != 1 {
		t.Errorf("vkcube jobs = %d", v)
	}
	if v := numPoint(t, jobs, with(gfx, "ghostdriver.job.outcome", "completed")).IntValue(); v != 1 {
		t.Errorf("jobs without a known name = %d", v)
	}
	histPoint(t, ms["ghostdriver.stage.duration"], with(gfx, "ghostdriver.stage.name", "ioctl", "ghostdriver.stage.source", "measured", "process.executable.name", "vkcube"))
	// Ring metrics never carry tenant dimensions.
	numPoint(t, ms["ghostdriver.ring.busy_time"], gfx)

	for _, k := range metadata.AllowedDimensions {
		if dimensionValues[k] == nil {
			t.Errorf("allowed dimension %q has no value extractor", k)
		}
	}
	d := newDimensions([]string{"a", "b"})
	if len(d.keys) != 0 {
		t.Error("unknown dimensions accepted")
	}
}

// noDims is the default configuration without the optional dimensions: the tests above
// are about the ring/stage series themselves.
func noDims() metadata.MetricsConfig {
	cfg := metadata.DefaultMetricsConfig()
	cfg.Dimensions = nil
	return cfg
}

// By default the job metrics carry service.name: the enricher's (OTEL_SERVICE_NAME,
// OTEL_CTX) when it ran, else the executable name when the job tells it; never pid/tid.
func TestDefaultDimensionIsServiceName(t *testing.T) {
	cfg := metadata.DefaultMetricsConfig()
	if !slices.Equal(cfg.Dimensions, []string{metadata.AttrServiceName}) {
		t.Fatalf("default dimensions %v", cfg.Dimensions)
	}
	for _, k := range metadata.AllowedDimensions {
		if k == metadata.AttrProcessPID || k == metadata.AttrThreadID {
			t.Errorf("%s is an allowed dimension: one series per process/thread", k)
		}
	}
	enriched := fullJob()
	enriched.Resource = []attr.Attribute{attr.String(metadata.AttrServiceName, "renderer"), attr.String(metadata.AttrProcessExecutableName, "vkcube")}
	m := NewMetricsRecorder(cfg, t0)
	m.RecordJob(enriched, testClock)
	m.RecordJob(fullJob(), testClock)    // not enriched: the main thread's comm
	m.RecordJob(partialJob(), testClock) // not enriched, worker thread: no value, label left out
	ms := metricsByName(m.Collect(t1, event.SourceStats{}, AssemblerCounters{}))
	jobs := ms["ghostdriver.jobs"]
	for _, c := range []struct {
		svc  []any
		want int64
	}{{[]any{"service.name", "renderer"}, 1}, {[]any{"service.name", "vkcube"}, 1}, {nil, 1}} {
		if v := numPoint(t, jobs, with(gfx, append([]any{"ghostdriver.job.outcome", "completed"}, c.svc...)...)).IntValue(); v != c.want {
			t.Errorf("jobs %v = %d, want %d", c.svc, v, c.want)
		}
	}
}

// Events that matched no job: one cumulative point per kind, in kind order; none when
// nothing was unmatched (the metric is then left out).
func TestUnmatchedEvents(t *testing.T) {
	m := NewMetricsRecorder(noDims(), t0)
	if _, ok := metricsByName(m.Collect(t1, event.SourceStats{}, AssemblerCounters{}))[metadata.MetricAssemblerUnmatched]; ok {
		t.Fatal("unmatched_events without unmatched events")
	}
	ms := metricsByName(m.Collect(t1, event.SourceStats{}, AssemblerCounters{Unmatched: map[string]uint64{
		event.JobDone.String(): 2, event.FenceSignaled.String(): 7, event.FenceInit.String(): 0}}))
	u, ok := ms[metadata.MetricAssemblerUnmatched]
	if !ok || !u.Sum().IsMonotonic() || u.Sum().AggregationTemporality() != pmetric.AggregationTemporalityCumulative {
		t.Fatalf("unmatched_events: %v", ok)
	}
	var got []string
	for i := 0; i < u.Sum().DataPoints().Len(); i++ {
		dp := u.Sum().DataPoints().At(i)
		k, _ := dp.Attributes().Get(metadata.AttrEventKind)
		got = append(got, fmt.Sprintf("%s=%d", k.Str(), dp.IntValue()))
	}
	want := []string{event.JobDone.String() + "=2", event.FenceSignaled.String() + "=7"}
	if event.FenceSignaled < event.JobDone {
		want[0], want[1] = want[1], want[0]
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("points %v, want %v", got, want)
	}
}
