// Jobs of imagination (powervr), ivpu (Intel NPU) and amdxdna (AMD NPU) from their own
// events, alone or beside drm_sched's. What each driver traces where is stated in the
// event table (internal/eventdef/table.go, with the kernel sources read) and
// docs/stages.md; in short:
//
//   - powervr (drm_sched): pvr_job_create in the submit ioctl, pvr_job_submit_fw at the
//     end of run_job after the firmware kick, pvr_job_done at the job's release. All
//     three name the job by its pointer. Under drm_sched the first submit_fw inside a
//     worker's run window names the job being run (te), and the job opened at create is
//     folded into it; a second submit_fw in the same window is the fragment job paired
//     with the geometry job being run, handed to the firmware with it: its own
//     scheduler job is run later (run_job returns its done fence at once), and it is not
//     this job, so it is counted, not applied. Alone: tq = create, tr = te = submit_fw,
//     tf = the release (inferred, an upper bound: the done fence signalled before).
//   - ivpu (no scheduler): "job" events whose first field is the step. create comes
//     before the job id exists (job:0): it opens a job keyed by its thread, which the
//     thread's submit re-keys by job id; submit is after the doorbell (tr = te); done is
//     right after the done fence's signal (tf). Nothing marks the NPU's start or end.
//   - amdxdna (drm_sched): xdna_job names the scheduler job's finished fence. "sent to
//     device" ends run_job (te; alone tr = te), "signaled fence" is traced just before
//     the job's hardware fence is signalled in the firmware response handler (th; alone
//     tf = th, as v3d's IRQ events).

package assemble

import (
	"strconv"

	"github.com/ghostdriver/ghostdriver/internal/event"
)

const (
	rulePVRRelease      = "pvr_release_as_finished"
	rulePVRRunUntraced  = "pvr_submit_in_run_job(run event not traced)"
	ruleXDNAFinished    = "xdna_signal_as_finished"
	ruleXDNARunUntraced = "xdna_sent_in_run_job(run event not traced)"

	reasonPVRReused     = "the job's pointer was created again before its release (the release event was lost)"
	reasonPVRNotSubmit  = "released without being handed to the firmware (a failed submit)"
	reasonIVPUReplaced  = "the same job id was submitted again before this job's done event"
	reasonIVPUNotSubmit = "created and not submitted on its thread before the thread created another"
)

// removeID takes one identity off a job (a created ivpu job re-keyed at its submit).
func (a *Assembler) removeID(j *job, id idKey) {
	if a.byID[id] == j {
		delete(a.byID, id)
	}
	for i, x := range j.ids {
		if x == id {
			j.ids = append(j.ids[:i], j.ids[i+1:]...)
			return
		}
	}
}

func (a *Assembler) pvrEvent(e *event.Event, r *role) {
	if e.JobID == 0 {
		a.orphan(e)
		return
	}
	id := idKey{ns: nsPVR, id: e.JobID}
	j := a.byID[id]
	if j != nil && !j.open() {
		if e.Kind == event.PVRJobDone {
			// The scheduler's job finished before its release: nothing left to do.
			delete(a.byID, id)
			a.st.Ignored++
			return
		}
		j = nil
	}
	switch e.Kind {
	case event.PVRJobCreate:
		if j != nil {
			if j.fam == famPVR {
				a.close(j, causeTimeout, Incomplete, reasonPVRReused)
			} else {
				a.removeID(j, id)
			}
		}
		j = a.newJob(famPVR, e.Time)
		a.addID(j, id)
		if e.Entity != 0 {
			j.entity = e.Entity
		}
		a.apply(j, e, r)
		a.pvrCreatedOn(j, e.TID)
	case event.PVRJobSubmitFW:
		run := a.running(e.TID)
		if run != nil && run.fam != famSched {
			run = nil
		}
		switch {
		case run != nil && j != nil && j != run && j.fam == famSched:
			// Another scheduler job: the fragment job paired with the geometry job being
			// run, handed to the firmware with it before its own run (its te would come
			// before its tr): counted, not applied.
			a.st.Ignored++
		case run != nil:
			if j == run {
				a.pvrEmitted(run, e)
				return
			}
			if j != nil {
				a.discard(j) // opened at create and not folded at the queue: this job
			}
			if hasNS(run, nsPVR) {
				// The paired fragment job (its create not folded either): the pointer stays
				// known (a finished entry) until its release, which is then no orphan.
				a.st.Ignored++
				if j != nil {
					a.byID[id] = j
				}
				return
			}
			a.addID(run, id)
			a.pvrEmitted(run, e)
		case j != nil && j.fam == famSched:
			// The scheduler's queue event took the job at create; its run was not traced.
			if j.seen&seenRun == 0 {
				j.set(PointRun, e.Time, 0, Inferred, rulePVRRunUntraced)
				j.seen |= seenRun
			}
			a.pvrEmitted(j, e)
		default:
			if j == nil {
				j = a.newJob(famPVR, e.Time)
				a.addID(j, id)
			}
			a.apply(j, e, r)
		}
	case event.PVRJobDone:
		if j == nil {
			a.orphan(e)
			return
		}
		a.removeID(j, id) // the pointer may be reused from now on
		if j.fam != famPVR {
			a.touch(j, e.Time)
			return
		}
		if j.seen&seenRun == 0 {
			a.close(j, causeTimeout, Incomplete, reasonPVRNotSubmit)
			return
		}
		j.set(PointFinished, e.Time, 1, Inferred, rulePVRRelease)
		j.seen |= seenDone
		a.touch(j, e.Time)
		a.finish(j)
	}
}

