// Attribute keys and enumerated values of spans, resources and metrics.
//
// Semantic-convention names are used where they exist; the rest live in the ghostdriver.*
// namespace. No key is both an attribute and a namespace of another key (OTel naming
// rules): the stage's name is ghostdriver.stage.name next to ghostdriver.stage.source.

package metadata

import "github.com/ghostdriver/ghostdriver/internal/ctxtier"

// Resource attributes (one resource per submitting process).
const (
	AttrServiceName           = "service.name"
	AttrProcessPID            = "process.pid"
	AttrProcessExecutableName = "process.executable.name"
	AttrHostName              = "host.name"

	// Tenant attribution (internal/tenant; live source only).
	AttrProcessExecutablePath = "process.executable.path"
	AttrProcessLinuxCgroup    = "process.linux.cgroup"
	AttrContainerID           = "container.id"
	AttrContainerRuntimeName  = "container.runtime.name"
	AttrK8sPodUID             = "k8s.pod.uid"
	AttrK8sPodQoSClass        = "ghostdriver.k8s.pod.qos_class"
	AttrSystemdUnit           = "ghostdriver.systemd.unit"
	AttrNvidiaMIGInstance     = "ghostdriver.nvidia.mig_instance"
	AttrResourceSource        = "ghostdriver.resource.source"
)

// Span attributes of gpu.job. Integer attributes that carry kernel uint64 values
// (fence context/seqno, job id, client id) are int when the value fits in int64 and the
// exact decimal string otherwise (see telemetry-extra.yaml); they never wrap.
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
	// AttrJobEventsLost is true on a job whose span meets a loss window of the capture (a
	// "CPU:N [LOST n EVENTS]" note: assemble/loss.go); AttrJobLostEventCount sums the
	// counts of those windows, when every note printed one.
	AttrJobEventsLost     = "ghostdriver.job.events_lost"
	AttrJobLostEventCount = "ghostdriver.job.lost_event_count"
	// AttrDependencyWait, on a link to a dependency's job, says what the scheduler waited
	// for on that fence: own_entity, same_scheduler or fence_signal (assemble.DepWait).
	AttrDependencyWait = "ghostdriver.dependency.wait"
	// AttrSamplingUnsampledParent, on a job span's link to the application span, says the
	// job was kept by a keep rule although that span was not sampled: the job is the root
	// of its own trace instead of a child that no backend would connect (internal/sample).
	AttrSamplingUnsampledParent = "ghostdriver.sampling.unsampled_parent"
	AttrClientID                = "ghostdriver.client_id"
	AttrContextTier             = "ghostdriver.context.tier"
	// AttrThreadID holds the kernel task id (TID) of the submitting thread. Semantic
	// conventions define thread.id as the runtime's managed id; there is no OS-TID
	// attribute, so the receiver documents that it puts the kernel TID here.
	AttrThreadID   = "thread.id"
	AttrThreadName = "thread.name"

	// Tenant attribution of the job (internal/tenant; live source only): the DRM client's
	// name, and the device's details under ghostdriver.gpu.* (ghostdriver.device is an
	// attribute, so it cannot also be a namespace).
	AttrDRMClientName = "ghostdriver.drm.client_name"
	AttrHWType        = "hw.type"
	AttrHWVendor      = "hw.vendor"
	AttrGPUPCIAddress = "ghostdriver.gpu.pci_address"
	AttrGPUDriver     = "ghostdriver.gpu.driver"
	AttrGPUSRIOVVF    = "ghostdriver.gpu.sriov_vf"
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
	AttrHookStage      = "ghostdriver.hook.stage"
	AttrHookName       = "ghostdriver.hook.name"
	AttrHookStatus     = "ghostdriver.hook.status"
	AttrHookReason     = "ghostdriver.hook.reason"
	AttrAnomaly        = "ghostdriver.anomaly"
	// The sampler's counts (internal/sample: its KindNames and ReasonNames are the values).
	AttrSamplingDecision = "ghostdriver.sampling.decision"
	AttrSamplingReason   = "ghostdriver.sampling.reason"
	AttrSamplingKind     = "ghostdriver.sampling.kind"
)

// ghostdriver.sampling.decision values.
const (
	SamplingKept       = "kept"
	SamplingSampledOut = "sampled_out"
)

// AttrKernelDropReason: why the live source's kernel side passed something over
// (ghostdriver.source.kernel_drops; the values are event.KernelDropReasons).
const AttrKernelDropReason = "ghostdriver.kernel_drop.reason"

// Enumerated values.
const (
	ContextTierOTEP4947    = ctxtier.NameOTEP4947 // ghostdriver.context.tier: internal/ctxtier holds the tiers
	ContextTierOBI         = ctxtier.NameOBI
	ContextTierTraceparent = ctxtier.NameTraceparent
	ContextTierNone        = ctxtier.NameNone
	ContextTierUnknown     = ctxtier.NameUnknown

	EvictionReasonTimeout    = "timeout"
	EvictionReasonMaxPending = "max_pending_jobs"

	AnomalyLate      = "late"
	AnomalyDuplicate = "duplicate"
	AnomalyClockJump = "clock_jump"
	// AnomalyIoctlExitNotSeen: a finished job's submit ioctl exit did not come within
	// job_timeout (assemble.Stats.IoctlExitsNotSeen).
	AnomalyIoctlExitNotSeen = "ioctl_exit_not_seen"

	// EventNameOther collects unknown-event names beyond the per-name series cap.
	EventNameOther = "_other"
)
