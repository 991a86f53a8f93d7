// The CUDA path's vocabulary (internal/cuda → internal/emit/cudaspans): span names, span
// and event attributes, enumerated values and metric names. The span model is the one of
// internal/cuda/doc.go.

package metadata

// Span and span event names of the CUDA path.
const (
	SpanCUDASubmission  = "cuda.submission"
	SpanCUDALaunch      = "cuda.launch"
	SpanCUDAMemcpy      = "cuda.memcpy"
	SpanCUDAMemset      = "cuda.memset"
	SpanCUDAEventRecord = "cuda.event_record"
	SpanCUDAAlloc       = "cuda.alloc"
	SpanCUDAFree        = "cuda.free"
	SpanCUDASync        = "cuda.sync"

	// The GPU's own timeline (the injection library's CUPTI records, internal/cupti):
	// children of cuda.submission when the process's timeline was on for all of it.
	// gpu_queue: the first-starting kernel's launch call returned → that kernel started;
	// gpu_execution: first kernel start → last kernel end (busy = union of kernels);
	// gpu_completion: last kernel end → the sync's return. Every bound is measured
	// (uprobes for the host's, CUPTI for the GPU's).
	SpanCUDAGPUQueue      = "cuda.gpu_queue"
	SpanCUDAGPUExecution  = "cuda.gpu_execution"
	SpanCUDAGPUCompletion = "cuda.gpu_completion"
	// The blocking-sync split of cuda.gpu_completion (live.cuda.sync_wakeups): the last
	// kernel's end → the nvidia interrupt → the scheduler's wake-up of the syncing thread →
	// the sync's return. Without an interrupt seen, wakeup runs from the kernel's end.
	SpanCUDAGPUCompletionInterrupt = "cuda.gpu_completion.interrupt"
	SpanCUDAGPUCompletionWakeup    = "cuda.gpu_completion.wakeup"
	SpanCUDAGPUCompletionReturn    = "cuda.gpu_completion.return"
	// EventCUDAKernel is a span event of cuda.gpu_execution, one per top kernel name by
	// GPU time.
	EventCUDAKernel = "cuda.kernel"

	// EventNvidiaXid is the span event of an Xid error on cuda.submission.
	EventNvidiaXid = "nvidia.xid"
)

// CUDASpans lists every span name of the CUDA path.
var CUDASpans = []string{
	SpanCUDASubmission, SpanCUDALaunch, SpanCUDAMemcpy, SpanCUDAMemset, SpanCUDAEventRecord,
	SpanCUDAAlloc, SpanCUDAFree, SpanCUDASync,
	SpanCUDAGPUQueue, SpanCUDAGPUExecution, SpanCUDAGPUCompletion,
	SpanCUDAGPUCompletionInterrupt, SpanCUDAGPUCompletionWakeup, SpanCUDAGPUCompletionReturn,
}

