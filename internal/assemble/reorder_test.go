// Events out of order across CPUs: any arrival order within ReorderWindow gives the same
// jobs; the hold of finished jobs; late events beyond the window are counted.
package assemble

import (
	"slices"
	"testing"
	"time"

	"github.com/ghostdriver/ghostdriver/internal/event"
)

// busyStream is a kernel-ordered stream of two processes' jobs with ioctls, a cross-process
// dependency, hardware fences and scheduled-fence signals (about 1ms long).
func busyStream() []event.Event {
	var evs []event.Event
	for i := uint64(0); i < 10; i++ {
		t := int64(i) * 100
		a, b := fk(0x100, i+1), fk(0x200, i+1)
		hwA, hwB := fk(0x7, 2*i+1), fk(0x7, 2*i+2)
		evs = append(evs,
			ioctlEnter(t+1, 100), boEnd(t+3, 100), queue617(t+5, 100, a), ioctlExit(t+8, 100),
			addDep617(t+10, 200, b, a), queue617(t+12, 200, b),
			run617(t+20, a), finit(t+21, 500, "amdgpu", hwA),
			fenceEv(event.FenceSignaled, "dma_fence_signaled", t+22, 500, 2, "drm_sched", fk(0xff, i+1)),
			fsig(t+40, "amdgpu", hwA), done617(t+41, a), fsig(t+42, "drm_sched", a),
			run617(t+45, b), finit(t+46, 500, "amdgpu", hwB),
			fenceEv(event.FenceSignaled, "dma_fence_signaled", t+47, 500, 2, "drm_sched", fk(0x1ff, i+1)),
			fsig(t+70, "amdgpu", hwB), done617(t+71, b),
		)
	}
	// Shift the IRQ-side events to CPU 3 for half the jobs, as interrupts move.
	for i := range evs {
		if evs[i].CPU == 0 && evs[i].Time%200 < 100 {
			evs[i].CPU = 3
		}
	}
	return evs
}

func TestReorderWithinWindow(t *testing.T) {
	evs := busyStream()
	sorted := newCollector(testConfig()).run(evs...)
	if len(sorted) != 20 {
		t.Fatalf("jobs: %s", dump(sorted))
	}
	for _, j := range sorted {
		stages := 8 // pid 100 submits through traced ioctls; pid 200 does not
		if j.Finished.Context == 0x200 {
			stages = 6
		}
		if j.Outcome != Completed || len(j.Stages) != stages {
			t.Fatalf("job %v: %s %q, %d stages", j.Finished, j.Outcome, j.Reason, len(j.Stages))
		}
	}
	b := find(t, sorted, fk(0x200, 3))
	// b depends on a's finished fence on the same scheduler: drm_sched waits only until a
	// is scheduled (its scheduled fence, context 0xff, signals at 222), not for a's end.
	wantPoint(t, b, PointDepsResolved, 222, Measured, "dma_fence_signaled(scheduled)")
	wantPoint(t, b, PointHWStart, 246, Inferred, "ring_serial")
	if b.Deps[0].Job != fk(0x100, 3) {
		t.Errorf("dependency link %+v", b.Deps)
	}

	cases := map[string][]event.Event{
		// The whole stream backwards: every done before its run, every ioctl exit before
		// its queue, every fence signal before the dependency on it.
		"reversed": reversed(evs),
	}
	for seed := int64(1); seed <= 5; seed++ {
		cases["shuffle"+string(rune('0'+seed))] = shuffleWithinWindow(evs, seed, int64(15*time.Millisecond))
	}
	for name, arrival := range cases {
		c := newCollector(testConfig())
		got := c.run(arrival...)
		if !sameJobs(sorted, got) {
			t.Errorf("%s: different jobs", name)
		}
		if st := c.a.Stats(); st.Late != 0 || len(st.Orphans) != 0 {
			t.Errorf("%s: stats %+v", name, st)
		}
	}

	// Without the window the same arrival orders break jobs apart.
	c := newCollector(Config{ReorderWindow: 1})
	if got := c.run(reversed(evs)...); sameJobs(sorted, got) || c.a.Stats().Late == 0 {
		t.Error("the reversed stream assembled the same without a reorder window")
	}
}

