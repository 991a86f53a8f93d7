// DRM scheduler events: queue, dependency, run, run_job's return, done.
//
// Identity, by kernel generation (drivers.go has the table):
//   - 6.17+ and amdgpu_cs_ioctl/amdgpu_sched_run_job: the finished fence key
//     (64-bit on 6.17+, 32-bit on amdgpu); dma_fence events join by its truncation.
//   - ≤6.16 drm_sched_job/drm_run_job/drm_sched_process_job print pointers only: queue→run
//     join on (finished fence pointer, job id), run→done on the pointer. The pointer is
//     reused after the job is freed, so a queue or run that finds a pending job on the same
//     pointer with another id means the earlier job's done was lost: it is closed. The
//     older drm_sched_job_wait_dep names the job by (ring, id) instead.
//   - Pointer jobs learn their finished fence key from the drm_sched fences created on the
//     submitting thread just before the queue event (drm_sched_job_arm initialises the
//     scheduled then the finished fence), when dma_fence_init is traced.

package assemble

import "github.com/ghostdriver/ghostdriver/internal/event"

// schedJob finds the job a scheduler event is about, or nil.
func (a *Assembler) schedJob(e *event.Event) *job {
	switch {
	case !e.Fence.IsZero():
		return a.byKey.get(key32(e.Fence))
	case e.FencePtr != 0:
		j := a.byPtr.get(e.FencePtr)
		if j != nil && e.JobID != 0 && j.out.JobID != 0 && j.out.JobID != e.JobID {
			a.abandon(j, reasonPtrReused)
			return nil
		}
		return j
	case e.JobID != 0 && e.Ring != "":
		return a.byID[idKey{ns: nsSched, scope: e.Ring, id: e.JobID}]
	}
	return nil
}

// identify gives j the identities e carries.
func (a *Assembler) identify(j *job, e *event.Event) {
	if e.Entity != 0 && j.entity == 0 {
		j.entity = e.Entity
	}
	if !e.Fence.IsZero() {
		a.setKey(j, e.Fence, e.FenceWide)
		if j.stream == 0 {
			j.stream = key32(e.Fence) >> 32
		}
		// The live source's join of pointers to keys is bounded (probe/classic.go): a
		// later event of this job may come back with its pointer only.
		if e.FencePtr != 0 {
			a.setPtr(j, e.FencePtr)
		}
		// A ≤6.16 event whose pointer the live source joined to a key: its
		// drm_sched_job_wait_dep names the job only by (ring, id), which the source's
		// join may not resolve, so the job is findable by that identity too.
		if e.FencePtr != 0 && e.JobID != 0 && e.Ring != "" && e.Kind != event.JobDependency {
			a.addID(j, idKey{ns: nsSched, scope: e.Ring, id: e.JobID})
		}
		return
	}
	if e.FencePtr != 0 {
		a.setPtr(j, e.FencePtr)
	}
	if e.JobID != 0 && e.Ring != "" {
		a.addID(j, idKey{ns: nsSched, scope: e.Ring, id: e.JobID})
	}
	if j.stream == 0 {
		j.stream = e.Entity
	}
}

func (a *Assembler) jobQueue(e *event.Event) {
	j := a.schedJob(e)
	if j != nil && j.seen&seenQueue != 0 {
		switch {
		case e.Fence.IsZero() && j.state == statePending:
			a.abandon(j, reasonPtrReused) // same pointer queued again: the first job's done was lost
			j = nil
		case j.out.Points[PointQueued].Hook == hookOf(e):
			a.st.Duplicates++
			return
		}
		// Otherwise a second hook of the same queueing (amdgpu_cs_ioctl and
		// drm_sched_job_queue on one kernel): merged.
	}
	if j == nil {
		j = a.newJob(famSched, e.Time)
	}
	a.identify(j, e)
	j.seen |= seenQueue
	j.set(PointQueued, e.Time, schedPrio(e), Measured, hookOf(e))
	a.describe(j, e, true)
	a.bracket(j, e)
	if th := a.threadOf(e.TID); th != nil {
		if th.hasInit && !j.hasKey {
			a.setKey(j, th.schedInit, false)
		}
		th.hasInit = false
		if x := th.xe; x != nil && x != j && x.open() && x.fam == famXe && x.seen&seenRun == 0 {
			a.mergeXe(x, j)
		}
		th.xe = nil
	}
	a.pvrQueued(j, e.TID)
	if j.stream != 0 {
		a.streams.put(j.stream, struct{}{})
	}
	a.learnJobContexts(j)
	if j.hasKey {
		if deps, ok := a.early.get(j.key); ok {
			a.early.remove(j.key)
			for _, d := range deps {
				a.addDep(j, d, 0)
			}
		}
	}
	a.touch(j, e.Time)
}

