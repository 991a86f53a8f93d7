// Scheduler generations: ≤6.16 pointer identity, 6.17+ 64-bit keys, seqno wrap-around,
// pointer reuse, and run_job's fexit / the live source's hardware fence.
package assemble

import (
	"slices"
	"testing"

	"github.com/ghostdriver/ghostdriver/internal/event"
)

// ≤6.16 events, as the decoder fills them from "entity=%p, id=%llu, fence=%p, ring=%s, …".
func queue61(t int64, tid uint32, entity, ptr, id uint64) event.Event {
	return event.Event{Kind: event.JobQueue, Name: "drm_sched_job", Time: T(t), TID: tid, PID: tid, Comm: "app", CPU: 1,
		Ring: "gfx_0.0.0", Entity: entity, FencePtr: ptr, JobID: id}
}

func run61(t int64, entity, ptr, id uint64) event.Event {
	return event.Event{Kind: event.JobRun, Name: "drm_run_job", Time: T(t), TID: 500, Comm: "gfx_0.0.0", CPU: 2,
		Ring: "gfx_0.0.0", Entity: entity, FencePtr: ptr, JobID: id}
}

func done61(t int64, ptr uint64) event.Event {
	return event.Event{Kind: event.JobDone, Name: "drm_sched_process_job", Time: T(t), CPU: 0, FencePtr: ptr}
}

func waitDep61(t int64, id uint64, dep event.FenceKey) event.Event {
	return event.Event{Kind: event.JobDependency, Name: "drm_sched_job_wait_dep", Time: T(t), TID: 500, CPU: 2,
		Ring: "gfx_0.0.0", JobID: id, Dep: dep}
}

// A 6.1 job with every event a 6.1 kernel traces: pointer identity joined to the fence
// keys through dma_fence_init on the submitting thread and on the worker.
func TestSched61PointerIdentity(t *testing.T) {
	const tid, ent, ptr = 100, 0xffff1000, 0xffff2000
	jobs := newCollector(testConfig()).run(
		finit(10, tid, "drm_sched", fk(40, 7)), // drm_sched_job_arm: scheduled fence…
		finit(11, tid, "drm_sched", fk(41, 7)), // …then finished fence
		queue61(12, tid, ent, ptr, 1001),
		waitDep61(20, 1001, fk(99, 5)),
		fsig(25, "sync_file", fk(99, 5)),
		run61(30, ent, ptr, 1001),
		finit(33, 500, "amdgpu", fk(3, 900)), // hardware fence created in run_job
		fenceEv(event.FenceSignaled, "dma_fence_signaled", 34, 500, 2, "drm_sched", fk(40, 7)), // scheduled
		fsig(80, "amdgpu", fk(3, 900)),
		done61(81, ptr),
		fsig(82, "drm_sched", fk(41, 7)), // finished fence, after the done event
	)
	if len(jobs) != 1 {
		t.Fatalf("jobs: %s", dump(jobs))
	}
	j := jobs[0]
	if j.Outcome != Completed || j.Finished != fk(41, 7) || j.FinishedWide || j.HWFence != fk(3, 900) ||
		j.Driver != "amdgpu" || j.JobID != 1001 || j.TID != tid || j.Ring != "gfx_0.0.0" {
		t.Errorf("job: %+v", j)
	}
	wantPoint(t, j, PointQueued, 12, Measured, "drm_sched_job")
	wantPoint(t, j, PointDepsResolved, 25, Measured, "dma_fence_signaled")
	wantPoint(t, j, PointRun, 30, Measured, "drm_run_job")
	wantPoint(t, j, PointEmitted, 33, Measured, "dma_fence_init")
	wantPoint(t, j, PointHWStart, 33, Inferred, "ring_serial")
	wantPoint(t, j, PointHWDone, 80, Measured, "dma_fence_signaled")
	wantPoint(t, j, PointFinished, 81, Measured, "drm_sched_process_job")
	wantUnknown(t, j, PointIoctlEnter)
	wantStages(t, j,
		"fence_dependency 12 25 measured drm_sched_job→dma_fence_signaled",
		"scheduler_queue 25 30 measured dma_fence_signaled→drm_run_job",
		"ring_emission 30 33 measured drm_run_job→dma_fence_init",
		"dma_scheduling 33 33 inferred dma_fence_init→ring_serial",
		"execution 33 80 inferred ring_serial→dma_fence_signaled",
		"fence_signal 80 81 measured dma_fence_signaled→drm_sched_process_job",
	)
	// A sync_file fence (no scheduler context we know): waited for until it signals.
	if len(j.Deps) != 1 || j.Deps[0].Fence != fk(99, 5) || j.Deps[0].Signaled != T(25) ||
		j.Deps[0].Wait != DepWaitSignal || j.Deps[0].Until != T(25) {
		t.Errorf("deps: %+v", j.Deps)
	}
	if j.Start != T(12) || j.End != T(81) {
		t.Errorf("span [%d,%d]", j.Start, j.End)
	}
}

