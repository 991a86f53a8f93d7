// The reorder buffer: events of one job are recorded on different CPUs (submitting
// thread, scheduler worker, interrupt) and a live ring buffer or a merged capture can hand
// them over slightly out of order. Events wait here until the stream has moved
// ReorderWindow past them and are then handed to the state machine in (time, CPU) order,
// so the correlation rules that depend on order on one thread (ioctl brackets, the
// hardware fence created between a run and the next) see the kernel's order.
//
// The buffer is kept sorted on insertion: events arrive almost sorted, so an
// out-of-order one moves only a short distance. Ties keep their arrival order within a
// CPU (a CPU's own events are never reordered by the kernel) and are ordered by CPU
// across CPUs, so any interleaving of per-CPU streams yields the same sequence. It is a
// ring: releasing an event moves no other, so an in-order event is copied once, when it
// arrives (a released slot keeps its event's strings until the ring comes round: at most
// a ring's worth).

package assemble

import "github.com/ghostdriver/ghostdriver/internal/event"

type reorder struct {
	buf  []event.Event // ring; len is a power of two, or 0
	head int           // the earliest buffered event
	n    int           // buffered events
}

// minReorder is the ring's first size.
const minReorder = 256

// before reports whether a sorts strictly before b.
func before(a, b *event.Event) bool {
	return a.Time < b.Time || a.Time == b.Time && a.CPU < b.CPU
}

func (r *reorder) len() int { return r.n }

// at is the i-th buffered event in order.
func (r *reorder) at(i int) *event.Event { return &r.buf[(r.head+i)&(len(r.buf)-1)] }

// push copies e into the buffer at its sorted place, after every event it does not sort
// before (so equal keys keep arrival order).
func (r *reorder) push(e *event.Event) {
	if r.n == len(r.buf) {
		r.grow()
	}
	n := r.n
	r.n++
	if n == 0 || !before(e, r.at(n-1)) {
		*r.at(n) = *e
		return
	}
	// at(hi) sorts after e; find the first such index. An event arrives a few places
	// late at most (a held ioctl enter, a tie between CPUs), so the search gallops back
	// from the end (n−2, n−3, n−5, …) before it bisects: it reads the entries just
	// written, where a bisection of the whole window read ≈ 15 cold ones.
	lo, hi := n-2, n-1
	for step := 1; lo >= 0 && before(e, r.at(lo)); step *= 2 {
		hi = lo
		lo = hi - step
	}
	lo = max(lo+1, 0) // at(lo−1) does not sort after e, or lo is 0
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if before(e, r.at(m)) {
			hi = m
		} else {
			lo = m + 1
		}
	}
	r.shift(lo, n)
	*r.at(lo) = *e
}

// shift moves the entries lo…n−1 one place up (the ring has room for one more), in at
// most three copies: one block move with its write barriers instead of one per event.
func (r *reorder) shift(lo, n int) {
	mask := len(r.buf) - 1
	a, b := (r.head+lo)&mask, (r.head+n)&mask // first to move, the free slot
	if a < b {
		copy(r.buf[a+1:b+1], r.buf[a:b])
		return
	}
	// The run wraps: move the part at the start of the buffer, the last slot into the
	// first, then the part up to the end.
	copy(r.buf[1:b+1], r.buf[:b])
	r.buf[0] = r.buf[mask]
	copy(r.buf[a+1:], r.buf[a:mask])
}

// grow doubles the ring, unwrapping it.
func (r *reorder) grow() {
	buf := make([]event.Event, max(minReorder, 2*len(r.buf)))
	for i := 0; i < r.n; i++ {
		buf[i] = *r.at(i)
	}
	r.buf, r.head = buf, 0
}

// release hands every buffered event with Time ≤ bound to fn, in order.
func (r *reorder) release(bound int64, fn func(*event.Event)) {
	mask := len(r.buf) - 1
	for r.n > 0 {
		e := &r.buf[r.head]
		if e.Time > bound {
			return
		}
		r.head = (r.head + 1) & mask
		r.n--
		fn(e)
	}
}

// releaseBefore hands every buffered event stamped at or before p's enter to fn, in order.
func (r *reorder) releaseBefore(p *ioctlPair, fn func(*event.Event)) { r.release(p.te, fn) }
