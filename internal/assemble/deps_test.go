// Dependencies: across processes (span links), on scheduled and hardware fences, signalled
// before the queue, after the run, never seen; and orphan events.
package assemble

import (
	"testing"

	"github.com/ghostdriver/ghostdriver/internal/event"
)

func TestDependenciesAcrossProcesses(t *testing.T) {
	game := fk(0x100, 1)       // pid 100's render job
	comp := fk(0x200, 1)       // pid 200's compositor job, waits for the game's finished fence
	blit := fk(0x300, 1)       // pid 300, waits for the compositor's *scheduled* fence
	video := fk(0x400, 1)      // pid 400, waits for the game's hardware fence and an unknown fence
	late := fk(0x500, 1)       // pid 500, depends on the game after the game was output
	hwGame := fk(0x7, 42)      // the game's hardware fence
	unknown := fk(0x9999, 123) // never signals in the input
	c := newCollector(testConfig())
	jobs := c.run(
		queue617(10, 100, game), run617(12, game), finit(13, 500, "amdgpu", hwGame),
		addDep617(14, 200, comp, game), queue617(15, 200, comp),
		addDep617(16, 300, blit, fk(0x1ff, 1)), queue617(17, 300, blit), // 0x1ff = comp's scheduled context
		addDep617(18, 400, video, hwGame), addDep617(18, 400, video, unknown), queue617(19, 400, video),
		fsig(40, "amdgpu", hwGame), done617(41, game),
		run617(45, comp), fsig(46, "drm_sched", fk(0x1ff, 1)), // comp scheduled: blit may run
		run617(48, blit), run617(50, video),
		done617(60, comp), done617(70, blit), done617(80, video),
		addDep617(200, 500, late, game), queue617(201, 500, late), run617(202, late), done617(210, late),
	)
	// Every job runs on one scheduler (gfx_0.0.0 of one device), each process its own entity.

	// The game's finished fence, on the same scheduler: drm_sched waits only until the
	// game is scheduled, right after its run_job (its hardware fence was created in it at
	// 13), before comp was queued. The game's done event reports its finished fence (41).
	jc := find(t, jobs, comp)
	wantDep(t, jc, 0, Dependency{Fence: game, Signaled: T(41), Job: game, JobKnown: true, Wait: DepWaitScheduled, Until: T(13)})
	wantPoint(t, jc, PointDepsResolved, 15, Inferred, "dependencies_signaled_before_queue")

	// comp's scheduled fence itself: the wait ends at its signal.
	jb := find(t, jobs, blit)
	wantDep(t, jb, 0, Dependency{Fence: fk(0x1ff, 1), Signaled: T(46), Job: comp, JobKnown: true, Wait: DepWaitScheduled, Until: T(46)})
	wantPoint(t, jb, PointDepsResolved, 46, Measured, "dma_fence_signaled(scheduled)")

	// A hardware fence is no scheduler fence: waited for until it signals (40). The
	// unknown fence never signals in the input, so 40 is only what was seen: inferred.
	jv := find(t, jobs, video)
	wantDep(t, jv, 0, Dependency{Fence: hwGame, Signaled: T(40), Job: game, JobKnown: true, Wait: DepWaitSignal, Until: T(40)})
	wantDep(t, jv, 1, Dependency{Fence: unknown, Wait: DepWaitSignal})
	wantPoint(t, jv, PointDepsResolved, 40, Inferred, "dependency_signal_partly_unseen")

	jl := find(t, jobs, late)
	wantDep(t, jl, 0, Dependency{Fence: game, Signaled: T(41), Job: game, JobKnown: true, Wait: DepWaitScheduled, Until: T(13)})
	wantPoint(t, jl, PointDepsResolved, 201, Inferred, "dependencies_signaled_before_queue")
	if st := c.a.Stats(); st.Completed != 5 || len(c.a.waiters) != 0 {
		t.Errorf("stats %+v, waiters %d", st, len(c.a.waiters))
	}
}