// Pointers are reused after free: a job's pointer entry ends at its done, and a queue on a
// still-pending pointer with another id means the earlier job's done was lost.
func TestSched61PointerReuse(t *testing.T) {
	const ent, p, q = 0xe1, 0xf1, 0xf2
	c := newCollector(testConfig())
	jobs := c.run(
		queue61(10, 100, ent, p, 1), run61(20, ent, p, 1), done61(50, p),
		queue61(60, 100, ent, p, 2), run61(70, ent, p, 2), done61(90, p), // same pointer, next job
		queue61(100, 100, ent, q, 3), run61(110, ent, q, 3), // its done is lost…
		queue61(120, 100, ent, q, 4), run61(130, ent, q, 4), done61(150, q), // …the pointer comes back
	)
	if len(jobs) != 4 {
		t.Fatalf("jobs: %s", dump(jobs))
	}
	for _, w := range []struct {
		id         uint64
		tq, tr, tf int64
	}{{1, 10, 20, 50}, {2, 60, 70, 90}, {4, 120, 130, 150}} {
		j := findID(t, jobs, w.id)
		if j.Outcome != Completed {
			t.Errorf("job %d: %s %q", w.id, j.Outcome, j.Reason)
		}
		wantPoint(t, j, PointQueued, w.tq, Measured, "drm_sched_job")
		wantPoint(t, j, PointRun, w.tr, Measured, "drm_run_job")
		wantPoint(t, j, PointFinished, w.tf, Measured, "drm_sched_process_job")
	}
	// Job 2 ran after job 1 was done: ring_serial starts it at its own run.
	wantPoint(t, findID(t, jobs, 2), PointHWStart, 70, Inferred, "ring_serial")
	lost := findID(t, jobs, 3)
	if lost.Outcome != Incomplete || lost.Reason != reasonPtrReused {
		t.Errorf("job 3: %s %q", lost.Outcome, lost.Reason)
	}
	// Output in finish order; the lost job when its pointer came back.
	var order []uint64
	for _, j := range jobs {
		order = append(order, j.JobID)
	}
	if order[0] != 1 || order[1] != 2 || order[2] != 3 || order[3] != 4 {
		t.Errorf("order %v", order)
	}
	if st := c.a.Stats(); st.Completed != 3 || st.Incomplete != 1 || len(st.Orphans) != 0 {
		t.Errorf("stats %+v", st)
	}
}

// 6.17+: 64-bit keys, add_dep before the queue event, client id, device, a dependency
// on another process's job, and the hardware fence created on the worker.
func TestSched617(t *testing.T) {
	a := fk(0x1_0000_0010, 7) // another process's job (context beyond 32 bits)
	b := fk(0x1_0000_0020, 0x3_0000_0002)
	hw := fk(2, 77)
	jobs := newCollector(testConfig()).run(
		queue617(5, 200, a), run617(8, a),
		addDep617(10, 100, b, a), // traced at drm_sched_job_arm time, before the queue event
		queue617(12, 100, b),
		done617(40, a),
		fsig(41, "drm_sched", a), // A's finished fence as dma_fence prints it: 32-bit
		run617(45, b),
		finit(47, 500, "amdgpu", hw),
		fsig(90, "amdgpu", hw),
		done617(91, b),
	)
	if len(jobs) != 2 {
		t.Fatalf("jobs: %s", dump(jobs))
	}
	jb := find(t, jobs, b)
	if jb.Outcome != Completed || jb.Finished != b || !jb.FinishedWide || jb.ClientID != 13 ||
		jb.Device != "0000:03:00.0" || jb.HWFence != hw || jb.PID != 100 {
		t.Errorf("job b: %+v", jb)
	}
	// a runs on b's scheduler (same device and ring) from another entity: drm_sched waits
	// only until a is scheduled, right after a's run at 8, before b was even queued. The
	// finished fence's own signal (41) replaces the done event's report (40).
	if d := jb.Deps; len(d) != 1 || d[0].Fence != a || d[0].Signaled != T(41) || d[0].Job != a || !d[0].JobKnown ||
		d[0].Wait != DepWaitScheduled || d[0].Until != T(8) {
		t.Errorf("deps: %+v", jb.Deps)
	}
	wantPoint(t, jb, PointDepsResolved, 12, Inferred, "dependencies_signaled_before_queue")
	wantPoint(t, jb, PointEmitted, 47, Measured, "dma_fence_init")
	wantPoint(t, jb, PointHWStart, 47, Inferred, "ring_serial")
	wantStages(t, jb,
		"fence_dependency 12 12 inferred drm_sched_job_queue→dependencies_signaled_before_queue",
		"scheduler_queue 12 45 inferred dependencies_signaled_before_queue→drm_sched_job_run",
		"ring_emission 45 47 measured drm_sched_job_run→dma_fence_init",
		"dma_scheduling 47 47 inferred dma_fence_init→ring_serial",
		"execution 47 90 inferred ring_serial→dma_fence_signaled",
		"fence_signal 90 91 measured dma_fence_signaled→drm_sched_job_done",
	)
	ja := find(t, jobs, a)
	wantStages(t, ja,
		"fence_dependency 5 5 inferred drm_sched_job_queue→no_dependencies",
		"scheduler_queue 5 8 inferred no_dependencies→drm_sched_job_run",
		"ring_emission 8 8 inferred drm_sched_job_run→fallback_to_run",
		"dma_scheduling 8 8 inferred fallback_to_run→ring_serial",
		"execution 8 40 inferred ring_serial→fallback_to_finished",
		"fence_signal 40 40 inferred fallback_to_finished→drm_sched_job_done",
	)
}

