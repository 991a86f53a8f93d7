// Attribute keys and enumerated values of spans, resources and metrics.
//
// Semantic-convention names are used where they exist; the rest live in the ghostdriver.*
// namespace. No key is both an attribute and a namespace of another key (OTel naming
// rules): the stage's name is ghostdriver.stage.name next to ghostdriver.stage.source.
package metadata

// Resource attributes (one resource per submitting process).
const (
	AttrServiceName           = "service.name"
	AttrProcessPID            = "process.pid"
	AttrProcessExecutableName = "process.executable.name"
	AttrHostName              = "host.name"
)

// Span attributes of gpu.job. Integer attributes that carry kernel uint64 values
// (fence context/seqno, job id, client id) are int when the value fits in int64 and the
// exact decimal string otherwise (see metadata.yaml); they never wrap.
const (
	AttrDriver          = "ghostdriver.driver"
	AttrDevice          = "ghostdriver.device"
	AttrRing            = "ghostdriver.ring"
	AttrFenceContext    = "ghostdriver.fence.context"
	AttrFenceSeqno      = "ghostdriver.fence.seqno"
	AttrHWFenceContext  = "ghostdriver.hw_fence.context"
	AttrHWFenceSeqno    = "ghostdriver.hw_fence.seqno"
	AttrJobID           = "ghostdriver.job.id"
	AttrJobOutcome      = "ghostdriver.job.outcome"
	AttrJobDependencies = "ghostdriver.job.dependency_count"
	AttrClientID        = "ghostdriver.client_id"
	AttrContextTier     = "ghostdriver.context.tier"
	// AttrThreadID holds the kernel task id (TID) of the submitting thread. Semantic
	// conventions define thread.id as the runtime's managed id; there is no OS-TID
	// attribute, so the receiver documents that it puts the kernel TID here.
	AttrThreadID   = "thread.id"
	AttrThreadName = "thread.name"
)

// Span attributes of the stage child spans.
const (
	AttrStageSource = "ghostdriver.stage.source"
	AttrStageRule   = "ghostdriver.stage.rule"
)

// Metric-only attributes.
const (
	AttrStageName      = "ghostdriver.stage.name"
	AttrEventKind      = "ghostdriver.event.kind"
	AttrEventName      = "ghostdriver.event.name"
	AttrEvictionReason = "ghostdriver.eviction.reason"
)

// Enumerated values.
const (
	ContextTierOTEP4947    = "otep4947"
	ContextTierOBI         = "obi"
	ContextTierTraceparent = "traceparent"
	ContextTierNone        = "none"
	ContextTierUnknown     = "unknown"

	EvictionReasonTimeout    = "timeout"
	EvictionReasonMaxPending = "max_pending_jobs"

	// EventNameOther collects unknown-event names beyond the per-name series cap.
	EventNameOther = "_other"
)
