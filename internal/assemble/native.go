// Driver-specific job events (i915, xe, msm; v3d in v3d.go, old i915 in i915legacy.go), as mapped by the table in drivers.go.
//
// i915 has no DRM scheduler: its request events are the job. xe always runs on drm_sched
// and msm has since 5.19: when the scheduler's events are traced they are the job, and
// the driver's events only enrich it — an event inside a worker's run window (threads.go)
// belongs to the job being run, and xe_sched_job_create belongs to the job its thread
// queues next. Without scheduler events the driver events stand alone.

package assemble

import "github.com/ghostdriver/ghostdriver/internal/event"

const ruleXeFinished = "xe_hw_fence_as_finished"

func (a *Assembler) nativeEvent(e *event.Event, r *role) {
	switch r.family {
	case famI915:
		a.i915Event(e, r)
	case famXe:
		a.xeJobEvent(e, r)
	case famMsm:
		a.msmEvent(e, r)
	case famVirtio:
		a.virtioEvent(e, r)
	case famV3D, famVC4:
		a.v3dEvent(e, r)
	case famPVR:
		a.pvrEvent(e, r)
	case famIVPU:
		a.ivpuEvent(e, r)
	case famXDNA:
		a.xdnaEvent(e, r)
	}
}

// apply sets the role's points on a standalone driver job and moves it along.
func (a *Assembler) apply(j *job, e *event.Event, r *role) {
	hook := hookOf(e)
	for _, p := range r.points {
		if p != noPoint {
			j.set(p, e.Time, r.prio, Measured, hook)
		}
	}
	j.seen |= r.seen
	a.describe(j, e, r.seen&seenQueue != 0)
	if j.out.Driver == "" {
		j.out.Driver = familyDriver[j.fam]
	}
	if r.seen&seenQueue != 0 {
		a.bracket(j, e)
		if j.stream != 0 {
			a.streams.put(j.stream, struct{}{})
		}
	}
	a.touch(j, e.Time)
	if r.seen&seenDone != 0 {
		a.finish(j)
	}
}

// i915: a request is keyed by its fence (ctx, seqno).
func (a *Assembler) i915Event(e *event.Event, r *role) {
	if e.Fence.IsZero() {
		a.orphan(e)
		return
	}
	j := a.byKey.get(key32(e.Fence))
	if j != nil && (!j.open() || j.fam != famI915) {
		j = nil
	}
	if j == nil {
		if !r.creates {
			a.orphan(e)
			return
		}
		j = a.newJob(famI915, e.Time)
		a.setKey(j, e.Fence, e.FenceWide)
		j.stream = key32(e.Fence) >> 32
	}
	a.i915LegacyNote(j, e)
	a.apply(j, e, r)
}

// msm: a submit is keyed by its per-device ident.
func (a *Assembler) msmEvent(e *event.Event, r *role) {
	id := idKey{ns: nsMsm, scope: e.Device, id: e.JobID}
	j := a.byID[id]
	if j != nil && !j.open() {
		j = nil
	}
	if e.Kind != event.MsmSubmitRetired {
		if run := a.running(e.TID); run != nil && run.fam == famSched && j != run {
			// msm ≥5.19: msm_gpu_submit() (and its flush event) runs in drm_sched's
			// run_job. The submit's msm_gpu_submit event, traced earlier in the ioctl,
			// opened a standalone job: fold it into the scheduler's.
			if j != nil && j.fam == famMsm && j.seen&seenRun == 0 {
				a.mergeMsm(j, run)
			}
			j = run
			a.addID(j, id)
		}
	}
	if j == nil {
		if !r.creates {
			a.orphan(e)
			return
		}
		j = a.newJob(famMsm, e.Time)
		a.addID(j, id)
	}
	switch e.Kind {
	case event.MsmSubmitFlush:
		a.gpu.anchor(j, gpuAnchor{cpu: e.Time, ticks: e.GPUTicks})
	case event.MsmSubmitRetired:
		a.msmStamps(j, e)
	}
	if j.fam == famSched {
		if e.Kind == event.MsmSubmitFlush {
			j.set(PointEmitted, e.Time, prioTeDriver, Measured, hookOf(e))
		}
		// msm_gpu_submit_retired comes after the fence signal under drm_sched: only the stamps.
		msmSubmitter(j, e)
		a.touch(j, e.Time)
		return
	}
	a.apply(j, e, r)
	msmSubmitter(j, e)
}