// The 32-bit dma_fence seqno wraps while the 64-bit scheduler seqno keeps counting.
func TestSeqnoWrapAround(t *testing.T) {
	before := fk(0x7_0000_0005, 0xffff_ffff)
	after := fk(0x7_0000_0005, 0x1_0000_0000) // dma_fence prints seqno=0
	next := fk(0x7_0000_0005, 0x1_0000_0001)
	c := newCollector(testConfig())
	jobs := c.run(
		queue617(10, 100, before), queue617(11, 100, after), queue617(12, 100, next),
		run617(20, before), fsig(22, "drm_sched", fk(0x7_0000_0004, 0xffff_ffff)),
		run617(30, after), fsig(32, "drm_sched", fk(0x7_0000_0004, 0x1_0000_0000)),
		run617(40, next), fsig(42, "drm_sched", fk(0x7_0000_0004, 0x1_0000_0001)),
		// amdgpu-style completion: only the finished fences' dma_fence_signaled.
		fsig(50, "drm_sched", before), fsig(60, "drm_sched", after), fsig(70, "drm_sched", next),
	)
	for i, w := range []struct {
		f      event.FenceKey
		te, tf int64
	}{{before, 22, 50}, {after, 32, 60}, {next, 42, 70}} {
		j := find(t, jobs, w.f)
		if j.Outcome != Completed || j.Finished != w.f || j != jobs[i] {
			t.Errorf("job %v: %s %q (%d)", w.f, j.Outcome, j.Reason, i)
		}
		wantPoint(t, j, PointEmitted, w.te, Measured, "dma_fence_signaled(scheduled)")
		wantPoint(t, j, PointFinished, w.tf, Measured, "dma_fence_signaled")
	}
	if st := c.a.Stats(); st.Completed != 3 || len(st.Orphans) != 0 {
		t.Errorf("stats %+v", st)
	}
}

// The live source reads s_fence->parent (Event.HWFence) and run_job's fexit.
func TestRunJobEndAndLinkedHWFence(t *testing.T) {
	f, hw := fk(0x30, 1), fk(0x9, 4)
	run := run617(20, f)
	run.HWFence = hw
	end := event.Event{Kind: event.RunJobEnd, Name: "fexit", Func: "amdgpu_job_run", Time: T(24), TID: 500, CPU: 2}
	jobs := newCollector(testConfig()).run(queue617(10, 100, f), run, end, fsig(60, "amdgpu", hw), done617(61, f))
	j := find(t, jobs, f)
	if j.HWFence != hw || j.Outcome != Completed {
		t.Errorf("job %+v", j)
	}
	wantPoint(t, j, PointEmitted, 24, Measured, "amdgpu_job_run")
	wantPoint(t, j, PointHWDone, 60, Measured, "dma_fence_signaled")
}

