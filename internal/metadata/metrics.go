// Metric descriptors: the single Go definition of every metric the receiver can emit
// (name, description, unit, instrument, attributes), and the small pmetric builder that
// turns a descriptor into an empty metric of the right shape.

package metadata

import "go.opentelemetry.io/collector/pdata/pmetric"

// Metric names.
const (
	MetricStageDuration        = "ghostdriver.stage.duration"
	MetricJobDuration          = "ghostdriver.job.duration"
	MetricJobs                 = "ghostdriver.jobs"
	MetricRingBusyRatio        = "ghostdriver.ring.busy_ratio"
	MetricRingBusyTime         = "ghostdriver.ring.busy_time"
	MetricDecoderEvents        = "ghostdriver.decoder.events"
	MetricDecoderUnknownEvents = "ghostdriver.decoder.unknown_events"
	MetricDecoderMalformed     = "ghostdriver.decoder.malformed"
	MetricDecoderTruncated     = "ghostdriver.decoder.truncated_lines"
	MetricSourceLostEvents     = "ghostdriver.source.lost_events"
	MetricSourceKernelDrops    = "ghostdriver.source.kernel_drops"
	MetricJobEvictions         = "ghostdriver.job.evictions"
	MetricJobPending           = "ghostdriver.job.pending"
	MetricJobSpansDropped      = "ghostdriver.job.spans_dropped"
	MetricSourceHooks          = "ghostdriver.source.hooks"
	MetricAssemblerAnomalies   = "ghostdriver.assembler.anomalies"
	MetricAssemblerUnmatched   = "ghostdriver.assembler.unmatched_events"
	// The sampler (internal/sample): every job is in the metrics above, these say which
	// got spans.
	MetricSamplingSpans       = "ghostdriver.sampling.spans"
	MetricSamplingProbability = "ghostdriver.sampling.probability"
)

// Instrument is the pmetric shape of a metric.
type Instrument uint8

const (
	Histogram Instrument = iota // explicit-bucket histogram, cumulative
	Sum                         // cumulative sum
	Gauge
)

func (i Instrument) String() string {
	switch i {
	case Histogram:
		return "histogram"
	case Sum:
		return "sum"
	case Gauge:
		return "gauge"
	}
	return "instrument?"
}

// ValueType is the number type of a sum or gauge (histograms are always double).
type ValueType uint8

const (
	Double ValueType = iota
	Int
)

func (v ValueType) String() string {
	if v == Int {
		return "int"
	}
	return "double"
}

// MetricDesc describes one metric.
type MetricDesc struct {
	Name        string
	Description string
	Unit        string
	Instrument  Instrument
	Value       ValueType
	Monotonic   bool // sums only
	// Attributes are the attribute keys a data point may carry by default. Keys whose
	// value is unknown for a data point (ghostdriver.device) are left out of it.
	Attributes []string
	// Dimensions says whether the optional MetricsConfig.Dimensions apply to this metric.
	Dimensions bool
}

// DurationBounds are the explicit bucket bounds, in seconds, of the duration histograms:
// 1 µs to 10 s in 1-2.5-5 steps, covering a sub-microsecond fence signal as well as a
// long compute job.
var DurationBounds = []float64{
	1e-6, 2.5e-6, 5e-6,
	1e-5, 2.5e-5, 5e-5,
	1e-4, 2.5e-4, 5e-4,
	1e-3, 2.5e-3, 5e-3,
	1e-2, 2.5e-2, 5e-2,
	0.1, 0.25, 0.5,
	1, 2.5, 5, 10,
}

var ringAttrs = []string{AttrDriver, AttrDevice, AttrRing}