// wantDep compares dependency i of j on the fields the rules decide.
func wantDep(t *testing.T, j *Job, i int, want Dependency) {
	t.Helper()
	if i >= len(j.Deps) {
		t.Errorf("job %v: %d dependencies, want #%d %+v", j.Finished, len(j.Deps), i, want)
		return
	}
	d := j.Deps[i]
	if d.Fence != want.Fence || d.Signaled != want.Signaled || d.Job != want.Job || d.JobKnown != want.JobKnown ||
		d.Wait != want.Wait || d.Until != want.Until {
		t.Errorf("job %v dependency %d:\n got %+v\nwant %+v", j.Finished, i, d, want)
	}
}

// on moves a scheduler event to another ring of the same device.
func on(ring string, e event.Event) event.Event {
	e.Ring = ring
	return e
}

// drm_sched_entity_add_dependency_cb, as the kernel source reads (sched_entity.c, 5.x–7.x):
//
//	if (fence->context == entity->fence_context || fence->context == entity->fence_context + 1)
//		return false;                 /* own entity: ignored */
//	s_fence = to_drm_sched_fence(fence);
//	if (!fence->error && s_fence && s_fence->sched == sched && !DONT_PIPELINE)
//		wait for &s_fence->scheduled; /* same scheduler: until scheduled */
//	else wait for the fence itself;   /* (6.17+: trace_drm_sched_job_unschedulable) */
//
// Each case below states what the kernel waited for and when that ended, from the events.
func TestDrmSchedDependencyRules(t *testing.T) {
	const ring1 = "comp_1.0.0"
	// Entity A on gfx: scheduled context 0x10, finished 0x11. Entity B on gfx: 0x20/0x21.
	// Entity C on ring1 (another scheduler of the same device): 0x30/0x31. Entity D on gfx.
	a1, a2 := fk(0x11, 1), fk(0x11, 2)
	b1 := fk(0x21, 1)
	c1, c2 := fk(0x31, 1), fk(0x31, 2)
	d1, e1 := fk(0x41, 1), fk(0x51, 1)
	vgem := fk(0x99, 5) // a fence of no scheduler (a vgem/sync_file fence)
	c := newCollector(testConfig())
	jobs := c.run(
		queue617(1, 100, a1),
		addDep617(2, 100, a2, a1), queue617(3, 100, a2),
		addDep617(4, 200, b1, a1), queue617(5, 200, b1),
		on(ring1, addDep617(6, 300, c1, a1)), on(ring1, queue617(7, 300, c1)),
		on(ring1, addDep617(8, 300, c2, b1)), on(ring1, queue617(9, 300, c2)),
		addDep617(8, 400, d1, vgem), queue617(9, 400, d1),
		addDep617(8, 500, e1, a1), queue617(9, 500, e1),
		run617(10, a1),
		fenceEv(event.FenceSignaled, "dma_fence_signaled", 12, 500, 2, "drm_sched", fk(0x10, 1)), // a1 scheduled
		// a2 and b1 wait for ring credits (credit limit 1); d1 for vgem; e1 is reported
		// unschedulable on a1: a fence error or DONT_PIPELINE, so it waits for a1's end.
		event.Event{Kind: event.JobDependency, Name: "drm_sched_job_unschedulable", Time: T(13), CPU: 2,
			Fence: e1, FenceWide: true, Dep: a1, DepWide: true},
		fsig(60, "vgem", vgem),
		done617(100, a1), fsig(101, "drm_sched", a1),
		on(ring1, run617(103, c1)),
		run617(105, a2), run617(106, b1), // entity order and credits: after a1 is done
		done617(140, a2), done617(150, b1), // b1's finished fence signal is not traced
		on(ring1, done617(151, c1)),
		on(ring1, run617(152, c2)), on(ring1, done617(170, c2)),
		run617(155, d1), done617(175, d1),
		run617(180, e1), done617(190, e1),
	)
	// a2 depends on a1, its own entity's previous job: nothing is waited for, a2's
	// 102 µs before it runs are the scheduler queue (entity order, credits).
	ja2 := find(t, jobs, a2)
	wantDep(t, ja2, 0, Dependency{Fence: a1, Signaled: T(101), Job: a1, JobKnown: true, Wait: DepWaitNone})
	wantPoint(t, ja2, PointDepsResolved, 3, Inferred, "own_entity_dependencies")
	wantStages(t, ja2,
		"fence_dependency 3 3 inferred drm_sched_job_queue→own_entity_dependencies",
		"scheduler_queue 3 105 inferred own_entity_dependencies→drm_sched_job_run",
		"ring_emission 105 105 inferred drm_sched_job_run→fallback_to_run",
		"dma_scheduling 105 105 inferred fallback_to_run→ring_serial",
		"execution 105 140 inferred ring_serial→fallback_to_finished",
		"fence_signal 140 140 inferred fallback_to_finished→drm_sched_job_done",
	)
	// b1 (another entity, same scheduler) waits until a1 is scheduled: 12.
	jb1 := find(t, jobs, b1)
	wantDep(t, jb1, 0, Dependency{Fence: a1, Signaled: T(101), Job: a1, JobKnown: true, Wait: DepWaitScheduled, Until: T(12)})
	wantPoint(t, jb1, PointDepsResolved, 12, Measured, "dma_fence_signaled(scheduled)")
	// c1, on another scheduler, waits for a1's finished fence itself: its dma_fence_signaled
	// (101), not the done event a µs before it.
	jc1 := find(t, jobs, c1)
	wantDep(t, jc1, 0, Dependency{Fence: a1, Signaled: T(101), Job: a1, JobKnown: true, Wait: DepWaitSignal, Until: T(101)})
	wantPoint(t, jc1, PointDepsResolved, 101, Measured, "dma_fence_signaled")
	// c2 waits for b1's finished fence, whose signal is not traced: b1's done event stands in.
	jc2 := find(t, jobs, c2)
	wantDep(t, jc2, 0, Dependency{Fence: b1, Signaled: T(150), Job: b1, JobKnown: true, Wait: DepWaitSignal, Until: T(150)})
	wantPoint(t, jc2, PointDepsResolved, 150, Inferred, "dependency_done")
	// d1 waits for the vgem fence until it signals.
	wantPoint(t, find(t, jobs, d1), PointDepsResolved, 60, Measured, "dma_fence_signaled")
	// e1: the scheduler said it waits for a1 to signal.
	je1 := find(t, jobs, e1)
	wantDep(t, je1, 0, Dependency{Fence: a1, Signaled: T(101), Job: a1, JobKnown: true, Wait: DepWaitSignal, Until: T(101)})
	wantPoint(t, je1, PointDepsResolved, 101, Measured, "dma_fence_signaled")
	if st := c.a.Stats(); st.Completed != 7 || st.DepsAfterRun != 0 || len(c.a.waiters) != 0 {
		t.Errorf("stats %+v, waiters %d", st, len(c.a.waiters))
	}
}