// A 6.17 amdgpu kernel traces amdgpu_cs_ioctl/amdgpu_sched_run_job and the generic
// scheduler events for the same job: one job, the scheduler's events win the points, the
// details of both are kept.
func TestAmdgpuAndDrmSchedEventsMerge(t *testing.T) {
	f := fk(0x1_0000_0401, 1)
	cs := event.Event{Kind: event.JobQueue, Name: "amdgpu_cs_ioctl", Driver: "amdgpu", Time: T(10), TID: 100, CPU: 1,
		Timeline: "gfx_0.0.0", Ring: "gfx_0.0.0", Fence: f, FenceWide: true}
	rj := event.Event{Kind: event.JobRun, Name: "amdgpu_sched_run_job", Driver: "amdgpu", Time: T(20), TID: 500, CPU: 2,
		Timeline: "gfx_0.0.0", Ring: "gfx_0.0.0", Fence: f, FenceWide: true}
	c := newCollector(testConfig())
	jobs := c.run(cs, queue617(11, 100, f), run617(19, f), rj, done617(40, f))
	if len(jobs) != 1 {
		t.Fatalf("jobs %s", dump(jobs))
	}
	j := jobs[0]
	wantPoint(t, j, PointQueued, 11, Measured, "drm_sched_job_queue")
	wantPoint(t, j, PointRun, 19, Measured, "drm_sched_job_run")
	if j.Outcome != Completed || j.Driver != "amdgpu" || j.Device != "0000:03:00.0" || j.ClientID != 13 {
		t.Errorf("job %+v", j)
	}
	if st := c.a.Stats(); st.Duplicates != 0 {
		t.Errorf("stats %+v", st)
	}
}

// The live classic rung joins a ≤6.16 event's pointer to its fence key through a bounded
// table of dma_fence_init records (probe/classic.go): the queue and run events come with
// both, but the done event's lookup can miss (its slot taken by a fence created since) and
// keep only the pointer. The job must still be found by that pointer. Before, a job whose
// events came with a key never registered its pointer, and the done event matched no job
// (x86 6.1 guest, classic phase: 3 of 72 jobs ended at their finished fence instead).
func TestSched61JoinedKeyThenPointerOnlyDone(t *testing.T) {
	const tid, ent, ptr = 100, 0xffff1000, 0xffff2000
	joined := func(e event.Event) event.Event {
		e.Fence, e.FenceWide = fk(41, 7), true
		return e
	}
	c := newCollector(testConfig())
	jobs := c.run(
		finit(10, tid, "drm_sched", fk(40, 7)),
		finit(11, tid, "drm_sched", fk(41, 7)),
		joined(queue61(12, tid, ent, ptr, 1001)),
		joined(run61(30, ent, ptr, 1001)),
		finit(33, 500, "amdgpu", fk(3, 900)),
		fsig(80, "amdgpu", fk(3, 900)),
		done61(81, ptr), // the join missed: pointer only
		fsig(82, "drm_sched", fk(41, 7)),
	)
	if len(jobs) != 1 {
		t.Fatalf("jobs: %s", dump(jobs))
	}
	wantPoint(t, jobs[0], PointFinished, 81, Measured, "drm_sched_process_job")
	if n := c.a.Stats().Orphans["job_done"]; n != 0 {
		t.Errorf("%d done events matched no job", n)
	}
}

// A job seen up to its run and no further (the input ended): its stages are those both of
// whose bounds were seen — scheduler_queue [queue, run] — and not a zero-length
// ring_emission (te fallen back to run) or dma_scheduling (ts fallen back to te) that no
// event bounds (docs/stages.md: a stage with no basis is left out).
func TestRunOnlyIncompleteJobHasNoFallbackStages(t *testing.T) {
	const tid, ent, ptr = 100, 0xffff1000, 0xffff2000
	jobs := newCollector(testConfig()).run(
		finit(10, tid, "drm_sched", fk(40, 7)),
		finit(11, tid, "drm_sched", fk(41, 7)),
		queue61(12, tid, ent, ptr, 1001),
		run61(30, ent, ptr, 1001),
	)
	if len(jobs) != 1 || jobs[0].Outcome == Completed {
		t.Fatalf("jobs: %s", dump(jobs))
	}
	var names []string
	for _, s := range jobs[0].Stages {
		names = append(names, s.Stage.String())
		if s.Stage == StageRingEmission || s.Stage == StageDMAScheduling || s.Stage == StageExecution {
			t.Errorf("stage %s [%d, %d] (%s): no event bounds it", s.Stage.String(), s.Start, s.End, s.Rule)
		}
	}
	if !slices.Contains(names, "scheduler_queue") {
		t.Errorf("stages %v: want scheduler_queue (queue → run, both seen)", names)
	}
}
