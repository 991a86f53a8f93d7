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
// across CPUs, so any interleaving of per-CPU streams yields the same sequence.
package assemble

import "github.com/ghostdriver/ghostdriver/internal/event"

type reorder struct {
	buf  []event.Event
	head int // buf[:head] has been released
}

// before reports whether a sorts strictly before b.
func before(a, b *event.Event) bool {
	return a.Time < b.Time || a.Time == b.Time && a.CPU < b.CPU
}

func (r *reorder) len() int { return len(r.buf) - r.head }

// push copies e into the buffer at its sorted place, after every event it does not sort
// before (so equal keys keep arrival order).
func (r *reorder) push(e *event.Event) {
	n := len(r.buf)
	if n == r.head || !before(e, &r.buf[n-1]) {
		r.buf = append(r.buf, *e)
		return
	}
	lo, hi := r.head, n-1 // buf[hi] sorts after e; find the first such index
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if before(e, &r.buf[m]) {
			hi = m
		} else {
			lo = m + 1
		}
	}
	r.buf = append(r.buf, event.Event{})
	copy(r.buf[lo+1:], r.buf[lo:n])
	r.buf[lo] = *e
}

// release hands every buffered event with Time ≤ bound to fn, in order.
func (r *reorder) release(bound int64, fn func(*event.Event)) {
	i := r.head
	for i < len(r.buf) && r.buf[i].Time <= bound {
		fn(&r.buf[i])
		i++
	}
	r.head = i
	switch {
	case r.head == len(r.buf):
		clear(r.buf) // drop the strings the events hold
		r.buf = r.buf[:0]
		r.head = 0
	case r.head >= 1024 && 2*r.head >= len(r.buf):
		n := copy(r.buf, r.buf[r.head:])
		clear(r.buf[n:])
		r.buf = r.buf[:n]
		r.head = 0
	}
}
