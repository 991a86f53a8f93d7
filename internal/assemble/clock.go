// The clock-jump guard: one event must not be able to move the assembler's clock.
//
// The assembler's clock (hi, and now = hi − ReorderWindow) drives timeouts: a pending job
// whose last event is more than JobTimeout behind now is evicted. A single event stamped
// far in the future — a corrupt capture line, a record with a garbage timestamp, a clock
// that jumped and came back — would therefore time out every pending job at once, and
// every job started after it (its events are all "late"). So an event more than
// JobTimeout ahead of the stream is held aside until the next event tells which it is:
//
//   - the next event is near it or later: the stream really moved (an idle GPU, a
//     stalled reader): both are accepted, and timeouts fire as they should;
//   - the next event is back where the stream was: the held event was a jump. It is
//     processed at the stream's time instead (it is not dropped: it may complete a job)
//     and counted in Stats.ClockJumps.
//
// Watermarks: the live source's come from the kernel's monotonic clock and are trusted,
// a jump included (a reader stalled for longer than JobTimeout). The replay source's
// are the latest event time it delivered, so they repeat a held or rejected event's time:
// a watermark at or before the held event, or within a rejected jump's reach, is not
// allowed to move the clock.
//
// An event that goes back in time by more than the window is processed at once and
// counted as Late; it cannot move the clock, so it cannot evict anything but itself.

package assemble

import "github.com/ghostdriver/ghostdriver/internal/event"

// ahead reports whether t is more than d after ref, without overflowing on garbage times.
func ahead(t, ref, d int64) bool {
	return t > ref && uint64(t-ref) > uint64(d)
}

// admit applies the guard to one arriving event.
func (a *Assembler) admit(e *event.Event) {
	if a.suspected {
		a.suspected = false
		s := &a.suspect
		if ahead(s.Time, e.Time, a.timeout) {
			// e is back where the stream was: s was a jump.
			a.st.ClockJumps++
			if s.Time > a.jumpHi {
				a.jumpHi = s.Time
			}
			if a.started {
				s.Time = a.hi
			} else {
				s.Time = e.Time
			}
		}
		a.accept(s)
		a.suspect = event.Event{} // drop the strings it holds
	}
	// The very first event is held too: nothing yet says whether it is a jump.
	if !a.started || ahead(e.Time, a.hi, a.timeout) {
		a.suspect = *e
		a.suspected = true
		return
	}
	a.accept(e)
}

// trustWatermark reports whether a watermark may move the clock.
func (a *Assembler) trustWatermark(t int64) bool {
	if a.suspected && t <= a.suspect.Time {
		return false // may merely repeat the held event's time
	}
	if a.started && ahead(t, a.hi, a.timeout) && t <= a.jumpHi {
		return false // repeats a rejected jump
	}
	return true
}

// recheckSuspect accepts the held event once the clock has caught up with it.
func (a *Assembler) recheckSuspect() {
	if a.suspected && !ahead(a.suspect.Time, a.hi, a.timeout) {
		a.suspected = false
		a.accept(&a.suspect)
		a.suspect = event.Event{}
	}
}
