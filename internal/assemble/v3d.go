// v3d (Broadcom VideoCore VI/VII) and vc4 (VideoCore IV): their own events, alone or
// beside drm_sched's.
//
// v3d runs every queue (bin, render, TFU, CSD, cache clean) on drm_sched with one job on
// the hardware at a time. run_job creates the queue's hardware fence (seqno =
// ++emit_seqno of that queue), traces v3d_submit_cl / _tfu / _csd with the seqno, then
// writes the register that starts the job: ts. The queue's interrupt handler traces
// v3d_bcl_irq / _rcl_irq / _tfu_irq / _csd_irq with the same seqno, then signals the
// fence: th (and, synchronously through the fence's callbacks, drm_sched's finished
// fence). The cache-clean job is done by the CPU inside run_job, between
// v3d_cache_clean_begin and _end. A job is (device, queue, seqno).
//
// With drm_sched's events the submit event is inside the worker's run window
// (threads.go): it names the scheduler's job, which then carries the v3d identity, and
// the IRQ event reaches it by that identity; the submit is also that job's te unless the
// hardware fence's creation (earlier, in the same run_job) was traced. Without them the submit event opens a v3d
// job: v3d traces nothing with the job's identity before its run (the _ioctl events
// come before the seqno exists), so such a job is complete from its run to its IRQ,
// and its tf is th (rule v3d_irq_as_finished).
//
// vc4 (no drm_sched in the trees read) has the same shape per half of an exec: its
// submit code traces vc4_submit_cl (BCL or RCL, the exec's seqno) just before the
// register writes that start the half, and its IRQ handler vc4_bcl_end_irq /
// vc4_rcl_end_irq (the exec's fence is signalled right after the render one). Each half
// is a job (queue vc4_bin / vc4_render), as it is under the drm_sched port.

package assemble

import "github.com/ghostdriver/ghostdriver/internal/event"

const (
	ruleV3DFinished = "v3d_irq_as_finished"
	ruleVC4Finished = "vc4_irq_as_finished"
	// ruleV3DRunUntraced: drm_sched's queue event was traced but not its run event; the
	// submit event is inside run_job, so the run was at the latest then.
	ruleV3DRunUntraced = "v3d_submit_in_run_job(run event not traced)"
)

// v3d queues, as the kernel's scheduler names them (v3d_sched.c drm_sched_init names).
const (
	v3dNoQueue uint8 = iota
	v3dBin
	v3dRender
	v3dTFU
	v3dCSD
	v3dCacheClean
	vc4Bin
	vc4Render
)

var v3dQueueName = [...]string{"", "v3d_bin", "v3d_render", "v3d_tfu", "v3d_csd", "v3d_cache_clean", "vc4_bin", "vc4_render"}

// v3dQueue is the queue an event is about: its kind, or v3d_submit_cl's BCL/RCL (the
// text's ternary; a raw entry's is_render 0/1).
func v3dQueue(e *event.Event) uint8 {
	switch e.Kind {
	case event.V3DSubmitCL:
		switch e.Ring {
		case "BCL", "0":
			return v3dBin
		case "RCL", "1":
			return v3dRender
		}
	case event.V3DBinIRQ:
		return v3dBin
	case event.V3DRenderIRQ:
		return v3dRender
	case event.V3DSubmitTFU, event.V3DTFUIRQ:
		return v3dTFU
	case event.V3DSubmitCSD, event.V3DCSDIRQ:
		return v3dCSD
	case event.V3DCacheCleanBegin, event.V3DCacheCleanEnd:
		return v3dCacheClean
	case event.VC4SubmitCL:
		switch e.Ring {
		case "BCL", "0":
			return vc4Bin
		case "RCL", "1":
			return vc4Render
		}
	case event.VC4BinEndIRQ:
		return vc4Bin
	case event.VC4RenderEndIRQ:
		return vc4Render
	}
	return v3dNoQueue
}

// v3dID is a v3d job's identity: the queue in the top byte, the hardware fence seqno
// below (the cache-clean job has none: one runs at a time, synchronously).
func v3dID(e *event.Event, q uint8) idKey {
	seq := e.Fence.Seqno & (1<<56 - 1)
	if q == v3dCacheClean {
		seq = 0
	}
	return idKey{ns: nsV3D, scope: e.Device, id: uint64(q)<<56 | seq}
}

