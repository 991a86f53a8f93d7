// The one table of what each job event means for the critical path, per driver family.
// Everything the assembler knows about which hook measures which point lives here; the
// code elsewhere asks this table and never tests driver names itself.
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
// i915 (no DRM scheduler; a request is a dma_fence, key (ctx, seqno); Ring = engine):
//
//	i915_request_queue / i915_request_add           tq     (earliest of the two)
//	i915_request_submit                             tr, te (submission to the engine is the emission)
//	i915_request_in                                 ts     measured: the request entered the hardware (execlists)
//	i915_request_out                                th     (latest, after preemption in/out pairs)
//	request fence dma_fence_signaled                th     when i915_request_out is absent (GuC submission)
//	i915_request_retire                             tf
//
// xe (built on drm_sched: the scheduler events are the job; xe events only enrich):
//
//	xe_sched_job_create                             tq     standalone only; merged into the drm_sched job queued next on the thread
//	xe_sched_job_run (worker, inside run_job)       te     of the worker's current drm_sched job; tr when standalone
//	xe_hw_fence_signal                              th     by the xe fence pointer (the job's "fence=%p") or hw fence key
//	(standalone, no drm_sched events)               tf     inferred = th, rule "xe_hw_fence_as_finished"
//	xe_sched_job_free                               —      ends the pointer identity (pointers are reused)
//
// msm (Adreno). ≤5.18 submits synchronously from the ioctl; ≥5.19 from drm_sched's run_job:
//
//	msm_gpu_submit                                  tq     standalone; enrichment (id link) on a drm_sched worker
//	msm_gpu_submit_flush                            tr, te standalone; te of the worker's drm_sched job
//	msm_gpu_submit                                  tq     standalone (traced in the submit ioctl); under drm_sched
//	                                                       the standalone job is folded into the drm_sched job whose
//	                                                       run_job does the flush
//	msm_gpu_submit_flush                            tr, te standalone; te of the worker's drm_sched job. Its ticks
//	                                                       (always-on counter read by the CPU) anchor the GPU stamps
//	msm_gpu_submit_retired                          tf     standalone only (after the fence signal with drm_sched)
//	msm_gpu_submit_retired start=, end=             ts, th measured on the GPU's clock, mapped to the CPU clock by
//	                                                       gpuToCPU through the flush's anchor (hooks
//	                                                       "msm_gpu_submit_retired(gpu_start)", "…(gpu_end)"); without
//	                                                       stamps or anchor th falls back to tf, ts is ring_serial;
//	                                                       stamps that fail gpuExecution's checks: th = tf, rule
//	                                                       "gpu_stamps_rejected" (standalone; drm_sched keeps its signal)
//	pid= of any of the three                        —      the job's thread when no submitter event gave one; the
//	                                                       process when the event ran on that thread (TGID column)

package assemble

import "github.com/ghostdriver/ghostdriver/internal/event"

// family is the identity scheme and point table a job follows.
type family uint8

const (
	famSched family = iota // DRM scheduler
	famI915
	famXe // xe events without drm_sched events
	famMsm
)

var familyDriver = [...]string{famSched: "", famI915: "i915", famXe: "xe", famMsm: "msm"}

// Flags of the three events that make a job Completed.
const (
	seenQueue uint8 = 1 << iota
	seenRun
	seenDone
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

// driverRoles is indexed by event.Kind; kinds without a role are handled elsewhere or ignored.
var driverRoles = func() (t [256]*role) {
	set := func(k event.Kind, r role) { t[k] = &r }
	set(event.I915RequestQueue, role{famI915, [2]Point{PointQueued, noPoint}, 1, seenQueue, true})
	set(event.I915RequestAdd, role{famI915, [2]Point{PointQueued, noPoint}, 1, seenQueue, true})
	set(event.I915RequestSubmit, role{famI915, [2]Point{PointRun, PointEmitted}, 1, seenRun, true})
	set(event.I915RequestIn, role{famI915, [2]Point{PointHWStart, noPoint}, 2, 0, false})
	set(event.I915RequestOut, role{famI915, [2]Point{PointHWDone, noPoint}, 2, 0, false})
	set(event.I915RequestRetire, role{famI915, [2]Point{PointFinished, noPoint}, 2, seenDone, false})
	set(event.XeSchedJobCreate, role{famXe, [2]Point{PointQueued, noPoint}, 1, seenQueue, true})
	set(event.XeSchedJobRun, role{famXe, [2]Point{PointRun, noPoint}, 1, seenRun, true})
	set(event.MsmSubmit, role{famMsm, [2]Point{PointQueued, noPoint}, 1, seenQueue, true})
	set(event.MsmSubmitFlush, role{famMsm, [2]Point{PointRun, PointEmitted}, 1, seenRun, true})
	set(event.MsmSubmitRetired, role{famMsm, [2]Point{PointFinished, noPoint}, 2, seenDone, false})
	return t
}()

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
