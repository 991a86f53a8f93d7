// Ioctl pairs that no job joins: the reorder buffer's shortcut.
//
// Most followed ioctls queue no job (GEM create, wait, mmap, queries): an IoctlEnter
// followed by its thread's IoctlExit with no other event of that thread between them. Such
// a pair only counts one IoctlsWithoutJob (and closes an ioctl the thread was still in, if
// any); the fields the enter sets are read only while the thread is inside an ioctl
// (threads.go), and the exit clears that. So the pair need not travel through the reorder
// buffer as two full events: the enter waits in a small per-thread slot, and when the
// thread's next event is its exit, the pair becomes one 32-byte entry of a second sorted
// ring, released in (time, CPU) order with the buffer and applied by processPair. Anything
// else of that thread arriving first (a BO validation, a queue event, a fence wait, an
// enter without exit) sends the held enter into the reorder buffer as it was, before that
// event; so does the release bound reaching the enter's time (a long ioctl).
//
// It needs the source to hand over each thread's events in the thread's order
// (event.Event.InThreadOrder): the live source does, since a thread emits its events one
// after the other into the one ring buffer and the reader takes them in that order; a
// capture merged by time does too, one handed over per CPU (perfetto bundles) does not,
// as a thread that changed CPU inside its ioctl could show its exit before its queue
// event. Different threads' events may interleave out of order: no rule reads one
// thread's ioctl state from another thread's event.
//
// Conditions that keep the shortcut exact (otherwise events take the reorder buffer):
// both events InThreadOrder; TID ≠ 0 (TID 0 has no thread state); the enter is not late;
// both CPUs already processed an event (Stats' per-CPU first times are fixed; the check is
// the assembler's bitmask of CPUs 0–63, so events of higher CPUs always take the buffer);
// no capture loss note has arrived (loss windows track per-CPU last times, which a pair
// applied at its enter's place would move early on the exit's CPU).

package assemble

import (
	"math"

	"github.com/ghostdriver/ghostdriver/internal/event"
)

// maxTime is a bound past every event.
const maxTime = math.MaxInt64

// heldSlots is the number of per-thread enter slots (direct-mapped by TID; a collision
// sends the older enter into the reorder buffer).
const heldSlots = 64

type heldEnter struct {
	ev   event.Event
	used bool
}

// ioctlPair is an enter/exit pair that no job joined.
type ioctlPair struct {
	te, tx    int64
	tid       uint32
	cpu, xcpu int32 // the enter's and the exit's CPU
}

// pairRing holds pairs sorted by (te, cpu), like reorder holds events.
type pairRing struct {
	buf  []ioctlPair
	head int
	n    int
}

func (r *pairRing) at(i int) *ioctlPair { return &r.buf[(r.head+i)&(len(r.buf)-1)] }

func pairBefore(a, b *ioctlPair) bool {
	return a.te < b.te || a.te == b.te && a.cpu < b.cpu
}

func (r *pairRing) push(p ioctlPair) {
	if r.n == len(r.buf) {
		buf := make([]ioctlPair, max(minReorder, 2*len(r.buf)))
		for i := 0; i < r.n; i++ {
			buf[i] = *r.at(i)
		}
		r.buf, r.head = buf, 0
	}
	n := r.n
	r.n++
	if n == 0 || !pairBefore(&p, r.at(n-1)) {
		*r.at(n) = p
		return
	}
	lo, hi := 0, n-1
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if pairBefore(&p, r.at(m)) {
			hi = m
		} else {
			lo = m + 1
		}
	}
	for i := n; i > lo; i-- {
		*r.at(i) = *r.at(i - 1)
	}
	*r.at(lo) = p
}

func (r *pairRing) pop() {
	r.head = (r.head + 1) & (len(r.buf) - 1)
	r.n--
}

// cpuProcessed reports whether CPU c has had an event processed (its first time is fixed).
func (a *Assembler) cpuProcessed(c int32) bool {
	return uint32(c) < 64 && a.cpuSeen&(1<<uint32(c)) != 0
}

