// A job's life in the assembler: creation, identities and their indexes, setting points
// by precedence, finishing, and output.
//
//	pending ──finished fence──▶ held ──ReorderWindow──▶ output (gone)
//	   │                                                  ▲
//	   └──timeout / cap / pointer reused / Flush──▶ closed ┘
//
// A job is indexed by every identity it has (finished fence key, finished fence pointer,
// (ring, id), driver ids, hardware fence) while pending or held, so late events still
// reach it; a closed job is unindexed and frozen. The one exception is the fence pointer
// of ≤6.16 scheduler events: the kernel reuses it as soon as the job is freed, so its
// index entry ends at the job's done.

package assemble

import (
	"slices"

	"github.com/ghostdriver/ghostdriver/internal/event"
)

type jobState uint8

const (
	statePending jobState = iota
	stateHeld             // finished; still takes late events
	stateClosed           // evicted, abandoned or flushed: frozen, waiting for output
	stateGone             // output or merged away
)

type job struct {
	out Job

	// Word-sized fields first, then the small ones together: a pending job is mostly
	// this struct (BENCHMARKS.md, memory per pending job).
	key    uint64 // packed finished fence
	ptr    uint64 // finished fence pointer (≤6.16 scheduler text)
	hw     uint64 // packed hardware fence
	stream uint64 // submission stream (fence context or entity) for Incomplete reasons
	entity uint64 // scheduler entity pointer, when the events print it (≤6.16)

	ring     *ring
	prevDone int64 // the previous job's hardware done on the ring, snapshot at finish

	last      int64 // time of the latest event that touched the job
	releaseAt int64
	prev      *job
	next      *job

	ids     []idKey // at most maxIDsPerJob; nil for the jobs keyed by their fence (most)
	waiting int32   // dependencies not yet signalled (≤ maxDepsPerJob)

	fam         family
	state       jobState
	seen        uint8
	cause       evictCause
	hasKey      bool
	hasHW       bool
	hasPrevDone bool
	exitWait    bool // in Assembler.exitWait (finished, its submit ioctl not returned yet)
	prio        [NumPoints]uint8
}

// open reports whether events may still change the job.
func (j *job) open() bool { return j.state == statePending || j.state == stateHeld }

// set records point p unless a hook of higher precedence already did; between equal
// precedence the earliest time wins, or the latest for the points in latestWins.
func (j *job) set(p Point, t int64, prio uint8, src Provenance, hook string) bool {
	cur := &j.out.Points[p]
	if cur.Known() {
		if prio < j.prio[p] {
			return false
		}
		if prio == j.prio[p] && (latestWins[p] && t <= cur.Time || !latestWins[p] && t >= cur.Time) {
			return false
		}
	}
	*cur = Bound{Time: t, Src: src, Hook: hook}
	j.prio[p] = prio
	return true
}

// jobList is an intrusive doubly linked list (a job is in at most one).
type jobList struct {
	head, tail *job
	n          int
}

func (l *jobList) pushBack(j *job) {
	j.prev, j.next = l.tail, nil
	if l.tail != nil {
		l.tail.next = j
	} else {
		l.head = j
	}
	l.tail = j
	l.n++
}

func (l *jobList) remove(j *job) {
	if j.prev != nil {
		j.prev.next = j.next
	} else {
		l.head = j.next
	}
	if j.next != nil {
		j.next.prev = j.prev
	} else {
		l.tail = j.prev
	}
	j.prev, j.next = nil, nil
	l.n--
}

// newJob opens a pending job, evicting the least recently progressed one at the cap.
func (a *Assembler) newJob(fam family, t int64) *job {
	if a.pending.n >= a.cfg.MaxPendingJobs {
		a.evict(a.pending.head, causeCap)
	}
	if len(a.jobSlab) == 0 {
		a.jobSlab = make([]job, jobSlabJobs)
	}
	j := &a.jobSlab[0]
	a.jobSlab = a.jobSlab[1:]
	j.fam, j.last = fam, t
	a.pending.pushBack(j)
	return j
}

// jobSlabJobs is how many jobs one allocation holds. Jobs are carved from a slab, in
// creation order, and never reused: a slab is one allocation (and one object for the
// garbage collector) instead of jobSlabJobs, the jobs of one slab sit next to each other
// in creation order, which is close to the order they are output in, and a slab lives as
// long as any of its jobs (or a Job output from it) is referenced. 32 jobs are ≈ 26 KB.
const jobSlabJobs = 32

// touch records progress: the job moves to the back of the timeout order.
func (a *Assembler) touch(j *job, t int64) {
	if t > j.last {
		j.last = t
	}
	if j.state == statePending && a.pending.tail != j {
		a.pending.remove(j)
		a.pending.pushBack(j)
	}
}

// setKey gives j its finished fence key (first one wins; a 64-bit form replaces a
// 32-bit one of the same fence).
func (a *Assembler) setKey(j *job, k event.FenceKey, wide bool) {
	p := key32(k)
	if !j.hasKey {
		if o := a.byKey.get(p); o != nil && o != j && o.open() {
			return // another live job owns it: keep both intact
		}
		j.key, j.hasKey = p, true
		a.byKey.put(p, j)
		j.out.Finished, j.out.FinishedWide = k, wide
		return
	}
	if p == j.key && wide && !j.out.FinishedWide {
		j.out.Finished, j.out.FinishedWide = k, true
	}
}

func (a *Assembler) setPtr(j *job, ptr uint64) {
	if j.ptr == 0 && j.state == statePending {
		j.ptr = ptr
		a.byPtr.put(ptr, j)
	}
}

