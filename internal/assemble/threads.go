// Per-thread state: the submitting thread's ioctl bracket and the scheduler worker's
// current run.
//
// Submitting side: IoctlEnter … IoctlExit on one TID bracket the jobs queued on that TID
// in between: they get t0 and tx, and t1 from the last BOValidEnd on the TID inside the
// ioctl before the job was queued. Fences the thread waited on (dma_fence_wait_end) or
// declared as dependencies (the RFC dma_fence_used_as_dependency) inside the ioctl before
// the queue event become the job's dependencies; a wait there ended before tq, so it
// shows in the ioctl span, not in fence_dependency (td ≥ tq). An ioctl that queues no
// job is counted (Stats.IoctlsWithoutJob), not reported. A job that finishes before the
// ioctl that queued it returns waits past the reorder window for that exit (at most
// JobTimeout after its finish, then it is output without and counted in
// Stats.IoctlExitsNotSeen): its ioctl stage ends where the submitting thread came back.
//
// Worker side: the JobRun on a TID opens that job's run window, which closes at the next
// JobRun, at RunJobEnd (fexit of run_job), or when the job's scheduled fence signals
// (the scheduler does that right after run_job returns). A hardware fence created or
// emitted on the TID inside the window is the job's (fences.go); driver events inside it
// enrich the job (native.go).
//
// State of threads idle for JobTimeout is swept (evict.go).

package assemble

import (
	"slices"

	"github.com/ghostdriver/ghostdriver/internal/event"
)

type thread struct {
	last int64

	// submitting side
	inIoctl   bool
	enter     int64
	enterHook string
	pid       uint32
	comm      string
	driver    string // DRM driver of the file the ioctl was made on, when the hook reads it
	clientID  uint64 // DRM client id of that file (drm_file.client_id), when the hook reads it
	traceID   [16]byte
	spanID    [8]byte
	ctxTier   uint8
	// traceFlags: the context's W3C trace flags, when ctxTier != 0.
	traceFlags uint8

	bo        int64
	boHook    string
	hasBO     bool
	queued    []*job
	deps      []pendingDep
	schedInit event.FenceKey // last scheduler fence created on this thread (the finished one comes last)
	hasInit   bool
	xe        *job       // standalone xe job created in this ioctl, merged into the next queued job
	virtio    virtioEmit // the last fence emitted in this ioctl (virtio.go)

	// worker side
	run     *job
	runOpen bool
}

type pendingDep struct {
	fence    event.FenceKey
	signaled int64 // wait end, 0 when only declared
}

// threadCacheSlots is the size of Assembler.recentThreads (a power of two).
const threadCacheSlots = 64

// threadCacheEntry is a slot of Assembler.recentThreads: tid's state (th nil: empty).
type threadCacheEntry struct {
	tid uint32
	th  *thread
}

func threadSlot(tid uint32) uint32 { return (tid * 0x9e3779b1) >> (32 - 6) }

// threadOf returns the state of tid, or nil: a.threads[tid] through the cache. Every
// lookup of a.threads goes through it, and every deletion through forgetThread.
func (a *Assembler) threadOf(tid uint32) *thread {
	c := &a.recentThreads[threadSlot(tid)]
	if c.th != nil && c.tid == tid {
		return c.th
	}
	th := a.threads[tid]
	if th != nil {
		*c = threadCacheEntry{tid, th}
	}
	return th
}

// forgetThread drops tid from the cache (it was deleted from a.threads).
func (a *Assembler) forgetThread(tid uint32) {
	if c := &a.recentThreads[threadSlot(tid)]; c.tid == tid {
		*c = threadCacheEntry{}
	}
}

// thread returns the state of tid, creating it. TID 0 (idle, interrupts) has none.
func (a *Assembler) thread(tid uint32, t int64) *thread {
	if tid == 0 {
		return nil
	}
	th := a.threadOf(tid)
	if th == nil {
		th = &thread{}
		a.threads[tid] = th
	}
	if t > th.last {
		th.last = t
	}
	return th
}

// running returns the job whose run window is open on tid.
func (a *Assembler) running(tid uint32) *job {
	th := a.threadOf(tid)
	if th == nil || !th.runOpen || th.run == nil || !th.run.open() {
		return nil
	}
	return th.run
}

func (a *Assembler) ioctlEnter(e *event.Event) {
	th := a.thread(e.TID, e.Time)
	if th == nil {
		return
	}
	if th.inIoctl && len(th.queued) == 0 {
		a.st.IoctlsWithoutJob++ // the previous one never saw its exit
	}
	a.endIoctl(th)
	th.inIoctl = true
	th.enter = e.Time
	th.enterHook = hookOf(e)
	th.pid, th.comm, th.driver, th.clientID = e.PID, e.Comm, e.Driver, e.ClientID
	th.traceID, th.spanID, th.ctxTier, th.traceFlags = e.TraceID, e.SpanID, e.CtxTier, e.TraceFlags
}