// ≤6.16 text prints pointers: the job's own entity is found through the fence keys
// dma_fence_init gives the jobs of the submitting thread, or through the entity pointer.
func TestDrmSchedDependencyRules61(t *testing.T) {
	const tid, ent, other = 100, 0xffff1000, 0xffff3000
	sched := func(t int64, tid uint32, f event.FenceKey, tl string) event.Event {
		e := finit(t, tid, "drm_sched", f)
		e.Timeline = tl
		return e
	}
	jobs := newCollector(testConfig()).run(
		// p1, p2 of entity ent (contexts 40/41), with their fences initialised by the thread.
		sched(1, tid, fk(40, 1), "gfx_0.0.0"), sched(2, tid, fk(41, 1), "gfx_0.0.0"), queue61(3, tid, ent, 0xa1, 1),
		sched(4, tid, fk(40, 2), "gfx_0.0.0"), sched(5, tid, fk(41, 2), "gfx_0.0.0"), queue61(6, tid, ent, 0xa2, 2),
		// p3 of the same entity, its fence creation not traced: only the entity pointer.
		queue61(7, 101, ent, 0xa3, 3),
		// q1, another entity on the same ring, knows its keys.
		sched(8, 200, fk(50, 1), "gfx_0.0.0"), sched(9, 200, fk(51, 1), "gfx_0.0.0"), queue61(10, 200, other, 0xb1, 11),
		run61(20, ent, 0xa1, 1),
		fenceEv(event.FenceSignaled, "dma_fence_signaled", 22, 500, 2, "drm_sched", fk(40, 1)), // p1 scheduled
		// The worker pops p2, p3 and q1 (wait_dep is traced at pop time, on the worker).
		waitDep61(60, 2, fk(41, 1)), waitDep61(61, 3, fk(41, 2)), waitDep61(62, 11, fk(41, 1)),
		done61(70, 0xa1), fsig(71, "drm_sched", fk(41, 1)),
		run61(72, ent, 0xa2, 2), done61(80, 0xa2), fsig(81, "drm_sched", fk(41, 2)),
		run61(82, ent, 0xa3, 3), done61(90, 0xa3),
		run61(91, other, 0xb1, 11), done61(95, 0xb1),
	)
	// p2 on p1, p3 on p2: own entity, by fence context (p2) and by entity pointer (p3).
	wantPoint(t, findID(t, jobs, 2), PointDepsResolved, 6, Inferred, "own_entity_dependencies")
	wantPoint(t, findID(t, jobs, 3), PointDepsResolved, 7, Inferred, "own_entity_dependencies")
	// q1 on p1, same scheduler (the ring both print): until p1 is scheduled.
	wantPoint(t, findID(t, jobs, 11), PointDepsResolved, 22, Measured, "dma_fence_signaled(scheduled)")
}