// pvrEmitted: the scheduler's job was handed to the firmware (te, measured).
func (a *Assembler) pvrEmitted(j *job, e *event.Event) {
	if a.duplicate(j, PointEmitted, e) {
		return
	}
	if j.out.Driver == "" {
		j.out.Driver = familyDriver[famPVR]
	}
	j.set(PointEmitted, e.Time, prioTeDriver, Measured, hookOf(e))
	a.touch(j, e.Time)
}

// maxPVRCreated bounds the jobs a thread has created and not queued that are kept for
// the queue events (a submit ioctl creates all its jobs, then queues them in order).
const maxPVRCreated = 64

// pvrCreatedOn remembers a job created on a thread, for the scheduler job it queues next.
func (a *Assembler) pvrCreatedOn(j *job, tid uint32) {
	l := a.pvrCreated[tid]
	for len(l) > 0 && (!l[0].open() || len(l) >= maxPVRCreated) {
		l = l[1:]
	}
	a.pvrCreated[tid] = append(l, j)
}

// pvrQueued folds the oldest job created on the queueing thread into the scheduler's job
// it queues: pvr_submit_jobs creates the ioctl's jobs in order, then pushes them in the
// same order (drm_sched_job_queue).
func (a *Assembler) pvrQueued(j *job, tid uint32) {
	if len(a.pvrCreated) == 0 {
		return // no powervr job waits for its queue event: every other driver's queue
	}
	l, ok := a.pvrCreated[tid]
	if !ok {
		return
	}
	for len(l) > 0 {
		x := l[0]
		l = l[1:]
		if x == j || !x.open() || x.fam != famPVR || x.seen&seenRun != 0 {
			continue
		}
		ids := x.ids
		a.discard(x)
		for _, id := range ids {
			a.addID(j, id)
		}
		if j.out.Driver == "" {
			j.out.Driver = familyDriver[famPVR]
		}
		break
	}
	if len(l) == 0 {
		delete(a.pvrCreated, tid)
	} else {
		a.pvrCreated[tid] = l
	}
}

// ivpuEngine is the name of an ivpu engine index (DRM_IVPU_ENGINE_COMPUTE, _COPY).
func ivpuEngine(s string) string {
	switch s {
	case "0":
		return "compute"
	case "1":
		return "copy"
	}
	return s
}

// ivpuRing names an ivpu job's ring: its engine; the ring_serial inference runs per
// context and engine (one command queue runs its jobs in order; contexts run side by
// side on the NPU).
func (a *Assembler) ivpuRing(j *job, e *event.Event) {
	if j.ring != nil {
		return
	}
	j.entity = e.Entity
	j.out.Ring = ivpuEngine(e.Ring)
	j.ring = a.ringFor(e.Device, "ctx"+strconv.FormatUint(e.Entity, 10)+"/"+j.out.Ring, e.Time)
}

