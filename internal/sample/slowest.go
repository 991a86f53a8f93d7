// The slowest-per-window keep rule: a running maximum per ring.
//
// The slowest job of a window is known only when the window ends, and holding every
// job's spans until then would hold a window of spans. A running maximum needs no
// holding: a job is kept when it is slower than every job before it in its ring's window.
// The window's slowest is among those kept, and for n jobs in random order about ln n + 0.58
// are (the expected number of records in a random sequence): ≈ 10 a window at 10 000 jobs.

package sample

import "time"

// maxGroups bounds the table of rings; beyond it the table starts over (counted).
const maxGroups = 4096

type window struct {
	start int64 // source time the ring's current window began
	max   int64 // the slowest latency in it so far
}

type slowest struct {
	length int64
	groups map[Group]window
	resets uint64
}

func (s *slowest) init(length time.Duration) {
	s.length = int64(length)
	s.groups = make(map[Group]window)
}

// record notes an item of group g that ended at t with latency lat, and reports whether
// it is the slowest of its window so far.
func (s *slowest) record(g Group, t, lat int64) bool {
	w, ok := s.groups[g]
	// an item that ended before its ring's window began (events from other CPUs arrive
	// a little out of order) counts in the current window
	if !ok || t >= w.start+s.length {
		if !ok && len(s.groups) >= maxGroups {
			clear(s.groups)
			s.resets++
		}
		start := t
		if ok {
			start = w.start + (t-w.start)/s.length*s.length
		}
		s.groups[g] = window{start: start, max: lat}
		return true
	}
	if lat > w.max {
		w.max = lat
		s.groups[g] = w
		return true
	}
	return false
}
