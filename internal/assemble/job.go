// Package assemble joins the events of one GPU job — seen on the submitting thread, the
// scheduler worker and in interrupt context — into a Job with the timestamps of its
// critical path, and tiles that path into stages (docs/stages.md).
//
// This file is the output model. It imports nothing from the collector: emit renders it.
package assemble

import (
	"github.com/ghostdriver/ghostdriver/internal/attr"
	"github.com/ghostdriver/ghostdriver/internal/event"
	"github.com/ghostdriver/ghostdriver/internal/eventdef"
)

// Point is one timestamp on a job's critical path (docs/stages.md: t0 … tf). The type is
// the event table's (internal/eventdef), whose driver rows say which points they measure.
type Point = eventdef.Point

const (
	PointIoctlEnter   = eventdef.PointIoctlEnter   // t0: submit ioctl entry
	PointBOValidEnd   = eventdef.PointBOValidEnd   // t1: buffer-object validation done
	PointQueued       = eventdef.PointQueued       // tq: job queued to the scheduler
	PointIoctlExit    = eventdef.PointIoctlExit    // tx: submit ioctl exit
	PointDepsResolved = eventdef.PointDepsResolved // td: the last dependency the scheduler waits for is resolved (deps.go)
	PointRun          = eventdef.PointRun          // tr: scheduler handed the job to the ring
	PointEmitted      = eventdef.PointEmitted      // te: ring emission done (hardware fence emitted / run_job returned)
	PointHWStart      = eventdef.PointHWStart      // ts: hardware started (inferred: max(te, previous job's hw done on the ring))
	PointHWDone       = eventdef.PointHWDone       // th: hardware fence signalled
	PointFinished     = eventdef.PointFinished     // tf: scheduler's finished fence signalled
	pointCount        = eventdef.PointCount
)

// NumPoints is the number of points on the critical path.
const NumPoints = int(pointCount)

// Provenance says how a bound was obtained.
type Provenance uint8

const (
	Unknown  Provenance = iota // no basis: the stage that needs it is omitted
	Measured                   // taken from the hook named in Bound.Hook
	Inferred                   // derived by the rule named in Bound.Hook
)

func (p Provenance) String() string {
	switch p {
	case Measured:
		return "measured"
	case Inferred:
		return "inferred"
	}
	return "unknown"
}

// Bound is one point's value and where it came from.
type Bound struct {
	Time int64 // source clock, ns
	Src  Provenance
	Hook string // tracepoint/function for Measured, rule name for Inferred
}

// Known reports whether the bound has a value.
func (b Bound) Known() bool { return b.Src != Unknown }

// Stage is one child span of a job.
type Stage uint8

const (
	StageIoctl           Stage = iota // t0 → tx
	StageBOValidation                 // t0 → t1
	StageFenceDependency              // tq → td
	StageSchedulerQueue               // td → tr
	StageRingEmission                 // tr → te
	StageDMAScheduling                // te → ts
	StageExecution                    // ts → th
	StageFenceSignal                  // th → tf
	stageCount
)

// NumStages is the number of stage kinds.
const NumStages = int(stageCount)

var stageNames = [stageCount]string{"ioctl", "bo_validation", "fence_dependency", "scheduler_queue",
	"ring_emission", "dma_scheduling", "execution", "fence_signal"}

// String returns the span name of the stage.
func (s Stage) String() string {
	if s < stageCount {
		return stageNames[s]
	}
	return "stage?"
}

// StageBounds is the (start, end) point pair of each stage, the single definition of the tiling.
var StageBounds = [stageCount][2]Point{
	StageIoctl:           {PointIoctlEnter, PointIoctlExit},
	StageBOValidation:    {PointIoctlEnter, PointBOValidEnd},
	StageFenceDependency: {PointQueued, PointDepsResolved},
	StageSchedulerQueue:  {PointDepsResolved, PointRun},
	StageRingEmission:    {PointRun, PointEmitted},
	StageDMAScheduling:   {PointEmitted, PointHWStart},
	StageExecution:       {PointHWStart, PointHWDone},
	StageFenceSignal:     {PointHWDone, PointFinished},
}

