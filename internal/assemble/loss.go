// Loss windows: a capture's "CPU:N [LOST n EVENTS]" notes (event.EventsLost) say that CPU
// N's ring buffer dropped n events. The window of a note is the time between CPU N's last
// event before the note and its first event after it (tracefs and trace-cmd print the
// note just before that first event): the dropped events happened in there. Before CPU
// N's first event the window starts at the beginning of the input; until CPU N's next
// event it stays open.
//
// A job overlaps a window when its span [Start, End] meets it; a job whose finished fence
// was not seen signalling is taken to run on past its last event. Its lost events may be
// any job's, on any CPU's behalf, so every overlapping job is marked (Job.Loss): the
// span says events were lost, and an incomplete job's reason names the loss first
// instead of only "not finished" or "no queue event".

package assemble

import (
	"math"

	"github.com/ghostdriver/ghostdriver/internal/event"
)

// LossInfo is what a job's span says about the loss windows it overlaps.
type LossInfo struct {
	Events  uint64 // events those windows lost, summed
	Windows uint32 // loss windows overlapping the job (0: none)
	Counted bool   // every overlapping window's note printed its count
}

// reasonLost starts the reason of an incomplete job that overlaps a loss window.
const reasonLost = "events were lost while it ran (a [LOST n EVENTS] window overlaps it)"

// maxLossWindows bounds the windows kept (the oldest go first).
const maxLossWindows = 4096

// maxTrackedCPU bounds the per-CPU slice; events of higher CPUs use the map.
const maxTrackedCPU = 1024

type lossWindow struct {
	cpu        int32
	start, end int64 // end is math.MaxInt64 while the window is open
	n          uint64
	counted    bool
}

type lossTracker struct {
	last    []int64 // per CPU: time of its last event + 1 (0: none yet)
	lastMap map[int32]int64
	windows []lossWindow
	open    int // windows still open
}

// see notes the CPU's latest event and closes its open windows; it returns true for an
// EventsLost event, which it consumes (a new window).
func (l *lossTracker) see(e *event.Event) bool {
	if e.CPU < 0 {
		return e.Kind == event.EventsLost
	}
	if e.Kind == event.EventsLost {
		start := int64(math.MinInt64)
		if t, ok := l.lastOf(e.CPU); ok {
			start = t
		}
		if len(l.windows) == maxLossWindows {
			if l.windows[0].end == math.MaxInt64 {
				l.open--
			}
			l.windows = append(l.windows[:0], l.windows[1:]...)
		}
		l.windows = append(l.windows, lossWindow{cpu: e.CPU, start: start, end: math.MaxInt64, n: e.Arg, counted: e.Arg > 0})
		l.open++
		return true
	}
	l.seeAt(e.CPU, e.Time)
	return false
}

// seeAt notes an event (not a loss note) of CPU cpu at t: it closes the CPU's open windows
// and becomes its latest event.
func (l *lossTracker) seeAt(cpu int32, t int64) {
	if cpu < 0 {
		return
	}
	if l.open > 0 {
		for i := range l.windows {
			if w := &l.windows[i]; w.end == math.MaxInt64 && w.cpu == cpu {
				w.end = t
				l.open--
			}
		}
	}
	if int(cpu) < maxTrackedCPU {
		if int(cpu) >= len(l.last) {
			l.last = append(l.last, make([]int64, int(cpu)+1-len(l.last))...)
		}
		l.last[cpu] = t + 1
	} else {
		if l.lastMap == nil {
			l.lastMap = map[int32]int64{}
		}
		l.lastMap[cpu] = t
	}
}

func (l *lossTracker) lastOf(cpu int32) (int64, bool) {
	if int(cpu) < maxTrackedCPU {
		if int(cpu) < len(l.last) && l.last[cpu] != 0 {
			return l.last[cpu] - 1, true
		}
		return 0, false
	}
	t, ok := l.lastMap[cpu]
	return t, ok
}

// mark sets j.Loss from the windows j overlaps and, for a job that did not complete,
// puts the loss first in its reason.
func (l *lossTracker) mark(j *Job) {
	if len(l.windows) == 0 {
		return
	}
	end := j.End
	if !j.Points[PointFinished].Known() {
		end = math.MaxInt64 // not finished: it ran on past its last event
	}
	info := LossInfo{Counted: true}
	for i := range l.windows {
		w := &l.windows[i]
		if w.start <= end && j.Start <= w.end {
			info.Windows++
			info.Events += w.n
			info.Counted = info.Counted && w.counted
		}
	}
	if info.Windows == 0 {
		return
	}
	j.Loss = info
	if j.Outcome != Completed {
		if j.Reason == "" {
			j.Reason = reasonLost
		} else {
			j.Reason = reasonLost + "; " + j.Reason
		}
	}
}

func (l *lossTracker) reset() {
	l.last = l.last[:0]
	clear(l.lastMap)
	l.windows = l.windows[:0]
	l.open = 0
}
