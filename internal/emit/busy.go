// Ring utilization: the union of a ring's execution intervals, on the source clock.
//
// busy_time is the cumulative length of the union of every execution interval seen on a
// ring. busy_ratio is the part of that union inside the collection window divided by the
// window's length, where the window runs on the source clock from the previous
// collection's mark to this one's. The mark is the latest source time the recorder has
// been told about: source watermarks (MetricsRecorder.Watermark) and the ends of the jobs
// recorded. The first window starts at the earliest source time seen. Measuring the
// window on the source clock makes the ratio right for replays at any speed as well as
// for the live source, and never above 1.
//
// A job's execution interval is only known when the job is recorded (after it finished
// and, in the assembler, after the reorder window). A part that lies before the current
// window was already reported as idle and is not moved into this window's ratio; it is
// counted in busy_time, so rate(busy_time) is exact over any range and busy_ratio is exact
// for jobs shorter than that delay. Without watermarks an idle period after the last job
// is not seen: windows with no progress of the mark yield no busy_ratio point.
//
// Overlaps (multi-queue engines, inferred bounds) are merged, not double counted. Each
// ring keeps at most busyReorder pending disjoint intervals; older ones are accounted and
// later arrivals are clipped at what was accounted, which is exact as long as intervals
// of one ring arrive less than busyReorder intervals out of order.

package emit

import (
	"slices"
	"sort"
)

// busyReorder bounds the pending intervals per ring.
const busyReorder = 64

type interval struct{ start, end int64 }

// ringBusy is one ring's utilization state.
type ringBusy struct {
	open      []interval // disjoint, sorted, not yet accounted
	covered   int64      // union accounted up to here
	accounted bool
	total     int64 // ns, cumulative union length
	window    int64 // ns of the union inside the current window
}

// busyClock is the recorder's view of source time, shared by all rings.
type busyClock struct {
	lo, mark    int64 // earliest and latest source time seen
	seen        bool
	windowStart int64 // mark of the previous collection
	windowed    bool  // windowStart is valid (a collection happened with progress)
}

func (c *busyClock) observe(t int64) {
	if !c.seen {
		c.lo, c.mark, c.seen = t, t, true
		return
	}
	c.lo = min(c.lo, t)
	c.mark = max(c.mark, t)
}

// window returns the current window's bounds, ok when it has positive length.
func (c *busyClock) window() (start, end int64, ok bool) {
	if !c.seen {
		return 0, 0, false
	}
	start = c.lo
	if c.windowed {
		start = c.windowStart
	}
	return start, c.mark, c.mark > start
}

// close ends the current window at the mark.
func (c *busyClock) close() {
	if _, end, ok := c.window(); ok {
		c.windowStart, c.windowed = end, true
	}
}

// add merges an execution interval into the ring's pending set.
func (r *ringBusy) add(iv interval, c *busyClock) {
	if iv.end <= iv.start || (r.accounted && iv.end <= r.covered) {
		return
	}
	// open is disjoint and sorted, so its ends are sorted too: find the first interval
	// that ends at or after iv starts, then absorb every one that starts before iv ends.
	i := sort.Search(len(r.open), func(k int) bool { return r.open[k].end >= iv.start })
	j := i
	for j < len(r.open) && r.open[j].start <= iv.end {
		iv.start = min(iv.start, r.open[j].start)
		iv.end = max(iv.end, r.open[j].end)
		j++
	}
	r.open = slices.Replace(r.open, i, j, iv)
	for len(r.open) > busyReorder {
		r.account(r.open[0], c)
		r.open = slices.Delete(r.open, 0, 1)
	}
}

// flush accounts every pending interval (at collection).
func (r *ringBusy) flush(c *busyClock) {
	for _, iv := range r.open {
		r.account(iv, c)
	}
	r.open = r.open[:0]
}

// account adds the part of iv not accounted yet to the totals.
func (r *ringBusy) account(iv interval, c *busyClock) {
	s := iv.start
	if r.accounted {
		s = max(s, r.covered)
	}
	if iv.end > s {
		r.total += iv.end - s
		ws := s
		if c.windowed {
			ws = max(ws, c.windowStart)
		}
		if iv.end > ws {
			r.window += iv.end - ws
		}
	}
	if !r.accounted || iv.end > r.covered {
		r.covered, r.accounted = iv.end, true
	}
}
