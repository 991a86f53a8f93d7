// What each job event means for the critical path, per driver family: the scheduler's
// events below, drivers' own events from the event table (internal/eventdef). The code
// elsewhere asks these tables and never tests driver names itself.
//
// DRM scheduler drivers (amdgpu, xe, msm ≥5.19, nouveau, panthor, v3d, lima, …):
//
//	event (normalised kind)                         point  identity
//	drm_sched_job / drm_sched_job_queue (JobQueue)  tq     fence key (6.17+, 64-bit), else (fence ptr, id)
//	amdgpu_cs_ioctl (JobQueue)                      tq     finished fence key (32-bit)
//	drm_run_job / drm_sched_job_run (JobRun)        tr     as JobQueue
//	amdgpu_sched_run_job (JobRun)                   tr     finished fence key (32-bit)
//	hw fence dma_fence_emit / _init on the worker   te     linked to the worker's current run
//	fexit of run_job (RunJobEnd)                    te     the worker's current run, or Event.HWFence
//	scheduled fence dma_fence_signaled (ctx−1)      te     finished key − 1 in context (signalled right after run_job returns)
//	hw fence dma_fence_signaled                     th     the linked hardware fence
//	drm_sched_process_job / _job_done (JobDone)     tf     fence ptr (≤6.16) / fence key (6.17+)
//	finished fence dma_fence_signaled               tf     finished key (amdgpu ≤4.x has no JobDone)
//
// virtio_gpu (no scheduler; virtio.go):
//
//	dma_fence_emit in the submit ioctl (FenceEmit)  tq = tr  the fence whose seqno the command's fence_id is
//	virtio_gpu_cmd_queue SUBMIT_3D                  te       opens the job: (device, fence_id), (device, seqno)
//	virtio_gpu_cmd_response                         th       (device, fence_id), (device, seqno) on 7.3
//	dma_fence_signaled of the emitted fence         tf       fence key
//
// Drivers' own events (i915, xe, msm, and amdgpu's queue and run events) are rows of
// internal/eventdef's table: the points each measures, its precedence, whether it opens a
// job and completes it (Role) are stated there and applied here (driverRoles); the rows
// without a Role name the function that applies them. docs/stages.md's per-driver table is
// generated from the same rows. What stays here is the identity scheme of each driver
// family (family, native.go) and the precedence of the generic hooks.

package assemble

import (
	"github.com/ghostdriver/ghostdriver/internal/event"
	"github.com/ghostdriver/ghostdriver/internal/eventdef"
)

// family is the identity scheme and point table a job follows.
type family uint8

const (
	famSched family = iota // DRM scheduler
	famI915
	famXe // xe events without drm_sched events
	famMsm
	famVirtio // virtio_gpu: the execbuffer's SUBMIT_3D command, keyed by its fence (virtio.go)
	famV3D    // v3d's own events without drm_sched events
	famVC4    // vc4's, the same scheme (v3d.go)
	famPVR    // imagination's own events without drm_sched's (accel.go)
	famIVPU   // ivpu (Intel NPU, no scheduler; accel.go)
	famXDNA   // amdxdna's own events without drm_sched's (accel.go)
)

var familyDriver = [...]string{famSched: "", famI915: "i915", famXe: "xe", famMsm: "msm", famVirtio: "virtio_gpu", famV3D: "v3d", famVC4: "vc4",
	famPVR: "powervr", famIVPU: "intel_vpu", famXDNA: "amdxdna"}

// Flags of the three events that make a job Completed.
const (
	seenQueue = uint8(eventdef.SeenQueue)
	seenRun   = uint8(eventdef.SeenRun)
	seenDone  = uint8(eventdef.SeenDone)
)

// noPoint marks an unused slot of a role.
const noPoint = Point(255)

// role is what a driver job event does to its job.
type role struct {
	family  family
	points  [2]Point // points it measures (noPoint when unused)
	prio    uint8    // precedence over other hooks of the same point (higher wins)
	seen    uint8    // seenQueue / seenRun / seenDone
	creates bool     // may open a job (queue- and run-like events; never completion events)
}

// driverRoles is indexed by event.Kind: the Role of every driver row of the event table
// (eventdef), with the driver's family. Kinds without a role are handled elsewhere or
// ignored.
var driverRoles = func() (t [256]*role) {
	for _, e := range eventdef.Drivers() {
		if e.Role == nil {
			continue
		}
		fam, ok := familyOf(e.Driver)
		if !ok || len(e.Points) > 2 || t[e.Kind] != nil {
			panic("assemble: event table row " + e.Names[0].Name + ": no driver family, more than two points, or a kind twice")
		}
		r := role{family: fam, points: [2]Point{noPoint, noPoint}, prio: e.Role.Prio, seen: uint8(e.Role.Seen), creates: e.Role.Creates}
		copy(r.points[:], e.Points)
		t[e.Kind] = &r
	}
	return t
}()

// familyOf is the family of a driver's own events.
func familyOf(driver string) (family, bool) {
	for f, d := range familyDriver {
		if d == driver && d != "" {
			return family(f), true
		}
	}
	return 0, false
}