// Span attributes of the CUDA spans. Handles and pointers are process addresses (uint64):
// int when they fit in int64 (always, for user-space addresses), else the decimal string.
const (
	AttrCUDAStream    = "ghostdriver.cuda.stream"
	AttrCUDASyncScope = "ghostdriver.cuda.sync.scope"
	// The sync's wait as the scheduler saw it (live.cuda.sync_wakeups): whether the
	// thread slept in it, from its last wake-up to the return, and from the latest nvidia
	// interrupt to that wake-up.
	AttrCUDASyncSlept            = "ghostdriver.cuda.sync.slept"
	AttrCUDASyncWakeupToReturnNs = "ghostdriver.cuda.sync.wakeup_to_return_ns"
	AttrCUDASyncIRQToWakeupNs    = "ghostdriver.cuda.sync.interrupt_to_wakeup_ns"
	AttrCUDASubmissionOutcome    = "ghostdriver.cuda.submission.outcome"
	AttrCUDALaunchCount          = "ghostdriver.cuda.launch_count"
	AttrCUDAOpCount              = "ghostdriver.cuda.op_count"
	AttrCUDAOpsDropped           = "ghostdriver.cuda.ops_dropped"
	AttrCUDAAPI                  = "ghostdriver.cuda.api"
	AttrCUDALayer                = "ghostdriver.cuda.layer"
	AttrCUDAInnerAPI             = "ghostdriver.cuda.inner_api"
	AttrCUDAEntryPoint           = "ghostdriver.cuda.entry_point"
	AttrCUDAResult               = "ghostdriver.cuda.result"
	AttrCUDABytes                = "ghostdriver.cuda.bytes"
	AttrCUDAMemcpyKind           = "ghostdriver.cuda.memcpy.kind"
	AttrCUDAFunction             = "ghostdriver.cuda.function"
	AttrCUDAEvent                = "ghostdriver.cuda.event"
	AttrCUDAPointer              = "ghostdriver.cuda.pointer"

	// The GPU timeline's attributes (cuda.submission and its gpu_* children).
	AttrCUDAGPUKernelCount  = "ghostdriver.cuda.gpu.kernel_count"
	AttrCUDAGPUBusyNs       = "ghostdriver.cuda.gpu.busy_ns"
	AttrCUDAGPUIdleNs       = "ghostdriver.cuda.gpu.idle_ns"
	AttrCUDAGPUSMWeightedNs = "ghostdriver.cuda.gpu.sm_weighted_busy_ns"
	AttrCUDAGPUDevices      = "ghostdriver.cuda.gpu.devices"
	AttrCUDAGPUComplete     = "ghostdriver.cuda.gpu.complete"
	AttrCUDAGPUUnmatched    = "ghostdriver.cuda.gpu.launches_unmatched"
	AttrCUDAGPUClockRule    = "ghostdriver.cuda.gpu.clock_rule_violations"
	AttrCUDAGPUTimeline     = "ghostdriver.cuda.gpu.timeline"
	AttrCUDAGPUDevice       = "ghostdriver.cuda.gpu.device"
	AttrCUDAKernelName      = "ghostdriver.cuda.kernel.name"
	AttrCUDAKernelCount     = "ghostdriver.cuda.kernel.count"
	AttrCUDAKernelGPUTimeNs = "ghostdriver.cuda.kernel.gpu_time_ns"

	// Attributes of the nvidia.xid span event, and of ghostdriver.nvidia.xid (code).
	AttrNvidiaXidCode    = "ghostdriver.nvidia.xid.code"
	AttrNvidiaXidMessage = "ghostdriver.nvidia.xid.message"
	AttrNvidiaXidDevice  = "ghostdriver.nvidia.xid.device"
)

// Enumerated values of the CUDA attributes.
const (
	CUDASyncScopeStream  = "stream"
	CUDASyncScopeEvent   = "event"
	CUDASyncScopeContext = "context"
	// CUDASyncScopeNone: an unsynchronized submission (no sync covered it).
	CUDASyncScopeNone = "none"
)

// Metric names of the CUDA path.
const (
	MetricCUDASubmissionDuration = "ghostdriver.cuda.submission.duration"
	MetricCUDASyncWait           = "ghostdriver.cuda.sync.wait"
	MetricCUDALaunches           = "ghostdriver.cuda.launches"
	MetricNvidiaXid              = "ghostdriver.nvidia.xid"
	MetricCUDALostCalls          = "ghostdriver.cuda.lost_calls"
	MetricCUDAEntryPointsDropped = "ghostdriver.cuda.entry_points.dropped"
	// The GPU timeline's (docs/nvidia-timeline.md).
	MetricCUDAGPUBusyTime   = "ghostdriver.cuda.gpu.busy_time"
	MetricCUDAGPUSMWeighted = "ghostdriver.cuda.gpu.sm_weighted_busy_time"
	MetricCUDAGPUQueue      = "ghostdriver.cuda.gpu.queue"
	MetricCUDAGPUCompletion = "ghostdriver.cuda.gpu.completion"
)

// ghostdriver.cuda.lost_calls: why a call never became a record.
const (
	AttrCUDALossReason = "ghostdriver.cuda.loss.reason"
	// CUDALossRingBuffer: the ring buffer was full when the call returned.
	CUDALossRingBuffer = "ring_buffer"
	// CUDALossMissedReturn: the call's return was never seen (its entry frame was dropped
	// by stack position: a hook attached mid-call, longjmp or an exception through it).
	CUDALossMissedReturn = "missed_return"
	// CUDALossNoFrame: the call's return came with no entry frame for it (the thread's
	// frames were evicted from the kernel's thread table, or the call began before its
	// entry hook was attached).
	CUDALossNoFrame = "no_frame"
)