func (a *Assembler) ivpuEvent(e *event.Event, r *role) {
	hook := a.qualify(hookOf(e), e.Text)
	created := idKey{ns: nsIVPUCreate, scope: e.Device, id: uint64(e.TID)}
	switch e.Text {
	case "create":
		if j := a.byID[created]; j != nil && j.open() {
			a.close(j, causeTimeout, Incomplete, reasonIVPUNotSubmit)
		}
		j := a.newJob(famIVPU, e.Time)
		a.addID(j, created)
		a.ivpuRing(j, e)
		j.set(PointQueued, e.Time, r.prio, Measured, hook)
		j.seen |= seenQueue
		a.describe(j, e, true)
		a.bracket(j, e)
		a.touch(j, e.Time)
	case "submit":
		if e.JobID == 0 {
			a.orphan(e)
			return
		}
		id := idKey{ns: nsIVPU, scope: e.Device, id: e.JobID}
		if old := a.byID[id]; old != nil && old.open() {
			a.close(old, causeTimeout, Incomplete, reasonIVPUReplaced)
		}
		j := a.byID[created]
		if j != nil && j.open() {
			a.removeID(j, created)
		} else {
			j = a.newJob(famIVPU, e.Time)
			a.ivpuRing(j, e)
			a.describe(j, e, true)
			a.bracket(j, e)
		}
		a.addID(j, id)
		j.out.JobID = e.JobID
		a.ivpuRing(j, e)
		j.set(PointRun, e.Time, r.prio, Measured, hook)
		j.set(PointEmitted, e.Time, r.prio, Measured, hook)
		j.seen |= seenRun
		a.touch(j, e.Time)
	case "done":
		id := idKey{ns: nsIVPU, scope: e.Device, id: e.JobID}
		j := a.byID[id]
		if j == nil || !j.open() {
			a.orphan(e)
			return
		}
		a.removeID(j, id) // job ids are reused (cyclic)
		j.set(PointFinished, e.Time, r.prio, Measured, hook)
		j.seen |= seenDone
		a.touch(j, e.Time)
		a.finish(j)
	default:
		a.st.Ignored++ // a step this table does not know
	}
}

func (a *Assembler) xdnaEvent(e *event.Event, r *role) {
	if e.Fence.IsZero() {
		a.orphan(e)
		return
	}
	hook := a.qualify(hookOf(e), e.Text)
	j := a.byKey.get(key32(e.Fence))
	if j != nil && !j.open() {
		j = nil
	}
	switch e.Text {
	case "sent to device":
		if j == nil {
			if run := a.running(e.TID); run != nil && run.fam == famSched {
				j = run
				a.setKey(j, e.Fence, e.FenceWide)
			}
		}
		if j == nil {
			j = a.newJob(famXDNA, e.Time)
			a.setKey(j, e.Fence, e.FenceWide)
			j.out.Driver = familyDriver[famXDNA]
			a.describe(j, e, false)
			j.set(PointRun, e.Time, r.prio, Measured, hook)
			// Nothing of amdxdna's is traced at the queueing: the job is complete from
			// its run (as v3d's standalone jobs).
			j.seen |= seenQueue | seenRun
		}
		if j.out.Driver == "" {
			j.out.Driver = familyDriver[famXDNA]
		}
		if j.fam == famSched && j.seen&seenRun == 0 {
			// The scheduler's queue event was traced, its run not: run_job ran then.
			j.set(PointRun, e.Time, 0, Inferred, ruleXDNARunUntraced)
			j.seen |= seenRun
		}
		j.set(PointEmitted, e.Time, prioTeDriver, Measured, hook)
		a.touch(j, e.Time)
	case "signaled fence", "signaling fence":
		if j == nil {
			a.orphan(e)
			return
		}
		j.set(PointHWDone, e.Time, prioDriverIRQ, Measured, hook)
		a.touch(j, e.Time)
		if j.fam == famXDNA && !j.out.Points[PointFinished].Known() {
			j.set(PointFinished, e.Time, 1, Inferred, ruleXDNAFinished)
			j.seen |= seenDone
			a.finish(j)
		}
	default:
		a.st.Ignored++ // job free, job timedout: no point of the job
	}
}