// msmSubmitter gives a job the submitting thread msm events print (pid=, pid_nr of the
// thread's struct pid) when no event of that thread did, and its process when this
// event ran on that thread (the TGID column of tracefs, when recorded).
func msmSubmitter(j *job, e *event.Event) {
	if e.Submitter == 0 {
		return
	}
	if j.out.TID == 0 {
		j.out.TID = e.Submitter
	}
	if e.TID == j.out.TID {
		if j.out.PID == 0 && e.PID != 0 {
			j.out.PID = e.PID
		}
		if j.out.Comm == "" && e.Comm != "" {
			j.out.Comm = e.Comm
		}
	}
}

// mergeMsm folds a standalone msm job (opened by msm_gpu_submit in the ioctl) into the
// drm_sched job that runs the submit.
func (a *Assembler) mergeMsm(x, j *job) {
	ids := x.ids
	tid, pid, comm := x.out.TID, x.out.PID, x.out.Comm
	a.discard(x)
	a.gpu.forget(x)
	for _, id := range ids {
		a.addID(j, id)
	}
	if j.out.TID == 0 {
		j.out.TID, j.out.PID, j.out.Comm = tid, pid, comm
	}
	if j.out.Driver == "" {
		j.out.Driver = "msm"
	}
}

// Hooks of the points measured by msm's GPU stamps, and the rule of th when a
// submit's stamps failed gpuExecution's checks (th = tf, inferred).
const (
	hookMsmGPUStart       = "msm_gpu_submit_retired(gpu_start)"
	hookMsmGPUEnd         = "msm_gpu_submit_retired(gpu_end)"
	ruleGPUStampsRejected = "gpu_stamps_rejected"
)

// msmStamps sets ts and th from a retired submit's GPU stamps (drivers.go: gpuExecution).
func (a *Assembler) msmStamps(j *job, e *event.Event) {
	an, ok := a.gpu.take(j)
	if e.GPUStart == 0 && e.GPUEnd == 0 {
		a.gpu.st.None++
		return
	}
	if !ok {
		a.gpu.st.Unanchored++
		return
	}
	ts, th, why := gpuExecution(an, e.GPUStart, e.GPUEnd, e.Time, gpuClocks[famMsm].hz)
	if why != "" {
		a.gpu.st.Rejected++
		if j.fam == famMsm && !j.out.Points[PointHWDone].Known() {
			// th = tf (the retire) as fallback_to_finished would set it, named so that the
			// job says its stamps were there and did not hold. Not under drm_sched: there
			// the retire comes after tf, and th keeps its fence signal or fallback.
			j.set(PointHWDone, e.Time, 0, Inferred, ruleGPUStampsRejected)
		}
		return
	}
	j.set(PointHWStart, ts, prioGPUStamp, Measured, hookMsmGPUStart)
	j.set(PointHWDone, th, prioGPUStamp, Measured, hookMsmGPUEnd)
	a.gpu.st.Used++
}

// GPUStampStats counts what became of the GPU stamps of retired submits.
type GPUStampStats struct {
	Used       uint64 // both stamps mapped to the CPU clock: ts and th measured
	None       uint64 // the event carried no stamps (start = end = 0)
	Unanchored uint64 // no flush event (no anchor) was seen for the submit
	Rejected   uint64 // stamps and anchor disagree (gpuExecution's checks)
}

// gpuStamps holds the flush anchors of submits that have not retired yet.
type gpuStamps struct {
	anchors map[*job]gpuAnchor
	sweepAt int
	st      GPUStampStats
}

// maxAnchors bounds the anchors of submits that never retire (evicted, capture cut):
// past it, those of jobs no longer open are swept.
const maxAnchors = 4096

func (g *gpuStamps) anchor(j *job, an gpuAnchor) {
	if g.anchors == nil {
		g.anchors = map[*job]gpuAnchor{}
	}
	if len(g.anchors) >= max(g.sweepAt, maxAnchors) {
		for k := range g.anchors {
			if !k.open() {
				delete(g.anchors, k)
			}
		}
		g.sweepAt = 2 * len(g.anchors) // amortised: many open submits do not sweep on every flush
	}
	g.anchors[j] = an
}

func (g *gpuStamps) take(j *job) (gpuAnchor, bool) {
	an, ok := g.anchors[j]
	delete(g.anchors, j)
	return an, ok
}

func (g *gpuStamps) forget(j *job) { delete(g.anchors, j) }

// GPUStamps returns the GPU stamp counts so far.
func (a *Assembler) GPUStamps() GPUStampStats { return a.gpu.st }