// Metrics lists every metric in emission order.
var Metrics = []MetricDesc{
	{
		Name:        MetricStageDuration,
		Description: "Duration of a driver stage of a GPU job (one child span of gpu.job).",
		Unit:        "s",
		Instrument:  Histogram,
		Attributes:  []string{AttrStageName, AttrStageSource, AttrDriver, AttrDevice, AttrRing},
		Dimensions:  true,
	},
	{
		Name:        MetricJobDuration,
		Description: "Duration of a GPU job span, from its earliest known point to its finished fence.",
		Unit:        "s",
		Instrument:  Histogram,
		Attributes:  []string{AttrDriver, AttrDevice, AttrRing, AttrJobOutcome},
		Dimensions:  true,
	},
	{
		Name:        MetricJobs,
		Description: "GPU jobs emitted, by outcome.",
		Unit:        "{job}",
		Instrument:  Sum,
		Value:       Int,
		Monotonic:   true,
		Attributes:  []string{AttrDriver, AttrDevice, AttrRing, AttrJobOutcome},
		Dimensions:  true,
	},
	{
		Name: MetricRingBusyRatio,
		Description: "Effective utilization of a ring: the union of its jobs' execution intervals " +
			"divided by the source-clock window since the previous collection.",
		Unit:       "1",
		Instrument: Gauge,
		Attributes: ringAttrs,
	},
	{
		Name:        MetricRingBusyTime,
		Description: "Time a ring spent executing jobs (union of execution intervals).",
		Unit:        "s",
		Instrument:  Sum,
		Value:       Double,
		Monotonic:   true,
		Attributes:  ringAttrs,
	},
	{
		Name:        MetricDecoderEvents,
		Description: "Kernel events decoded, by normalised kind.",
		Unit:        "{event}",
		Instrument:  Sum,
		Value:       Int,
		Monotonic:   true,
		Attributes:  []string{AttrEventKind},
	},
	{
		Name:        MetricDecoderUnknownEvents,
		Description: "Events of families the decoder does not handle, skipped, by event name.",
		Unit:        "{event}",
		Instrument:  Sum,
		Value:       Int,
		Monotonic:   true,
		Attributes:  []string{AttrEventName},
	},
	{
		Name:        MetricDecoderMalformed,
		Description: "Input lines or records that could not be parsed.",
		Unit:        "{record}",
		Instrument:  Sum,
		Value:       Int,
		Monotonic:   true,
	},
	{
		Name:        MetricDecoderTruncated,
		Description: "Inputs that ended inside a line (no final newline); the cut line is not decoded.",
		Unit:        "{line}",
		Instrument:  Sum,
		Value:       Int,
		Monotonic:   true,
	},
	{
		Name: MetricSourceLostEvents,
		Description: "Records lost before decoding: ring buffer reservations that failed, program runs " +
			"the kernel skipped (recursion protection, counted by the kernel since Linux 5.12), and records " +
			"still in the ring when the stop's read of it ran out of time (1 s).",
		Unit:       "{event}",
		Instrument: Sum,
		Value:      Int,
		Monotonic:  true,
	},
	{
		Name: MetricSourceKernelDrops,
		Description: "What the live source's kernel side passed over or could not keep, besides lost " +
			"records, by reason: ioctl_slot_unavailable, ioctl_slot_evicted, ioctl_thread_exited, ioctl_exit_missed " +
			"(a submit ioctl's exit was or will not be recorded), fence_passed_over (dma_fence events of contexts in no GPU " +
			"job, fence filter on), process_table_full (a process left out of the kernel's table), " +
			"gpu_irq_found_late (GPU interrupt lines found after start: counts lines, not events), job_state_full, " +
			"job_state_evicted (records: jobs: jobs whose kernel state did not fit or was taken out after 5 s; " +
			"their stamps are decoded, not lost; counts jobs), ioctl_without_job (not a loss: ioctls of known " +
			"processes with nothing recorded inside, counted instead of sent), thread_context_unreadable " +
			"(submissions sent without their OTEP 4947 thread context because the kernel could not read it: the " +
			"memory was being collapsed into a huge page or migrated at that instant).",
		Unit:       "{event}",
		Instrument: Sum,
		Value:      Int,
		Monotonic:  true,
		Attributes: []string{AttrKernelDropReason},
	},
	{
		Name:        MetricJobEvictions,
		Description: "Unfinished jobs evicted by the assembler, by reason.",
		Unit:        "{job}",
		Instrument:  Sum,
		Value:       Int,
		Monotonic:   true,
		Attributes:  []string{AttrEvictionReason},
	},
	{
		Name:        MetricJobPending,
		Description: "Jobs held by the assembler, not yet finished or evicted.",
		Unit:        "{job}",
		Instrument:  Gauge,
		Value:       Int,
	},
	{
		Name: MetricJobSpansDropped,
		Description: "Jobs whose spans were not exported because the span buffer was full " +
			"(they are still counted in the job metrics). Only the live source drops (a replay waits for " +
			"the next consumer); drops are also logged at warn level.",
		Unit:       "{job}",
		Instrument: Sum,
		Value:      Int,
		Monotonic:  true,
	},
	{
		Name: MetricSourceHooks,
		Description: "The live source's capability report: 1 for each stage's hook, with whether it " +
			"attached and, when not, why (missing tracepoint, no BTF, no fentry, no privilege).",
		Unit:       "{hook}",
		Instrument: Gauge,
		Value:      Int,
		Attributes: []string{AttrHookStage, AttrHookName, AttrHookStatus, AttrHookReason},
	},
	{
		Name: MetricAssemblerAnomalies,
		Description: "Events the assembler could not take as they came: late (arrived after the reorder window had " +
			"passed their time; processed, but a rule that depends on their order may have missed them), duplicate " +
			"(a job event seen twice; the second is ignored), clock_jump (a timestamp far ahead of the stream that " +
			"the stream did not follow; processed at the stream's time), ioctl_exit_not_seen (a finished job's " +
			"submit ioctl exit that did not come within job_timeout: the job went out without its ioctl stage).",
		Unit:       "{event}",
		Instrument: Sum,
		Value:      Int,
		Monotonic:  true,
		Attributes: []string{AttrAnomaly},
	},
	{
		Name: MetricAssemblerUnmatched,
		Description: "Events that matched no job, by kind. Normal for fence events (most fences are not a " +
			"job's: other engines, syncobjs, fences of jobs that began before the source); scheduler " +
			"events here mean lost or filtered-out events.",
		Unit:       "{event}",
		Instrument: Sum,
		Value:      Int,
		Monotonic:  true,
		Attributes: []string{AttrEventKind},
	},
	// The sampler (internal/sample). Only when sampling is on.
	{
		Name: MetricSamplingSpans,
		Description: "Spans the sampler kept (exported) or sampled out (never built), by decision, reason " +
			"and kind: every job and submission is in the other metrics whatever was decided. Reasons: the " +
			"keep rules (failed, incomplete, lost_events, slowest, latency, dependency_wait), parent_sampled " +
			"and parent_unsampled (the application span's W3C sampled flag), probability (the consistent " +
			"probability share that the budget moves).",
		Unit:       "{span}",
		Instrument: Sum,
		Value:      Int,
		Monotonic:  true,
		Attributes: []string{AttrSamplingDecision, AttrSamplingReason, AttrSamplingKind},
	},
	{
		Name: MetricSamplingProbability,
		Description: "The probability share's current probability: 1 while every job fits the budget " +
			"(sampling.spans_per_second), lower when the budget holds the rate; the threshold is in the " +
			"tracestate (ot=th:) of the spans it kept.",
		Unit:       "1",
		Instrument: Gauge,
		Value:      Double,
	},
	// The enrich stage (internal/enrich; names in context.go). Live source only.
	{
		Name: MetricContextHeldJobs,
		Description: "Jobs whose process's first read (TRACEPARENT, resource, thread-context recipe) was in " +
			"flight when they were assembled, by how they went on: read_landed (held until the read landed), " +
			"max_wait (held for context.max_wait, emitted without the read), max_held (not held: the bound " +
			"on held jobs was reached), shutdown (let go when the receiver stopped).",
		Unit:       "{job}",
		Instrument: Sum,
		Value:      Int,
		Monotonic:  true,
		Attributes: []string{AttrHoldOutcome},
	},
	{
		Name: MetricContextRediscoveries,
		Description: "Re-discoveries of the OTEP 4947 thread context of processes whose read found none, " +
			"triggered by their submits, by outcome: found (a module mapped since defines otel_thread_ctx_v1; " +
			"the recipe went into the kernel), not_found, rate_limited (not checked: at most one per process " +
			"a second, 16 searches of changed modules per process between reads, 64 queued).",
		Unit:       "{rediscovery}",
		Instrument: Sum,
		Value:      Int,
		Monotonic:  true,
		Attributes: []string{AttrRediscoveryOutcome},
	},
	// The CUDA path (internal/emit/cudaspans; names in cuda.go).
	{
		Name: MetricCUDASubmissionDuration,
		Description: "Duration of a CUDA submission span: from the entry of its first enqueued call " +
			"to the return of the synchronize call that waited for it.",
		Unit:       "s",
		Instrument: Histogram,
		Attributes: []string{AttrCUDASyncScope, AttrCUDASubmissionOutcome},
		Dimensions: true,
	},
	{
		Name:        MetricCUDASyncWait,
		Description: "Time a host thread blocked in a CUDA synchronize call (the cuda.sync span).",
		Unit:        "s",
		Instrument:  Histogram,
		Attributes:  []string{AttrCUDASyncScope},
		Dimensions:  true,
	},
	{
		Name:        MetricCUDALaunches,
		Description: "Kernel and graph launches enqueued by CUDA applications (top-level launch calls).",
		Unit:        "{launch}",
		Instrument:  Sum,
		Value:       Int,
		Monotonic:   true,
		Dimensions:  true,
	},
	{
		Name: MetricCUDAGPUBusyTime,
		Description: "Time at least one of a process's kernels ran on a GPU (the GPU timeline's kernel records, " +
			"union over the process's kernels on that device): its rate is the kernel coverage.",
		Unit:       "s",
		Instrument: Sum,
		Value:      Double,
		Monotonic:  true,
		Attributes: []string{AttrCUDAGPUDevice},
		Dimensions: true,
	},
	{
		Name: MetricCUDAGPUSMWeighted,
		Description: "ghostdriver.cuda.gpu.busy_time with each kernel weighted by min(1, its blocks ÷ the device's SMs): " +
			"its rate is the SM-weighted coverage, which a launch-bound loop of one-block kernels keeps near 0 while " +
			"the kernel coverage reads busy.",
		Unit:       "s",
		Instrument: Sum,
		Value:      Double,
		Monotonic:  true,
		Attributes: []string{AttrCUDAGPUDevice},
		Dimensions: true,
	},
	{
		Name:        MetricCUDAGPUQueue,
		Description: "From a launch call's return to its kernel's start on the GPU (the cuda.gpu_queue span).",
		Unit:        "s",
		Instrument:  Histogram,
		Dimensions:  true,
	},
	{
		Name:        MetricCUDAGPUCompletion,
		Description: "From a submission's last kernel end to the return of the sync that waited for it (the cuda.gpu_completion span).",
		Unit:        "s",
		Instrument:  Histogram,
		Dimensions:  true,
	},
	{
		Name:        MetricNvidiaXid,
		Description: "Xid errors reported by the NVIDIA driver (nvidia:nvidia_dev_xid), by code.",
		Unit:        "{error}",
		Instrument:  Sum,
		Value:       Int,
		Monotonic:   true,
		Attributes:  []string{AttrNvidiaXidCode},
	},
	{
		Name: MetricCUDALostCalls,
		Description: "CUDA API calls the source saw but could not record, by reason " +
			"(ring_buffer: the ring buffer was full, or still held the call when the stop's read of it ran " +
			"out of time, 1 s; missed_return: the return was never seen; " +
			"no_frame: the return came without its entry frame).",
		Unit:       "{call}",
		Instrument: Sum,
		Value:      Int,
		Monotonic:  true,
		Attributes: []string{AttrCUDALossReason},
	},
	{
		Name: MetricCUDAEntryPointsDropped,
		Description: "Driver entry points returned by cuGetProcAddress that were never examined " +
			"because the hook queue was full; calls through them are seen at the runtime layer only.",
		Unit:       "{entry_point}",
		Instrument: Sum,
		Value:      Int,
		Monotonic:  true,
	},
}

// Desc returns the descriptor of the named metric.
func Desc(name string) (MetricDesc, bool) {
	for _, d := range Metrics {
		if d.Name == name {
			return d, true
		}
	}
	return MetricDesc{}, false
}

// AppendTo adds an empty metric of the descriptor's shape to ms: name, description,
// unit, instrument, cumulative temporality and monotonicity. The caller adds data points.
func (d *MetricDesc) AppendTo(ms pmetric.MetricSlice) pmetric.Metric {
	m := ms.AppendEmpty()
	m.SetName(d.Name)
	m.SetDescription(d.Description)
	m.SetUnit(d.Unit)
	switch d.Instrument {
	case Histogram:
		m.SetEmptyHistogram().SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
	case Sum:
		s := m.SetEmptySum()
		s.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
		s.SetIsMonotonic(d.Monotonic)
	case Gauge:
		m.SetEmptyGauge()
	}
	return m
}