// Precedence of the hooks that can measure the same point (role.prio for driver events).
const (
	prioSchedFenceSignal = 1 // tf from the finished fence's dma_fence_signaled
	prioSchedEvent       = 2 // tq/tr/tf from the scheduler's own events
	prioOwnFenceSignal   = 1 // i915: th from the request fence's dma_fence_signaled
	prioHWSignal         = 2 // th from the linked hardware fence
	prioTeScheduled      = 1 // te from the scheduled fence (signalled after run_job returned)
	prioTeDriver         = 2 // te from xe_sched_job_run / msm_gpu_submit_flush inside run_job
	prioTeRunJobEnd      = 2 // te from fexit of run_job
	prioTeFenceInit      = 3 // te from the hardware fence's creation in run_job
	prioTeFenceEmit      = 4 // te from the hardware fence's emission in run_job
	prioIoctl            = 1
	prioGPUStamp         = 3 // ts/th from the GPU's own stamps: over every CPU-side hook
	prioDriverIRQ        = 3 // th from a driver's IRQ event traced just before it signals the hardware fence (v3d)
)

// gpuClock is the counter a driver's GPU stamps count: its frequency and where the
// frequency comes from. One row per driver with stamps (docs/gpu-timestamps.md).
type gpuClock struct {
	hz  int64
	src string
}

var gpuClocks = map[family]gpuClock{
	// Every Adreno generation that writes stamps (a6xx, a7xx, a8xx: a6xx_gpu.c) counts
	// the always-on counter at 19.2 MHz: msm_gpu.c retire_submit converts it so
	// ("Convert 19.2Mhz alwayson ticks", elapsed = Δ×10000/192) in 6.1, 6.12, 7.2 and
	// 7.3; a6xx_gpu_busy and a8xx_gpu_busy report 19200000 as its sample rate, and
	// enable_clk sets rbbmtimer_clk to 19.2 MHz.
	famMsm: {19_200_000, "msm_gpu.c retire_submit, a6xx/a8xx gpu_busy (6.1..7.3)"},
}

// gpuAnchor is one CPU-clock reading of a GPU counter: the counter value ticks as the
// CPU read it, and the CPU timestamp of the event that reports it.
type gpuAnchor struct {
	cpu   int64
	ticks uint64
}

// gpuToCPU maps a GPU counter value to the CPU clock through an anchor:
//
//	cpu(tick) = anchor.cpu + (tick − anchor.ticks) × 1e9 / hz
//
// The difference is taken modulo 2^64 and read as signed, so a counter that wrapped
// between the anchor and the stamp counts forward across the wrap, and a stamp before
// the anchor gives a time before it. The division truncates toward zero (sub-ns).
func gpuToCPU(tick uint64, an gpuAnchor, hz int64) int64 {
	d := int64(tick - an.ticks)
	q, r := d/hz, d%hz
	return an.cpu + q*1e9 + r*1e9/hz // split so that d×1e9 cannot overflow
}

// Why a pair of GPU stamps was not used (gpuExecution).
const (
	stampsNone         = "no stamps"          // start = end = 0: the generation writes none (a2xx..a5xx)
	stampsEndFirst     = "end before start"   // not a pair on one counter
	stampsBeforeAnchor = "start before flush" // not on the anchor's counter (7.2+: CP_ALWAYS_ON_CONTEXT)
	stampsAfterRetire  = "end after retire"   // the anchor does not hold for this pair
)

// gpuExecution turns a submit's GPU start and end stamps into ts and th on the CPU
// clock through the anchor read when the submit was flushed to the ring, or says why
// it cannot. The checks follow from the order the kernel imposes (a6xx_submit, msm_gpu.c):
// the CPU reads the anchor before it writes the ring's write pointer, so the GPU starts
// the submit after the anchor (start ≥ anchor ticks); the GPU writes the end stamp
// before the fence interrupt that leads to the retire event (th ≤ retire). A pair that
// breaks either is not on the anchor's clock and is not used.
func gpuExecution(an gpuAnchor, start, end uint64, retire, hz int64) (ts, th int64, why string) {
	if start == 0 && end == 0 {
		return 0, 0, stampsNone
	}
	if int64(end-start) < 0 {
		return 0, 0, stampsEndFirst
	}
	if int64(start-an.ticks) < 0 {
		return 0, 0, stampsBeforeAnchor
	}
	ts, th = gpuToCPU(start, an, hz), gpuToCPU(end, an, hz)
	if th > retire {
		return 0, 0, stampsAfterRetire
	}
	return ts, th, ""
}

// schedPrio is the precedence of a scheduler queue/run event: a driver's own event
// (amdgpu_cs_ioctl, amdgpu_sched_run_job: the decoder sets Driver) yields to the generic
// scheduler event when a kernel traces both for the same job.
func schedPrio(e *event.Event) uint8 {
	if e.Driver != "" {
		return prioSchedEvent - 1
	}
	return prioSchedEvent
}

// schedFenceDrivers are the dma_fence driver names of scheduler fences (scheduled and
// finished): drm_sched_fence_get_driver_name, and amdgpu's scheduler before it moved to
// drivers/gpu/drm/scheduler (4.11 capture: "amd_sched"). Any other driver name on a fence
// created in run_job is a hardware fence.
var schedFenceDrivers = map[string]bool{"drm_sched": true, "amd_sched": true}

// isSchedFence reports whether a fence event may be about a scheduler fence. An empty
// driver (a source that does not read it) may be either.
func isSchedFence(driver string) bool { return driver == "" || schedFenceDrivers[driver] }

// latestWins says which of two hooks of equal precedence keeps the point: the latest for
// points that end a multi-step activity (validation, emission — the last fence created in
// run_job is the job's — hardware done after preemption), the earliest otherwise.
var latestWins = [NumPoints]bool{PointBOValidEnd: true, PointEmitted: true, PointHWDone: true}