func reversed(evs []event.Event) []event.Event {
	r := slices.Clone(evs)
	slices.Reverse(r)
	return r
}

// A finished job is output once the stream has moved ReorderWindow past its finish (plus
// the window the events themselves wait), not before.
func TestHoldFinishedJobs(t *testing.T) {
	f := fk(0x10, 1)
	w := int64(20 * time.Millisecond)
	c := newCollector(DefaultConfig())
	c.a.Consume([]event.Event{queue617(10, 100, f), run617(20, f), done617(30, f)})
	c.a.Watermark(T(30) + w)
	if len(c.jobs) != 0 || c.a.Stats().Held != 1 {
		t.Fatalf("output before the hold ended: %s", dump(c.jobs))
	}
	c.a.Watermark(T(30) + 2*w - 1)
	if len(c.jobs) != 0 {
		t.Fatal("output before the hold ended")
	}
	c.a.Watermark(T(30) + 2*w)
	if len(c.jobs) != 1 || c.jobs[0].Outcome != Completed {
		t.Fatalf("not output after the hold: %s", dump(c.jobs))
	}
	if st := c.a.Stats(); st.Held != 0 || st.Pending != 0 || st.Buffered != 0 {
		t.Errorf("stats %+v", st)
	}
}

// An event later than the window is still applied when it can be, and counted.
func TestLateEvent(t *testing.T) {
	f := fk(0x10, 1)
	c := newCollector(Config{ReorderWindow: time.Millisecond})
	c.a.Consume([]event.Event{queue617(10, 100, f)})
	c.a.Consume([]event.Event{run617(5000, fk(0x99, 1))}) // moves the stream 5ms on
	c.a.Consume([]event.Event{run617(20, f), done617(30, f)})
	c.a.Flush()
	j := find(t, c.jobs, f)
	if j.Outcome != Completed {
		t.Errorf("late run/done not applied: %s %q", j.Outcome, j.Reason)
	}
	if st := c.a.Stats(); st.Late != 2 || st.LateByKind["job_run"] != 1 || st.LateByKind["job_done"] != 1 || len(st.LateByKind) != 2 {
		t.Errorf("late %d by kind %v, want 2: job_run=1 job_done=1", st.Late, st.LateByKind)
	}
	// The bound was 4000 µs (5000 − the 1 ms window), the run event at 20 µs.
	if st := c.a.Stats(); st.LateMaxBehind != 3980*time.Microsecond {
		t.Errorf("late at most %v behind, want 3.98ms", st.LateMaxBehind)
	}
}

// Which late events only an event time had made late: one behind a bound that an event
// stamped ahead of the rest had moved past the watermark, one behind the watermark's own.
func TestLatePastWatermark(t *testing.T) {
	ms := func(n int64) int64 { return n * 1000 } // the helpers take µs
	c := newCollector(Config{ReorderWindow: 20 * time.Millisecond, JobTimeout: time.Minute, MaxPendingJobs: 100})
	c.a.Watermark(T(ms(40)))
	c.a.Consume([]event.Event{run617(ms(100), fk(0x99, 1))}) // the bound moves to 80 ms on this event alone
	c.a.Consume([]event.Event{run617(ms(50), fk(0x98, 1))})  // behind 80, not behind the watermark's 20
	c.a.Watermark(T(ms(200)))                                // the bound moves to 180 ms on the watermark
	c.a.Consume([]event.Event{run617(ms(150), fk(0x97, 1))}) // behind the watermark's own bound
	st := c.a.Stats()
	if st.Late != 2 || st.LatePastWatermark != 1 || st.LateMaxBehind != 30*time.Millisecond {
		t.Errorf("late %d (%d past the watermark, at most %v behind), want 2 (1, 30ms)", st.Late, st.LatePastWatermark, st.LateMaxBehind)
	}
}
