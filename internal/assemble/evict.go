// Bounding the pending table and saying why a job did not complete.
//
// Timeouts and the cap work on one list, pending jobs ordered by their latest event
// (source clock): the head is both the first to time out and the first to go at the cap.
// Held jobs leave after ReorderWindow. Per-thread and per-ring state is swept once a
// second of source time; the lookaside tables are fixed-size FIFOs (keys.go).

package assemble

import (
	"fmt"
	"strings"
)

type evictCause uint8

const (
	causeNone evictCause = iota
	causeTimeout
	causeCap
)

// Reasons, as the job span's status message shows them.
const (
	reasonNoQueue       = "no queue event: job began before the capture"
	reasonNoQueueStream = "no queue event: none seen on its submission stream (a kernel-internal job, or queued before the capture)"
	reasonNoRun         = "no run event: not recorded (the worker's CPU was not recording, or the event was lost)"
	reasonNotFinished   = "not finished when the input ended"
	reasonNotRun        = "not run when the input ended"
	reasonEdge          = " (at the start of the input, before every CPU had recorded an event: its events on other CPUs may be missing)"
	reasonPtrReused     = "no finished event: its fence pointer was reused by a later job"
)

// expire releases held jobs whose window has passed, evicts timed-out pending jobs and
// sweeps idle per-thread and per-ring state, all as of a.now.
func (a *Assembler) expire() {
	for j := a.pending.head; j != nil && j.last+a.timeout <= a.now; j = a.pending.head {
		a.evict(j, causeTimeout)
	}
	for j := a.held.head; j != nil && j.releaseAt <= a.now; j = a.held.head {
		a.held.remove(j)
		if a.submitIoctlOpen(j) {
			// A fast job whose submitting thread has not returned from the ioctl that
			// queued it (preempted, or a long ioctl): its ioctl stage ends at that exit.
			j.releaseAt = j.out.Points[PointFinished].Time + a.timeout
			j.exitWait = true
			a.exitWait.pushBack(j)
			continue
		}
		a.emit(j)
	}
	for j := a.exitWait.head; j != nil && j.releaseAt <= a.now; j = a.exitWait.head {
		a.exitWait.remove(j)
		j.exitWait = false
		a.st.IoctlExitsNotSeen++
		a.emit(j)
	}
	if a.now-a.lastSweep >= sweepEvery {
		a.sweep()
		a.lastSweep = a.now
	}
}

const sweepEvery = int64(1e9)

// evict closes a pending job that will not finish.
func (a *Assembler) evict(j *job, cause evictCause) {
	var reason string
	switch cause {
	case causeCap:
		reason = fmt.Sprintf("max_pending_jobs (%d) reached", a.cfg.MaxPendingJobs)
	default:
		if j.seen&seenRun == 0 {
			reason = "timeout: not run after " + a.cfg.JobTimeout.String()
		} else {
			reason = "timeout: no finished fence after " + a.cfg.JobTimeout.String()
		}
	}
	a.close(j, cause, Evicted, reason)
}

// abandon closes a job whose identity was taken over by a newer job.
func (a *Assembler) abandon(j *job, reason string) {
	a.close(j, causeNone, Incomplete, reason)
}

// sweep forgets threads and rings idle for longer than JobTimeout.
func (a *Assembler) sweep() {
	for tid, th := range a.threads {
		if th.last+a.timeout < a.now {
			delete(a.threads, tid)
			a.forgetThread(tid)
		}
	}
	for k, r := range a.rings {
		if r.last+a.timeout < a.now {
			delete(a.rings, k)
		}
	}
}

// incompleteReason says what part of the job's life the input did not contain. ended is
// true at Flush (the job never finished); edge is when the last CPU's stream started.
func (a *Assembler) incompleteReason(j *job, ended bool, edge int64) string {
	var parts []string
	if j.seen&seenQueue == 0 {
		if _, ok := a.streams.get(j.stream); ok || j.fam != famSched {
			parts = append(parts, reasonNoQueue)
		} else {
			parts = append(parts, reasonNoQueueStream)
		}
	}
	if j.seen&seenRun == 0 && j.seen&seenDone != 0 {
		parts = append(parts, reasonNoRun)
	}
	if ended && j.seen&seenDone == 0 {
		if j.seen&seenRun != 0 {
			parts = append(parts, reasonNotFinished)
		} else {
			parts = append(parts, reasonNotRun)
		}
	}
	r := strings.Join(parts, "; ")
	if ended && a.startOf(j) < edge {
		r += reasonEdge
	}
	return r
}

// startOf is the earliest known point of a job.
func (a *Assembler) startOf(j *job) int64 {
	first := j.last
	for _, b := range j.out.Points {
		if b.Known() && b.Time < first {
			first = b.Time
		}
	}
	return first
}
