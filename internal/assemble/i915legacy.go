// i915 before the request/engine events (2.6.32 .. 4.10: i915_gem_ring_dispatch,
// i915_gem_request_add/_retire/_complete/_notify, no ctx= in their formats).
//
// These kernels submit from the execbuffer ioctl to a legacy ring: the ioctl emits the
// batch (i915_gem_ring_dispatch), then i915_add_request writes the request's breadcrumb
// (a store of its seqno and a user interrupt) and advances the ring's tail, and traces
// i915_gem_request_add: no later event runs the request, so add is its run and the end
// of its emission (te). Seqnos are one counter per device and a ring executes its
// requests in order. The user interrupt's handler (notify_ring) traces
// i915_gem_request_complete (≤4.x; i915_gem_request_notify in 4.x ..4.10) with the
// seqno the GPU last wrote on that ring (ring->get_seqno): every request of that ring
// up to that seqno has completed, so each one's th is the first such event that covers
// it. Interrupts are only enabled while someone waits, so a request may retire (tf)
// with no completion event: its th is then fallback_to_finished.

package assemble

import "github.com/ghostdriver/ghostdriver/internal/event"

type i915RingKey struct{ dev, ring string }

type legacyRequest struct {
	j   *job
	seq uint32
}

// maxLegacyPerRing bounds the requests remembered per ring: past it the closed ones
// are dropped, then the oldest.
const maxLegacyPerRing = 4096

// i915LegacyNote applies a legacy request event to its job: add is its run and te.
// Events of the request formats with ctx= (4.11+) never reach here.
func (a *Assembler) i915LegacyNote(j *job, e *event.Event) {
	if e.Kind == event.I915RequestRetire || !i915Legacy(e) {
		return
	}
	if e.Kind == event.I915RequestAdd {
		j.set(PointEmitted, e.Time, 0, Measured, hookOf(e))
		j.seen |= seenRun
	}
	k := i915RingKey{e.Device, e.Ring}
	l := a.i915Legacy[k]
	for _, r := range l {
		if r.j == j {
			return
		}
	}
	if len(l) >= maxLegacyPerRing {
		n := 0
		for _, r := range l {
			if r.j.open() {
				l[n] = r
				n++
			}
		}
		clear(l[n:])
		l = l[:n]
		if len(l) >= maxLegacyPerRing {
			l = append(l[:0], l[1:]...)
		}
	}
	a.i915Legacy[k] = append(l, legacyRequest{j, uint32(e.Fence.Seqno)})
}

// i915Legacy reports whether an i915 event is in a format without ctx= (only the
// i915_gem_* names of ≤4.10 print those; 4.11..4.15 print ctx=, whose kernel context
// is 0, and run their requests with i915_gem_request_submit).
func i915Legacy(e *event.Event) bool {
	if e.Fence.Context != 0 || e.FenceWide {
		return false
	}
	switch e.Name {
	case "i915_gem_ring_dispatch", "i915_gem_request_add":
		return true
	}
	return false
}

// i915Complete: the GPU wrote seqno N on the ring (user interrupt): th of every open
// request of that ring with seqno ≤ N (32-bit, wrapping) that has none yet.
func (a *Assembler) i915Complete(e *event.Event) {
	k := i915RingKey{e.Device, e.Ring}
	l := a.i915Legacy[k]
	n32 := uint32(e.Fence.Seqno)
	hook := hookOf(e)
	kept, matched := 0, false
	for _, r := range l {
		if !r.j.open() {
			continue
		}
		if int32(r.seq-n32) > 0 {
			l[kept] = r
			kept++
			continue
		}
		if !r.j.out.Points[PointHWDone].Known() {
			r.j.set(PointHWDone, e.Time, prioOwnFenceSignal, Measured, hook)
			a.touch(r.j, e.Time)
		}
		matched = true
	}
	clear(l[kept:])
	if kept == 0 {
		delete(a.i915Legacy, k)
	} else {
		a.i915Legacy[k] = l[:kept]
	}
	if !matched {
		a.orphan(e)
	}
}
