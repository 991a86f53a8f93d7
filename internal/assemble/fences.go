// dma_fence events: hardware fence linking, finished/scheduled fence signals, and
// dependencies.
//
// A dma_fence_signaled (32-bit key k) can be, and is checked as, all of:
//   - the hardware fence of a job (linked at run time)              → th
//   - the finished fence of a scheduler job (driver drm_sched/amd_sched) → tf
//     (amdgpu ≤4.x has no done event: this is its only completion)
//   - the scheduled fence of a scheduler job (context one below its finished fence)
//     → te: the scheduler signals it right after run_job returns, so it bounds ring
//     emission when neither the hardware fence's creation nor run_job's fexit is traced
//   - an i915 request's own fence                                      → th
//   - a virtio_gpu job's own fence (emitted in its submit ioctl)       → tf
//   - a dependency of pending jobs                                     → their td
//
// and is remembered for a while (a dependency can be announced after its fence has
// signalled). One that is none of these is counted as an orphan: most fences are not
// job fences.

package assemble

import "github.com/ghostdriver/ghostdriver/internal/event"

const hookDepSignal = "dma_fence_signaled"

// signalRec is a remembered fence signal. proxy: reported by the owning job's done
// event, which precedes the fence's own dma_fence_signaled by a few µs; the fence's
// own signal replaces it.
type signalRec struct {
	time  int64
	hook  string
	proxy bool
}

// ownerRec is what the owners table remembers of an output job: its finished fence, and
// when it was handed to its ring (run_job's return when measured, else its run event;
// 0 when neither was seen), which bounds its scheduled fence's signal.
type ownerRec struct {
	fin event.FenceKey
	run int64
}

// fenceCreated handles dma_fence_init/dma_fence_emit. A scheduler fence created on a
// thread is remembered for the job that thread queues next; any other fence created on a
// worker inside a run window is that job's hardware fence (the last one wins: run_job may
// emit a VM-flush fence before the job's own).
func (a *Assembler) fenceCreated(e *event.Event, prio uint8) {
	if schedFenceDrivers[e.Driver] {
		if e.Kind == event.FenceInit {
			th := a.thread(e.TID, e.Time)
			// drm_sched_fence_init initialises the scheduled fence (context c), then the
			// finished one (c+1, same seqno), on the submitting thread.
			pair := th != nil && th.hasInit && th.schedInit.Seqno == e.Fence.Seqno &&
				th.schedInit.Context+1 == e.Fence.Context
			a.learnSchedFence(e, pair)
			if th != nil {
				th.schedInit, th.hasInit = e.Fence, true
			}
		}
		return
	}
	j := a.running(e.TID)
	if j == nil {
		if e.Kind == event.FenceEmit {
			// A fence emitted by a submitting thread inside its ioctl: a driver without a
			// scheduler numbering its job's fence (virtio_gpu: the command that follows
			// names it by seqno; virtio.go).
			if th := a.threadOf(e.TID); th != nil && th.inIoctl {
				th.virtio = virtioEmit{fence: e.Fence, time: e.Time, hook: hookOf(e), wide: e.FenceWide, ok: true}
			}
		}
		return // not created by a run_job we saw: not a job's hardware fence
	}
	a.linkHW(j, e.Fence, e.Driver)
	j.set(PointEmitted, e.Time, prio, Measured, hookOf(e))
	a.touch(j, e.Time)
}

func (a *Assembler) fenceSignaled(e *event.Event) {
	k := key32(e.Fence)
	hook := hookOf(e)
	matched := false
	if j := a.byHW.get(k); j != nil && j.open() {
		j.set(PointHWDone, e.Time, prioHWSignal, Measured, hook)
		a.touch(j, e.Time)
		matched = true
	}
	sched := isSchedFence(e.Driver)
	if j := a.byKey.get(k); j != nil && j.open() {
		switch {
		case j.fam == famSched && sched:
			j.seen |= seenDone
			j.set(PointFinished, e.Time, prioSchedFenceSignal, Measured, hook)
			a.touch(j, e.Time)
			a.finish(j)
			matched = true
		case j.fam == famI915:
			j.set(PointHWDone, e.Time, prioOwnFenceSignal, Measured, hook)
			a.touch(j, e.Time)
			matched = true
		case j.fam == famVirtio:
			// virtio_gpu: the job's own fence (virtio.go).
			j.seen |= seenDone
			j.set(PointFinished, e.Time, prioSchedFenceSignal, Measured, hook)
			a.touch(j, e.Time)
			a.finish(j)
			matched = true
		}
	}
	if sched {
		if j := a.byKey.get(finishedOfScheduled(k)); j != nil && j.open() && j.fam == famSched {
			j.set(PointEmitted, e.Time, prioTeScheduled, Measured, a.qualify(hook, "scheduled"))
			if th := a.threadOf(e.TID); th != nil && th.run == j {
				th.runOpen = false
			}
			a.touch(j, e.Time)
			matched = true
		}
	}
	if a.signal(k, e.Time, hook, false) {
		matched = true
	}
	if !matched {
		a.orphan(e)
	}
}