// A scheduler fence whose job the input never showed: its dma_fence_init names the
// scheduler (timeline) and the pair initialised on one thread tells the scheduled half.
func TestDependencyOnUnseenSchedulerJob(t *testing.T) {
	j := fk(0x61, 1)
	init := func(t int64, f event.FenceKey) event.Event {
		e := finit(t, 300, "drm_sched", f)
		e.Timeline = "gfx_0.0.0"
		return e
	}
	jobs := newCollector(testConfig()).run(
		init(1, fk(0x50, 1)), init(2, fk(0x51, 1)), // another process's job, queue event not traced
		addDep617(3, 100, j, fk(0x51, 1)), queue617(4, 100, j),
		fenceEv(event.FenceSignaled, "dma_fence_signaled", 30, 500, 2, "drm_sched", fk(0x50, 1)),
		run617(31, j), fsig(50, "drm_sched", fk(0x51, 1)), done617(60, j),
	)
	wantPoint(t, find(t, jobs, j), PointDepsResolved, 30, Measured, "dma_fence_signaled(scheduled)")
}

func TestDependencyRules(t *testing.T) {
	unseen, afterRun := fk(0x10, 1), fk(0x20, 1)
	dep1, dep2 := fk(0x31, 1), fk(0x32, 1)
	c := newCollector(testConfig())
	jobs := c.run(
		// A dependency whose signal is never seen: the job ran, so it was resolved by tr.
		addDep617(1, 100, unseen, fk(0x9, 9)), queue617(2, 100, unseen), run617(5, unseen), done617(9, unseen),
		// A fence of no known scheduler that signals after the job ran: by the rules the
		// job could not have run; td is clamped to tr and counted.
		addDep617(20, 100, afterRun, fk(0x8, 8)), queue617(21, 100, afterRun), run617(25, afterRun),
		fsig(27, "x", fk(0x8, 8)), done617(30, afterRun),
		// Two dependencies: td is the last signal.
		addDep617(40, 100, dep2, fk(0xa, 1)), addDep617(40, 100, dep2, fk(0xb, 1)), queue617(41, 100, dep2),
		fsig(43, "x", fk(0xb, 1)), fsig(47, "x", fk(0xa, 1)), run617(48, dep2), done617(50, dep2),
		queue617(60, 100, dep1), run617(61, dep1), done617(62, dep1),
	)
	wantPoint(t, find(t, jobs, unseen), PointDepsResolved, 2, Inferred, "dependency_signal_unseen")
	wantPoint(t, find(t, jobs, afterRun), PointDepsResolved, 25, Inferred, "clamped_to_run")
	wantPoint(t, find(t, jobs, dep2), PointDepsResolved, 47, Measured, "dma_fence_signaled")
	wantPoint(t, find(t, jobs, dep1), PointDepsResolved, 60, Inferred, "no_dependencies")
	if st := c.a.Stats(); st.DepsAfterRun != 1 {
		t.Errorf("DepsAfterRun %d, want 1", st.DepsAfterRun)
	}
}

