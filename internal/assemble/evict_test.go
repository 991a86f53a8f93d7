// Timeouts, the pending cap, end-of-input reasons, and bounded memory.
package assemble

import (
	"testing"
	"time"

	"github.com/ghostdriver/ghostdriver/internal/event"
)

func TestTimeoutEviction(t *testing.T) {
	stuck, unrun, ok := fk(0x10, 1), fk(0x10, 2), fk(0x20, 1)
	cfg := DefaultConfig()
	cfg.JobTimeout = 5 * time.Second
	c := newCollector(cfg)
	c.a.Consume([]event.Event{
		queue617(10, 100, stuck), run617(20, stuck), // the GPU hangs on it
		queue617(30, 100, unrun),
		queue617(40, 101, ok), run617(50, ok), done617(60, ok),
	})
	c.a.Watermark(T(60) + int64(5*time.Second) + int64(20*time.Millisecond))
	if len(c.jobs) != 3 {
		t.Fatalf("jobs: %s", dump(c.jobs))
	}
	if c.jobs[0].Finished != ok || c.jobs[0].Outcome != Completed {
		t.Errorf("first out: %+v", c.jobs[0])
	}
	js, ju := find(t, c.jobs, stuck), find(t, c.jobs, unrun)
	if js.Outcome != Evicted || js.Reason != "timeout: no finished fence after 5s" {
		t.Errorf("stuck: %s %q", js.Outcome, js.Reason)
	}
	if ju.Outcome != Evicted || ju.Reason != "timeout: not run after 5s" {
		t.Errorf("unrun: %s %q", ju.Outcome, ju.Reason)
	}
	// What was known is still reported; what was not is not faked.
	wantPoint(t, js, PointRun, 20, Measured, "drm_sched_job_run")
	wantUnknown(t, js, PointFinished)
	wantUnknown(t, js, PointHWDone)
	if _, ok := js.Stage(StageExecution); ok {
		t.Error("an evicted job without a finish has an execution stage")
	}
	if js.End != T(20) {
		t.Errorf("end %d, want the last known point", js.End)
	}
	// The finish arriving after eviction is an orphan, not a second job.
	c.a.Consume([]event.Event{done617(6_000_000, stuck)})
	c.a.Flush()
	st := c.a.Stats()
	if len(c.jobs) != 3 || st.EvictedTimeout != 2 || st.Completed != 1 || st.Orphans["job_done"] != 1 {
		t.Errorf("after: %d jobs, stats %+v", len(c.jobs), st)
	}
}

func TestCapEviction(t *testing.T) {
	cfg := DefaultConfig()
	cfg.MaxPendingJobs = 3
	c := newCollector(cfg)
	var evs []event.Event
	for i := uint64(1); i <= 5; i++ {
		evs = append(evs, queue617(int64(i), 100, fk(0x10, i)))
	}
	for i := uint64(3); i <= 5; i++ {
		evs = append(evs, run617(int64(10+i), fk(0x10, i)), done617(int64(20+i), fk(0x10, i)))
	}
	// A done for an evicted job is an orphan (a run would open a new job, without queue).
	evs = append(evs, done617(30, fk(0x10, 1)))
	jobs := c.run(evs...)
	if len(jobs) != 5 {
		t.Fatalf("jobs: %s", dump(jobs))
	}
	// Queuing the 4th and 5th evicts the 1st and 2nd, output right then, oldest first.
	for i, want := range []struct {
		seq     uint64
		outcome Outcome
		reason  string
	}{
		{1, Evicted, "max_pending_jobs (3) reached"},
		{2, Evicted, "max_pending_jobs (3) reached"},
		{3, Completed, ""}, {4, Completed, ""}, {5, Completed, ""},
	} {
		if j := jobs[i]; j.Finished.Seqno != want.seq || j.Outcome != want.outcome || j.Reason != want.reason {
			t.Errorf("job %d: %v %s %q", i, j.Finished, j.Outcome, j.Reason)
		}
	}
	st := c.a.Stats()
	if st.EvictedCap != 2 || st.Completed != 3 || st.Incomplete != 0 || st.Orphans["job_done"] != 1 {
		t.Errorf("stats %+v", st)
	}
}