// signal records that fence k signalled at t and resolves the dependencies waiting on
// it: as a dependency itself (Signaled) and as the scheduled fence of a dependency's
// owner (Scheduled). It reports whether any job was waiting. A proxy report (the owning
// job's done event) sets Signaled but keeps the jobs waiting for the fence's own signal.
func (a *Assembler) signal(k uint64, t int64, hook string, proxy bool) bool {
	// A fence signals once: the first real report stays (one probe of the table).
	if i := a.signals.find(k); i < 0 {
		a.signals.add(k, signalRec{t, hook, proxy})
	} else if r := a.signals.at(i); r.proxy && !proxy {
		*r = signalRec{t, hook, proxy}
	}
	ws, ok := a.waiters[k]
	if !ok {
		return false
	}
	if !proxy {
		delete(a.waiters, k)
	}
	for _, j := range ws {
		if !j.open() {
			continue
		}
		for i := range j.out.Deps {
			d := &j.out.Deps[i]
			dk := key32(d.Fence)
			if dk == k && (d.Signaled == 0 || d.signalProxy && !proxy) {
				if d.Signaled == 0 {
					j.waiting--
				}
				d.Signaled, d.signalProxy = t, proxy
			}
			if !proxy && d.schedWait && scheduledOf(dk) == k {
				d.Scheduled, d.schedWait = t, false
			}
		}
		a.touch(j, t)
	}
	return true
}

// addDep records that j depends on fence dep. signaled is the time a wait on it ended
// (0 when unknown): the fence's own signal, when seen, is preferred. For a scheduler job
// the signal of the dependency owner's scheduled fence (context − 1) is followed too:
// it ends the wait when the owner runs on the same scheduler (deps.go).
func (a *Assembler) addDep(j *job, dep event.FenceKey, signaled int64) {
	k := key32(dep)
	if j.hasKey && k == j.key {
		return
	}
	for i := range j.out.Deps {
		if key32(j.out.Deps[i].Fence) == k {
			return
		}
	}
	if len(j.out.Deps) >= maxDepsPerJob {
		return
	}
	d := Dependency{Fence: dep}
	d.Job, d.JobKnown = a.owner(k, j)
	r, ok := a.signals.get(k)
	switch {
	case ok:
		d.Signaled, d.signalProxy = r.time, r.proxy
	case signaled != 0:
		d.Signaled = signaled
	}
	if d.Signaled == 0 || d.signalProxy {
		a.waiters[k] = append(a.waiters[k], j)
		if d.Signaled == 0 {
			j.waiting++
		}
	}
	if j.fam == famSched {
		sk := scheduledOf(k)
		if r, ok := a.signals.get(sk); ok && !r.proxy {
			d.Scheduled = r.time
		} else {
			d.schedWait = true
			a.waiters[sk] = append(a.waiters[sk], j)
		}
	}
	j.out.Deps = append(j.out.Deps, d)
}

// markUnschedulable records that the scheduler waited for dep to signal
// (drm_sched_job_unschedulable).
func (a *Assembler) markUnschedulable(j *job, dep event.FenceKey) {
	k := key32(dep)
	for i := range j.out.Deps {
		if key32(j.out.Deps[i].Fence) == k {
			j.out.Deps[i].Unschedulable = true
		}
	}
}

// unwait removes j from the jobs waiting on k.
func (a *Assembler) unwait(k uint64, j *job) {
	ws := a.waiters[k]
	for i, w := range ws {
		if w == j {
			ws = append(ws[:i], ws[i+1:]...)
			break
		}
	}
	if len(ws) == 0 {
		delete(a.waiters, k)
	} else {
		a.waiters[k] = ws
	}
}

// owner finds the job a fence belongs to (its finished, scheduled or hardware fence),
// for span links: pending and held jobs first, then recently output ones.
func (a *Assembler) owner(k uint64, self *job) (event.FenceKey, bool) {
	for _, o := range [...]*job{a.byKey.get(k), a.byHW.get(k)} {
		if o != nil && o != self && o.hasKey {
			return o.out.Finished, true
		}
	}
	if o := a.byKey.get(finishedOfScheduled(k)); o != nil && o != self && o.fam == famSched {
		return o.out.Finished, true
	}
	r, ok := a.owners.get(k)
	return r.fin, ok
}