// xeID is an xe job's identity: the job's fence pointer, the only one its events print
// (the decoder puts it in FencePtr and JobID).
func xeID(e *event.Event) idKey {
	p := e.FencePtr
	if p == 0 {
		p = e.JobID
	}
	return idKey{ns: nsXe, scope: e.Device, id: p}
}

func (a *Assembler) xeJobEvent(e *event.Event, r *role) {
	id := xeID(e)
	j := a.byID[id]
	if j != nil && !j.open() {
		j = nil
	}
	switch e.Kind {
	case event.XeSchedJobCreate:
		if j == nil {
			// drm_sched_job_queue before xe_sched_job_create on the same thread.
			if th := a.threadOf(e.TID); th != nil && th.inIoctl {
				for _, q := range th.queued {
					if q.open() && q.fam == famSched && !hasNS(q, nsXe) {
						j = q
						a.addID(j, id)
						break
					}
				}
			}
		}
		if j != nil && j.fam == famSched {
			a.touch(j, e.Time)
			return
		}
		if j == nil {
			j = a.newJob(famXe, e.Time)
			a.addID(j, id)
		}
		a.apply(j, e, r)
		if th := a.thread(e.TID, e.Time); th != nil && th.inIoctl {
			th.xe = j
		}
	case event.XeSchedJobRun:
		if j == nil {
			if run := a.running(e.TID); run != nil && run.fam == famSched {
				j = run // inside drm_sched's run_job (guc_exec_queue_run_job)
				a.addID(j, id)
			}
		}
		if j == nil {
			j = a.newJob(famXe, e.Time)
			a.addID(j, id)
		}
		if j.fam == famSched {
			j.set(PointEmitted, e.Time, prioTeDriver, Measured, hookOf(e))
			a.touch(j, e.Time)
			return
		}
		a.apply(j, e, r)
	default:
		a.st.Ignored++ // xe_sched_job_exec: between run and the hardware, no point of ours
	}
}

func hasNS(j *job, ns namespace) bool {
	for _, id := range j.ids {
		if id.ns == ns {
			return true
		}
	}
	return false
}

// mergeXe folds a standalone xe job into the drm_sched job its thread queued next.
func (a *Assembler) mergeXe(x, j *job) {
	ids := x.ids
	hw, hasHW := x.out.HWFence, x.hasHW
	deps := x.out.Deps
	a.discard(x)
	for _, id := range ids {
		a.addID(j, id)
	}
	for _, d := range deps {
		a.addDep(j, d.Fence, d.Signaled)
	}
	if hasHW && !j.hasHW {
		a.linkHW(j, hw, "xe")
	}
	if j.out.Driver == "" {
		j.out.Driver = "xe"
	}
}

// xeHWSignal: the xe hardware fence signalled (th). Found by the fence pointer shared
// with the job's events, or by the hardware fence key once linked.
func (a *Assembler) xeHWSignal(e *event.Event) {
	j := a.byID[xeID(e)]
	if (j == nil || !j.open()) && !e.Fence.IsZero() {
		j = a.byHW.get(key32(e.Fence))
	}
	if j == nil || !j.open() {
		if e.Fence.IsZero() || !a.signal(key32(e.Fence), e.Time, hookOf(e), false) {
			a.orphan(e)
		}
		return
	}
	hook := hookOf(e)
	if !e.Fence.IsZero() {
		a.linkHW(j, e.Fence, "xe")
		a.signal(key32(e.Fence), e.Time, hook, false)
	}
	j.set(PointHWDone, e.Time, prioHWSignal, Measured, hook)
	a.touch(j, e.Time)
	if j.fam == famXe && !j.out.Points[PointFinished].Known() {
		// Without drm_sched events nothing else reports the job's end.
		j.set(PointFinished, e.Time, 1, Inferred, ruleXeFinished)
		j.seen |= seenDone
		a.finish(j)
	}
}

// xeHWCreate links an xe hardware fence to the job sharing its pointer.
func (a *Assembler) xeHWCreate(e *event.Event) {
	if j := a.byID[xeID(e)]; j != nil && j.open() && !e.Fence.IsZero() {
		a.linkHW(j, e.Fence, "xe")
		return
	}
	a.st.Ignored++
}

// xeFree ends an xe pointer identity: the pointer may be reused from now on.
func (a *Assembler) xeFree(e *event.Event) {
	id := xeID(e)
	if _, ok := a.byID[id]; ok {
		delete(a.byID, id)
	}
}