func TestFlushReasons(t *testing.T) {
	running, queued := fk(0x10, 1), fk(0x10, 2)
	kernel := fk(0x30, 1) // a context nobody queues on (a kernel job)
	c := newCollector(testConfig())
	jobs := c.run(cpusUp(1,
		queue617(10, 100, running), queue617(11, 100, queued), run617(20, running),
		run617(30, kernel), done617(40, kernel),
	)...)
	for f, want := range map[event.FenceKey]string{
		running: reasonNotFinished,
		queued:  reasonNotRun,
		kernel:  reasonNoQueueStream,
	} {
		if j := find(t, jobs, f); j.Outcome != Incomplete || j.Reason != want {
			t.Errorf("%v: %s %q, want %q", f, j.Outcome, j.Reason, want)
		}
	}
	// A job that began before the capture on a stream we saw submitting.
	c = newCollector(testConfig())
	jobs = c.run(queue617(5, 100, fk(0x10, 9)), run617(20, fk(0x10, 8)), done617(40, fk(0x10, 8)))
	if j := find(t, jobs, fk(0x10, 8)); j.Reason != reasonNoQueue {
		t.Errorf("reason %q", j.Reason)
	}
	// The same input without the early events on every CPU: the worker's CPU (2) and the
	// interrupt CPU (0) had recorded nothing when the jobs were queued.
	c = newCollector(testConfig())
	jobs = c.run(queue617(10, 100, queued), run617(20, running), done617(40, kernel))
	if j := find(t, jobs, queued); j.Reason != reasonNotRun+reasonEdge {
		t.Errorf("reason %q", j.Reason)
	}
}

// cpusUp prefixes events with one marker per CPU at time t (µs): every CPU is recording.
func cpusUp(t int64, evs ...event.Event) []event.Event {
	var out []event.Event
	for cpu := int32(0); cpu < 4; cpu++ {
		out = append(out, event.Event{Kind: event.Marker, Name: "print", Time: T(t), CPU: cpu})
	}
	return append(out, evs...)
}

// Every table is bounded: a long stream of jobs, most of them never completing, leaves
// tables no larger than the pending cap and the lookaside capacities; Flush empties them.
func TestBoundedMemory(t *testing.T) {
	cfg := DefaultConfig()
	cfg.MaxPendingJobs = 1000
	c := newCollector(cfg)
	c.a.out = func(*Job) {}
	batch := make([]event.Event, 0, 64)
	for i := uint64(0); i < 30_000; i++ {
		t0 := int64(i) * 10
		f, hw := fk(0x1000+i%50, i), fk(0x7, i)
		tid := uint32(1000 + i%5000) // many threads
		batch = append(batch, ioctlEnter(t0, tid), queue617(t0+1, tid, f), ioctlExit(t0+2, tid),
			addDep617(t0+1, tid, f, fk(0x5000, i)), // dependency that never signals
			run617(t0+3, f), finit(t0+4, 500, "amdgpu", hw),
			fsig(t0+5, "amdgpu", fk(0x9, i)), // orphan signal
		)
		if i%3 != 0 { // a third never finish
			batch = append(batch, fsig(t0+6, "amdgpu", hw), done617(t0+7, f))
		}
		done61 := done61(t0+8, 0x1000+i) // orphan pointer done
		batch = append(batch, done61)
		if len(batch) >= 60 {
			c.a.Consume(batch)
			batch = batch[:0]
		}
		a := c.a
		// A dependency waits on two fences: its own and its owner's scheduled fence.
		if a.byKey.len() > 1000+a.held.n || a.byHW.len() > 1000+a.held.n || len(a.waiters) > 2*(1000+a.held.n) ||
			a.pending.n > 1000 || len(a.threads) > 5001 || a.signals.len() > recentFences ||
			a.owners.len() > recentFences || a.contexts.len() > recentFences || a.early.len() > earlyDeps || a.buf.len() > 1e5 {
			t.Fatalf("unbounded at %d: keys %d hw %d waiters %d pending %d threads %d signals %d owners %d held %d",
				i, a.byKey.len(), a.byHW.len(), len(a.waiters), a.pending.n, len(a.threads), a.signals.len(),
				a.owners.len(), a.held.n)
		}
	}
	c.a.Consume(batch)
	c.a.Flush()
	a := c.a
	if a.byKey.len()+a.byPtr.len()+len(a.byID)+a.byHW.len()+len(a.waiters)+len(a.threads)+len(a.rings)+
		a.pending.n+a.held.n+a.buf.len()+a.signals.len()+a.owners.len()+a.contexts.len()+a.early.len() != 0 {
		t.Errorf("state left after Flush")
	}
	st := a.Stats()
	if st.Completed+st.Incomplete+st.EvictedCap+st.EvictedTimeout != 30_000 {
		t.Errorf("stats %+v", st)
	}
}
