// The clock-jump guard (clock.go): a far-future timestamp, then back, times nothing out;
// a real gap in the stream still does.
package assemble

import (
	"math"
	"testing"
	"time"

	"github.com/ghostdriver/ghostdriver/internal/event"
)

// replayFeed delivers events one batch each followed by the replay source's watermark
// (the latest event time delivered so far), as internal/replay does.
func replayFeed(a *Assembler, latest *int64, evs ...event.Event) {
	for i := range evs {
		a.Consume(evs[i : i+1])
		if evs[i].Time > *latest {
			*latest = evs[i].Time
		}
		a.Watermark(*latest)
	}
}

func TestFarFutureTimestampThenBack(t *testing.T) {
	const n = 50
	for _, name := range []string{"middle", "first"} {
		t.Run(name, func(t *testing.T) {
			c := newCollector(testConfig())
			var latest int64
			future := fsig(T(0)+int64(1e6*time.Second), "x", fk(0x99, 1)) // an unrelated fence, a million seconds ahead
			if name == "first" {
				replayFeed(c.a, &latest, future)
			}
			for i := uint64(1); i <= n; i++ {
				replayFeed(c.a, &latest, queue617(int64(i), 100, fk(0x10, i)), run617(int64(100+i), fk(0x10, i)))
			}
			if name == "middle" {
				replayFeed(c.a, &latest, future)
			}
			if st := c.a.Stats(); st.EvictedTimeout != 0 || len(c.jobs) != 0 {
				t.Fatalf("the jump evicted pending jobs: %+v", st)
			}
			// The stream goes on where it was: every job finishes normally, and a new one
			// queued after the jump does too.
			for i := uint64(1); i <= n; i++ {
				replayFeed(c.a, &latest, done617(int64(1000+i), fk(0x10, i)))
			}
			replayFeed(c.a, &latest, queue617(2000, 100, fk(0x10, n+1)), run617(2001, fk(0x10, n+1)), done617(2002, fk(0x10, n+1)))
			c.a.Flush()
			st := c.a.Stats()
			if st.Completed != n+1 || st.EvictedTimeout != 0 || st.EvictedCap != 0 || st.Incomplete != 0 {
				t.Errorf("completed %d evicted %d/%d incomplete %d, want %d completed", st.Completed, st.EvictedTimeout, st.EvictedCap, st.Incomplete, n+1)
			}
			if st.ClockJumps != 1 || st.Orphans["fence_signaled"] != 1 {
				t.Errorf("clock jumps %d, orphan signals %d: want the jump counted once and its event still processed", st.ClockJumps, st.Orphans["fence_signaled"])
			}
		})
	}
}

// A real gap (the GPU idle for a minute, then work again) is not a jump: the stuck job
// times out and the stream carries on.
func TestRealGapStillTimesOut(t *testing.T) {
	c := newCollector(testConfig())
	var latest int64
	stuck, later := fk(0x10, 1), fk(0x10, 2)
	gap := int64(60 * time.Second / time.Microsecond)
	replayFeed(c.a, &latest, queue617(10, 100, stuck), run617(20, stuck))
	replayFeed(c.a, &latest, queue617(gap, 100, later), run617(gap+10, later), done617(gap+20, later))
	if st := c.a.Stats(); st.EvictedTimeout != 1 {
		t.Fatalf("the stuck job was not timed out once the stream moved on: %+v", st)
	}
	c.a.Flush()
	st := c.a.Stats()
	if st.Completed != 1 || st.EvictedTimeout != 1 || st.ClockJumps != 0 {
		t.Errorf("stats %+v", st)
	}
	if j := find(t, c.jobs, stuck); j.Outcome != Evicted {
		t.Errorf("stuck job: %s %q", j.Outcome, j.Reason)
	}
}

// The live source's watermark is the kernel's monotonic clock: a reader stalled for
// longer than JobTimeout is a real jump and times out what is stuck.
func TestLiveWatermarkJumpIsTrusted(t *testing.T) {
	c := newCollector(testConfig())
	c.a.Consume([]event.Event{queue617(10, 100, fk(0x10, 1)), run617(20, fk(0x10, 1))})
	c.a.Watermark(T(30))
	c.a.Watermark(T(30) + int64(30*time.Second))
	if st := c.a.Stats(); st.EvictedTimeout != 1 || st.ClockJumps != 0 {
		t.Errorf("stats %+v", st)
	}
}

// A single event after a stall (live: the first submit after an idle minute) is
// confirmed by the next watermark past it and not left waiting.
func TestHeldEventReleasedByLaterWatermark(t *testing.T) {
	c := newCollector(testConfig())
	c.a.Consume([]event.Event{queue617(10, 100, fk(0x10, 1))})
	c.a.Watermark(T(20))
	late := int64(60 * time.Second / time.Microsecond)
	c.a.Consume([]event.Event{queue617(late, 100, fk(0x10, 2))})
	c.a.Watermark(T(late) - 1000) // the reader's mark was taken before the event
	c.a.Watermark(T(late) + int64(50*time.Millisecond))
	st := c.a.Stats()
	if st.Buffered != 0 || st.Pending != 1 || st.EvictedTimeout != 1 || st.ClockJumps != 0 {
		t.Errorf("stats %+v", st)
	}
}

// Garbage times at the ends of int64 neither panic nor move the clock.
func TestExtremeTimestamps(t *testing.T) {
	c := newCollector(testConfig())
	var latest int64
	replayFeed(c.a, &latest, queue617(10, 100, fk(0x10, 1)), run617(20, fk(0x10, 1)))
	replayFeed(c.a, &latest, event.Event{Kind: event.FenceSignaled, Time: math.MaxInt64, CPU: 1})
	replayFeed(c.a, &latest, event.Event{Kind: event.FenceSignaled, Time: math.MinInt64, CPU: 1})
	replayFeed(c.a, &latest, done617(30, fk(0x10, 1)))
	c.a.Flush()
	st := c.a.Stats()
	if st.Completed != 1 || st.EvictedTimeout != 0 || st.ClockJumps != 1 || st.Late == 0 {
		t.Errorf("stats %+v", st)
	}
}