// StageSpan is a stage with known bounds. Source is Measured only when both bounds are.
// (The one-byte fields are last: 40 bytes, not 48, for every stage of every job.)
type StageSpan struct {
	Start, End int64
	// Rule names the hooks or inference rules of the two bounds ("drm_sched_job_run→dma_fence_signaled").
	Rule  string
	Stage Stage
	Src   Provenance
}

// Outcome is how a job ended.
type Outcome uint8

const (
	Completed  Outcome = iota // finished fence signalled, queue and run seen
	Incomplete                // the capture/stream ended (or began) in the middle of the job
	Evicted                   // dropped by job_timeout or max_pending_jobs
)

func (o Outcome) String() string {
	switch o {
	case Completed:
		return "completed"
	case Incomplete:
		return "incomplete"
	case Evicted:
		return "evicted"
	}
	return "outcome?"
}

// Job is one GPU job submission, assembled.
type Job struct {
	Driver string // "amdgpu", "i915", "xe", "msm", or the scheduler's fence driver name
	Device string // PCI address / dev_name when known
	Ring   string

	// Finished is the scheduler's finished fence (the job's identity); FinishedWide says
	// whether it came from a 64-bit event. HWFence is the hardware fence linked at run time.
	Finished     event.FenceKey
	FinishedWide bool
	HWFence      event.FenceKey
	JobID        uint64
	ClientID     uint64

	// Submitter (from the queue event's or the ioctl's task).
	PID  uint32
	TID  uint32
	Comm string

	Points [NumPoints]Bound
	Stages []StageSpan // in Stage order, only those with known bounds

	Start, End int64 // job span bounds: earliest known point → finished (or last known point)

	// Dependencies the job waited on, and which of them were other jobs we saw.
	Deps []Dependency

	// Application trace context captured at the submitting ioctl, when any, or set by the
	// enrich stage (TRACEPARENT). CtxTier numbers the tier (internal/ctxtier); TraceFlags
	// are the context's W3C trace flags (bit 0: sampled), meaningful only when CtxTier != 0.
	TraceID    [16]byte
	SpanID     [8]byte
	CtxTier    uint8
	TraceFlags uint8

	Outcome Outcome  // after CtxTier and TraceFlags: the three bytes share one word
	Reason  string   // why a job is Incomplete or Evicted, human-readable
	Loss    LossInfo // capture loss windows the job overlaps (loss.go)

	// Tenant attribution, set by the enrich stage (live source only; replayed captures come
	// from another machine and stay without). Resource is the submitting process's
	// resource (its own OTEL_CTX / OTEL_* resource, then identity and tenancy: pid,
	// executable, cgroup, container, pod); Attrs are per-job attributes (DRM client name,
	// the device's PCI address, driver, SR-IOV VF). attr.Attribute is pdata-free.
	Resource []attr.Attribute
	Attrs    []attr.Attribute
}

// Dependency is one fence the job depended on.
type Dependency struct {
	Fence    event.FenceKey
	Signaled int64 // source time the fence signalled; 0 if not seen
	// Scheduled is when the scheduled fence of the job owning Fence signalled (0: not
	// seen): what drm_sched waits for when that job runs on the same scheduler (deps.go).
	Scheduled int64
	// Job is the finished fence of the job that owns the dependency fence, when the
	// fence is another job's scheduler fence that the assembler saw (for span links).
	Job      event.FenceKey
	JobKnown bool
	// Wait is what the scheduler waited for (decided at output, deps.go); Until is when
	// that wait ended on the source clock (0: not waited for, or its end not seen).
	Wait  DepWait
	Until int64
	// Unschedulable: drm_sched_job_unschedulable named this fence (6.17+): the
	// scheduler waited for it to signal.
	Unschedulable bool

	signalProxy bool // Signaled came from the owning job's done event, not the fence's own signal
	schedWait   bool // the job is among the waiters of the scheduled fence of Fence's owner
}

// Stage returns the span of stage s, if it is known.
func (j *Job) Stage(s Stage) (StageSpan, bool) {
	for _, sp := range j.Stages {
		if sp.Stage == s {
			return sp, true
		}
	}
	return StageSpan{}, false
}