func (a *Assembler) ioctlExit(e *event.Event) {
	th := a.threadOf(e.TID)
	if th == nil || !th.inIoctl {
		return
	}
	th.last = max(th.last, e.Time)
	hook := hookOf(e)
	var done [maxQueuedPerIO]*job
	n := 0
	for _, j := range th.queued {
		if j.open() {
			j.set(PointIoctlExit, e.Time, prioIoctl, Measured, hook)
			a.touch(j, e.Time)
			if j.exitWait {
				done[n] = j
				n++
			}
		}
	}
	if len(th.queued) == 0 {
		a.st.IoctlsWithoutJob++
	}
	for _, j := range th.queued {
		if j.open() && virtioUnjoinable(j) {
			a.close(j, causeNone, Incomplete, reasonVirtioUnjoinable)
		}
	}
	a.endIoctl(th)
	// Jobs that finished long before this exit were waiting for it: out now.
	for _, j := range done[:n] {
		a.exitWait.remove(j)
		j.exitWait = false
		a.emit(j)
	}
}

// submitIoctlOpen reports whether finished job j's submit ioctl is still running: the
// thread that queued j is inside the ioctl it was queued in, whose exit has not come.
func (a *Assembler) submitIoctlOpen(j *job) bool {
	if j.state != stateHeld || !j.out.Points[PointIoctlEnter].Known() || j.out.Points[PointIoctlExit].Known() {
		return false
	}
	th := a.threadOf(j.out.TID)
	return th != nil && th.inIoctl && th.enter == j.out.Points[PointIoctlEnter].Time && slices.Contains(th.queued, j)
}

func (a *Assembler) endIoctl(th *thread) {
	th.inIoctl = false
	th.hasBO = false
	clear(th.queued)
	th.queued = th.queued[:0]
	th.deps = th.deps[:0]
	th.xe = nil
	th.virtio.ok = false
}

func (a *Assembler) boValidEnd(e *event.Event) {
	th := a.threadOf(e.TID)
	if th == nil || !th.inIoctl {
		return
	}
	th.bo, th.boHook, th.hasBO = e.Time, funcHook(e), true
}

// submitterDep records a fence the submitting thread waited on (signaled = wait end) or
// declared as a dependency (signaled = 0) inside an ioctl.
func (a *Assembler) submitterDep(e *event.Event, signaled int64) {
	th := a.threadOf(e.TID)
	if th == nil || !th.inIoctl || e.Fence.IsZero() {
		if e.Kind == event.FenceUsedAsDep {
			a.orphan(e) // declared for a submission we cannot bracket
		} else {
			a.st.Ignored++ // a wait outside a submission: not a job's dependency
		}
		return
	}
	if len(th.deps) < maxDepsPerJob {
		th.deps = append(th.deps, pendingDep{e.Fence, signaled})
	}
}

// bracket applies the submitting thread's state to a job queued by e on that thread.
func (a *Assembler) bracket(j *job, e *event.Event) {
	th := a.thread(e.TID, e.Time)
	if th == nil {
		return
	}
	if th.inIoctl && e.Time >= th.enter && e.Time-th.enter <= a.timeout {
		j.set(PointIoctlEnter, th.enter, prioIoctl, Measured, th.enterHook)
		if th.hasBO && th.bo >= th.enter && th.bo <= e.Time {
			j.set(PointBOValidEnd, th.bo, prioIoctl, Measured, th.boHook)
		}
		if j.out.PID == 0 {
			j.out.PID = th.pid
		}
		if j.out.Comm == "" {
			j.out.Comm = th.comm
		}
		if j.out.Driver == "" {
			j.out.Driver = th.driver // scheduler events do not name the driver; the DRM file does
		}
		if j.out.ClientID == 0 {
			j.out.ClientID = th.clientID // the DRM file's, where no job event names the client
		}
		if j.out.TID == 0 {
			j.out.TID = e.TID
		}
		if th.ctxTier != 0 && j.out.CtxTier == 0 {
			j.out.TraceID, j.out.SpanID, j.out.CtxTier, j.out.TraceFlags = th.traceID, th.spanID, th.ctxTier, th.traceFlags
		}
		if len(th.queued) < maxQueuedPerIO {
			th.queued = append(th.queued, j)
		}
		for _, d := range th.deps {
			a.addDep(j, d.fence, d.signaled)
		}
		th.deps = th.deps[:0]
	}
}