func (a *Assembler) v3dEvent(e *event.Event, r *role) {
	q := v3dQueue(e)
	if q == v3dNoQueue {
		a.orphan(e)
		return
	}
	id := v3dID(e, q)
	j := a.byID[id]
	if j != nil && !j.open() {
		j = nil
	}
	if r.creates {
		run := a.running(e.TID)
		if run == nil || run.fam != famSched {
			if q := a.v3dQueuedUnrun(q); q != nil && (j == nil || j.fam == r.family) {
				// drm_sched's queue event traced, its run not: run_job is running the
				// oldest job the queue's scheduler has not run (one at a time, in order).
				q.set(PointRun, e.Time, 0, Inferred, ruleV3DRunUntraced)
				q.seen |= seenRun
				run = q
			}
		}
		if run != nil && run.fam == famSched {
			// Inside drm_sched's run_job: the scheduler's job. A standalone job under the
			// same identity is a seqno met again (the input restarted): forget it.
			if j != nil && j != run && j.fam == r.family {
				a.close(j, causeTimeout, Incomplete, reasonV3DReplaced)
			}
			j = run
			a.addID(j, id)
			if j.out.Driver == "" {
				j.out.Driver = familyDriver[r.family]
			}
		} else if j == nil || j.fam == r.family && j.seen&seenRun != 0 {
			if j != nil {
				a.close(j, causeTimeout, Incomplete, reasonV3DReplaced)
			}
			j = a.newJob(r.family, e.Time)
			a.addID(j, id)
			j.out.Driver = familyDriver[r.family]
			if e.Device != "" {
				j.out.Device = e.Device
			}
			j.out.Ring = v3dQueueName[q]
			j.ring = a.ringFor(j.out.Device, j.out.Ring, e.Time)
		}
	}
	if j == nil {
		a.orphan(e)
		return
	}
	hook := hookOf(e)
	for _, p := range r.points {
		if p != noPoint {
			j.set(p, e.Time, r.prio, Measured, hook)
		}
	}
	a.touch(j, e.Time)
	if j.fam != r.family {
		if r.creates {
			// Inside run_job, after the hardware fence's creation: the emission is done
			// when the job starts (te no later than ts). The fence's init or emit, when
			// traced, is earlier and wins; the scheduled fence's signal, after run_job
			// returns, is later and loses.
			j.set(PointEmitted, e.Time, prioTeDriver, Measured, hook)
		}
		return // drm_sched's events queue, run and finish it
	}
	if r.creates {
		j.seen |= seenQueue | seenRun
		return
	}
	if r.seen&seenDone != 0 && !j.out.Points[PointFinished].Known() {
		// The handler signals the hardware fence right after the event, and drm_sched's
		// finished fence in that signal's callback: nothing later is v3d's.
		rule := ruleV3DFinished
		if j.fam == famVC4 {
			rule = ruleVC4Finished
		}
		j.set(PointFinished, e.Time, 1, Inferred, rule)
		j.seen |= seenDone
		a.finish(j)
	}
}

// reasonV3DReplaced closes a standalone v3d job whose identity came again before it
// completed (its end event was lost, or the input restarted).
const reasonV3DReplaced = "the same queue and seqno ran again before this job's interrupt"

// v3dQueuedUnrun is the scheduler's job on queue q (the scheduler's ring name) that was
// queued earliest and has neither run nor a v3d identity yet, or nil; among such jobs
// one whose traced dependencies have all signalled comes first (the scheduler runs no
// job before its dependencies). Only a capture without drm_sched's run event has such
// a job when a v3d submit event comes (with it, the submit is inside the run window).
func (a *Assembler) v3dQueuedUnrun(q uint8) *job {
	name := v3dQueueName[q]
	var best, ready *job
	for j := a.pending.head; j != nil; j = j.next {
		if j.fam != famSched || j.seen&(seenQueue|seenRun) != seenQueue || j.out.Ring != name || hasNS(j, nsV3D) {
			continue
		}
		tq := j.out.Points[PointQueued].Time
		if best == nil || tq < best.out.Points[PointQueued].Time {
			best = j
		}
		if j.waiting == 0 && (ready == nil || tq < ready.out.Points[PointQueued].Time) {
			ready = j
		}
	}
	if ready != nil {
		return ready
	}
	return best
}