func TestOrphans(t *testing.T) {
	c := newCollector(testConfig())
	jobs := c.run(
		done617(10, fk(0x1, 1)),           // a job that began before the capture
		done61(11, 0xdead),                // same, pointer form
		fsig(12, "amdgpu", fk(0, 77)),     // a hardware fence nobody linked
		fsig(13, "drm_sched", fk(5, 5)),   // a finished fence of an unknown job
		waitDep61(14, 77, fk(0x2, 2)),     // the dependency of a job we do not know
		fsig(15, "drm_sched", fk(0x9, 9)), // …
	)
	if len(jobs) != 0 {
		t.Fatalf("orphans made jobs: %s", dump(jobs))
	}
	st := c.a.Stats()
	if st.Orphans["job_done"] != 2 || st.Orphans["fence_signaled"] != 3 || st.Orphans["job_dependency"] != 1 {
		t.Errorf("orphans %v", st.Orphans)
	}
}

// The live source's classic-tracepoint rung on ≤6.16 joins the printed pointers to fence
// keys before the assembler sees them, but drm_sched_job_wait_dep names its job only by
// (ring, id), and two rings number their jobs alike: the dependency must reach the job of
// its own ring.
func TestWaitDepByRingAndIDWithJoinedKeys(t *testing.T) {
	joined := func(e event.Event, ring string, f event.FenceKey) event.Event {
		e.Ring, e.Fence, e.FenceWide = ring, f, true
		return e
	}
	r0, r1 := fk(0x21, 5), fk(0x31, 5) // job id 5 on each ring
	dep := fk(0x41, 9)                 // a fence of neither ring's job
	jobs := newCollector(testConfig()).run(
		joined(queue61(1, 100, 0xe0, 0xa0, 5), "vgpu-ring0", r0),
		joined(queue61(2, 200, 0xe1, 0xa1, 5), "vgpu-ring1", r1),
		on("vgpu-ring0", waitDep61(3, 5, dep)),
		fsig(10, "vgem", dep),
		joined(run61(11, 0xe0, 0xa0, 5), "vgpu-ring0", r0), joined(run61(12, 0xe1, 0xa1, 5), "vgpu-ring1", r1),
		joined(done61(20, 0xa0), "", r0), joined(done61(21, 0xa1), "", r1),
	)
	j0, j1 := find(t, jobs, r0), find(t, jobs, r1)
	wantDep(t, j0, 0, Dependency{Fence: dep, Signaled: T(10), Wait: DepWaitSignal, Until: T(10)})
	wantPoint(t, j0, PointDepsResolved, 10, Measured, "dma_fence_signaled")
	if len(j1.Deps) != 0 {
		t.Errorf("ring 1's job 5 got ring 0's dependency: %+v", j1.Deps)
	}
}