func (a *Assembler) jobRun(e *event.Event) {
	j := a.schedJob(e)
	if j != nil && j.seen&seenRun != 0 && a.duplicate(j, PointRun, e) {
		return
	}
	if j == nil {
		j = a.newJob(famSched, e.Time)
	}
	a.identify(j, e)
	j.seen |= seenRun
	// A job run twice (GPU reset resubmission) keeps its first run time; its hardware
	// fence and te come from the latest run.
	j.set(PointRun, e.Time, schedPrio(e), Measured, hookOf(e))
	a.describe(j, e, false)
	if th := a.thread(e.TID, e.Time); th != nil {
		th.run, th.runOpen = j, true
	}
	if !e.HWFence.IsZero() {
		a.linkHW(j, e.HWFence, "")
	}
	a.learnJobContexts(j)
	a.touch(j, e.Time)
}

// runJobEnd is the fexit of the driver's run_job: ring emission is done.
func (a *Assembler) runJobEnd(e *event.Event) {
	j := a.running(e.TID)
	if j == nil {
		if j = a.schedJob(e); j == nil || !j.open() {
			a.orphan(e)
			return
		}
	}
	j.set(PointEmitted, e.Time, prioTeRunJobEnd, Measured, funcHook(e))
	if !e.HWFence.IsZero() {
		a.linkHW(j, e.HWFence, "")
	}
	if j.seen&seenRun == 0 {
		// The run event was lost (the kernel counts it in the source's lost events),
		// but run_job's exit proves the job was handed to the ring: tr is inferred as
		// the earliest thing run_job did that we saw (its hardware fence), else its exit.
		t := e.Time
		if te := j.out.Points[PointEmitted]; te.Known() && te.Time < t {
			t = te.Time
		}
		j.set(PointRun, t, 0, Inferred, "run_job_exit(run event lost)")
		j.seen |= seenRun
	}
	if th := a.threadOf(e.TID); th != nil && th.run == j {
		th.runOpen = false
	}
	a.touch(j, e.Time)
}

func (a *Assembler) jobDone(e *event.Event) {
	var j *job
	switch {
	case !e.Fence.IsZero():
		j = a.byKey.get(key32(e.Fence))
	case e.FencePtr != 0:
		j = a.byPtr.get(e.FencePtr)
	}
	hook := hookOf(e)
	if j == nil || !j.open() {
		// Someone may still depend on the finished fence of a job we did not see.
		if e.Fence.IsZero() || !a.signal(key32(e.Fence), e.Time, hook, true) {
			a.orphan(e)
		}
		return
	}
	if j.seen&seenDone != 0 && a.duplicate(j, PointFinished, e) {
		return
	}
	a.identify(j, e)
	j.seen |= seenDone
	j.set(PointFinished, e.Time, prioSchedEvent, Measured, hook)
	if j.hasKey {
		a.signal(j.key, e.Time, hook, true) // the finished fence signals right after
	}
	a.touch(j, e.Time)
	a.finish(j)
}

// duplicate counts e when it repeats the event that set p (same time, same hook): a
// capture merged with itself, a ring buffer page read twice. A run at another time is a
// resubmission, not a duplicate.
func (a *Assembler) duplicate(j *job, p Point, e *event.Event) bool {
	if b := j.out.Points[p]; b.Time == e.Time && b.Hook == hookOf(e) {
		a.st.Duplicates++
		return true
	}
	return false
}

// jobDependency: drm_sched_job_add_dep (6.17+, traced while the job is armed, before it
// is queued: kept aside until the queue event), drm_sched_job_wait_dep (≤6.16, on the
// worker, by (ring, id)), drm_sched_job_unschedulable.
func (a *Assembler) jobDependency(e *event.Event) {
	if e.Dep.IsZero() {
		a.orphan(e)
		return
	}
	var j *job
	switch {
	case !e.Fence.IsZero():
		j = a.byKey.get(key32(e.Fence))
	case e.JobID != 0 && e.Ring != "":
		j = a.byID[idKey{ns: nsSched, scope: e.Ring, id: e.JobID}]
	}
	if j == nil || !j.open() {
		if e.Fence.IsZero() {
			a.orphan(e)
			return
		}
		k := key32(e.Fence)
		deps, _ := a.early.get(k)
		if len(deps) < maxDepsPerJob {
			a.early.put(k, append(deps, e.Dep))
		}
		return
	}
	a.addDep(j, e.Dep, 0)
	if e.Name == "drm_sched_job_unschedulable" {
		a.markUnschedulable(j, e.Dep)
	}
	a.touch(j, e.Time)
}