func (a *Assembler) addID(j *job, id idKey) {
	if slices.Contains(j.ids, id) {
		return
	}
	if len(j.ids) < maxIDsPerJob {
		if j.ids == nil {
			j.ids = make([]idKey, 0, maxIDsPerJob)
		}
		j.ids = append(j.ids, id)
	}
	a.byID[id] = j
}

// linkHW records the job's hardware fence.
func (a *Assembler) linkHW(j *job, k event.FenceKey, driver string) {
	p := key32(k)
	if j.hasHW && j.hw != p {
		a.byHW.delIf(j.hw, j)
	}
	j.hw, j.hasHW = p, true
	j.out.HWFence = k
	a.byHW.put(p, j)
	if driver != "" && !schedFenceDrivers[driver] {
		j.out.Driver = driver
	}
}

// describe copies what an event says about the job as a whole.
func (a *Assembler) describe(j *job, e *event.Event, submitter bool) {
	if e.Device != "" && j.out.Device == "" {
		j.out.Device = e.Device
	}
	if j.ring == nil {
		name := e.Ring
		if name == "" {
			name = e.Timeline // scheduler events only: the scheduler's timeline is its ring
		}
		if name != "" {
			j.ring = a.ringFor(j.out.Device, name, e.Time)
			j.out.Ring = name
		}
	}
	if j.out.Driver == "" && e.Driver != "" && !schedFenceDrivers[e.Driver] {
		j.out.Driver = e.Driver
	}
	if e.ClientID != 0 {
		j.out.ClientID = e.ClientID
	}
	if e.JobID != 0 && j.out.JobID == 0 {
		j.out.JobID = e.JobID
	}
	if submitter && e.TID != 0 {
		j.out.TID = e.TID
		if e.PID != 0 {
			j.out.PID = e.PID
		}
		if e.Comm != "" {
			j.out.Comm = e.Comm
		}
	}
	if e.CtxTier != 0 {
		j.out.TraceID, j.out.SpanID, j.out.CtxTier, j.out.TraceFlags = e.TraceID, e.SpanID, e.CtxTier, e.TraceFlags
	}
}

// finish moves a job whose finished fence signalled to the held list.
func (a *Assembler) finish(j *job) {
	if j.state != statePending {
		return
	}
	a.pending.remove(j)
	j.state = stateHeld
	if j.ptr != 0 {
		a.byPtr.delIf(j.ptr, j) // the kernel may reuse the pointer from now on
	}
	a.ringDone(j)
	j.releaseAt = j.out.Points[PointFinished].Time + a.window
	a.held.pushBack(j)
}

// close freezes a pending job that will not finish and queues it for output now.
func (a *Assembler) close(j *job, cause evictCause, outcome Outcome, reason string) {
	if j.state != statePending {
		return
	}
	a.pending.remove(j)
	a.drop(j)
	j.state = stateClosed
	j.cause = cause
	j.out.Outcome = outcome
	j.out.Reason = reason
	j.releaseAt = a.now
	a.held.pushBack(j)
}

// drop removes every index entry of j.
func (a *Assembler) drop(j *job) {
	if j.hasKey {
		a.byKey.delIf(j.key, j)
	}
	if j.ptr != 0 {
		a.byPtr.delIf(j.ptr, j)
	}
	for _, id := range j.ids {
		if a.byID[id] == j {
			delete(a.byID, id)
		}
	}
	if j.hasHW {
		a.byHW.delIf(j.hw, j)
	}
	for i := range j.out.Deps {
		d := &j.out.Deps[i]
		if d.Signaled == 0 || d.signalProxy {
			a.unwait(key32(d.Fence), j)
		}
		if d.schedWait {
			a.unwait(scheduledOf(key32(d.Fence)), j)
			d.schedWait = false
		}
	}
	j.waiting = 0
}

// emit tiles a job and hands it to out.
func (a *Assembler) emit(j *job) {
	a.drop(j)
	a.tile(j)
	switch j.state {
	case stateHeld:
		if j.seen&(seenQueue|seenRun|seenDone) == seenQueue|seenRun|seenDone {
			j.out.Outcome = Completed
		} else {
			j.out.Outcome = Incomplete
			j.out.Reason = a.incompleteReason(j, false, 0)
		}
	}
	switch j.out.Outcome {
	case Completed:
		a.st.Completed++
	case Incomplete:
		a.st.Incomplete++
	case Evicted:
		if j.cause == causeCap {
			a.st.EvictedCap++
		} else {
			a.st.EvictedTimeout++
		}
	}
	if j.hasKey {
		rec := ownerRec{fin: j.out.Finished}
		if p := &j.out.Points; p[PointEmitted].Src == Measured {
			rec.run = p[PointEmitted].Time
		} else if p[PointRun].Known() {
			rec.run = p[PointRun].Time
		}
		a.owners.put(j.key, rec)
		if j.fam == famSched {
			a.owners.put(scheduledOf(j.key), rec)
		}
		if j.hasHW {
			a.owners.put(j.hw, rec)
		}
	}
	a.countRing(j)
	j.state = stateGone
	j.prev, j.next, j.ring = nil, nil, nil
	a.loss.mark(&j.out)
	a.out(&j.out)
}

// discard removes a job without output (an xe job merged into its scheduler job).
func (a *Assembler) discard(j *job) {
	if j.state == statePending {
		a.pending.remove(j)
	}
	a.drop(j)
	j.state = stateGone
}