// hold takes an event the guard accepted and returns true when the shortcut took it (a
// held enter, or the exit that completes a pair); false: push it into the reorder buffer.
func (a *Assembler) hold(e *event.Event) bool {
	if e.Kind == event.EventsLost {
		a.lossNoted = true
		a.releaseHeld(maxTime)
		return false
	}
	if a.heldN == 0 && e.Kind != event.IoctlEnter {
		return false
	}
	s := &a.enters[e.TID&(heldSlots-1)]
	mine := s.used && s.ev.TID == e.TID
	switch e.Kind {
	case event.IoctlExit:
		if mine && e.InThreadOrder && e.Time >= s.ev.Time && a.cpuProcessed(e.CPU) {
			a.pairs.push(ioctlPair{te: s.ev.Time, tx: e.Time, tid: e.TID, cpu: s.ev.CPU, xcpu: e.CPU})
			a.free(s)
			return true
		}
	case event.IoctlEnter:
		if s.used {
			a.unhold(s) // the same thread's enter without exit, or another thread's
		}
		if e.TID == 0 || !e.InThreadOrder || a.noPairs || a.lossNoted || e.Time < a.now || !a.cpuProcessed(e.CPU) {
			return false
		}
		s.ev, s.used = *e, true
		if a.heldN == 0 || e.Time < a.heldMin {
			a.heldMin = e.Time
		}
		a.heldN++
		return true
	}
	if mine {
		a.unhold(s) // the thread did something in its ioctl: the enter goes first
	}
	return false
}

// unhold sends a held enter into the reorder buffer and frees its slot.
func (a *Assembler) unhold(s *heldEnter) {
	a.buf.push(&s.ev)
	a.free(s)
}

// free empties a slot (its strings stay until the slot is reused, like the ring's).
func (a *Assembler) free(s *heldEnter) {
	s.used = false
	a.heldN--
}

// releaseHeld sends every held enter stamped at or before bound into the reorder buffer.
func (a *Assembler) releaseHeld(bound int64) {
	if a.heldN == 0 || a.heldMin > bound {
		return
	}
	minLeft := int64(maxTime)
	for i := range a.enters {
		s := &a.enters[i]
		if !s.used {
			continue
		}
		if s.ev.Time <= bound {
			a.unhold(s)
		} else if s.ev.Time < minLeft {
			minLeft = s.ev.Time
		}
	}
	a.heldMin = minLeft
}

// release processes the buffered events and pairs stamped at or before bound, merged in
// (time, CPU) order; at equal keys the buffered event goes first (an earlier event of the
// pair's own thread can share the enter's time, never a later one).
func (a *Assembler) release(bound int64) {
	a.releaseHeld(bound)
	if a.pairs.n == 0 {
		a.buf.release(bound, a.process)
		return
	}
	for a.pairs.n > 0 {
		p := a.pairs.at(0)
		if p.te > bound {
			break
		}
		a.buf.releaseBefore(p, a.process)
		a.processPair(p)
		a.pairs.pop()
	}
	a.buf.release(bound, a.process)
}

// processPair applies an enter/exit pair at the enter's place: what ioctlEnter and
// ioctlExit do for an ioctl that queued nothing, less the enter's fields (pid, comm,
// driver, trace context, enter time), which only an ioctl still open reads.
func (a *Assembler) processPair(p *ioctlPair) {
	a.pairsApplied++
	a.loss.seeAt(p.cpu, p.te)
	a.loss.seeAt(p.xcpu, p.tx)
	th := a.thread(p.tid, p.te)
	if th.inIoctl && len(th.queued) == 0 {
		a.st.IoctlsWithoutJob++ // the previous one never saw its exit
	}
	a.endIoctl(th)
	th.last = max(th.last, p.tx)
	a.st.IoctlsWithoutJob++
}
