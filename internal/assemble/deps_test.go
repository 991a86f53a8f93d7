// Dependencies: across processes (span links), on scheduled and hardware fences, signalled
// before the queue, after the run, never seen; and orphan events.
package assemble

import (
	"testing"
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
	jc := find(t, jobs, comp)
	if len(jc.Deps) != 1 || jc.Deps[0] != (Dependency{Fence: game, Signaled: T(41), Job: game, JobKnown: true}) {
		t.Errorf("comp deps %+v", jc.Deps)
	}
	wantPoint(t, jc, PointDepsResolved, 41, Measured, "drm_sched_job_done")

	jb := find(t, jobs, blit)
	if len(jb.Deps) != 1 || jb.Deps[0] != (Dependency{Fence: fk(0x1ff, 1), Signaled: T(46), Job: comp, JobKnown: true}) {
		t.Errorf("blit deps %+v", jb.Deps)
	}
	wantPoint(t, jb, PointDepsResolved, 46, Measured, "dma_fence_signaled")

	jv := find(t, jobs, video)
	if len(jv.Deps) != 2 || jv.Deps[0] != (Dependency{Fence: hwGame, Signaled: T(40), Job: game, JobKnown: true}) ||
		jv.Deps[1] != (Dependency{Fence: unknown}) {
		t.Errorf("video deps %+v", jv.Deps)
	}
	wantPoint(t, jv, PointDepsResolved, 40, Measured, "dma_fence_signaled")

	jl := find(t, jobs, late)
	if len(jl.Deps) != 1 || jl.Deps[0] != (Dependency{Fence: game, Signaled: T(41), Job: game, JobKnown: true}) {
		t.Errorf("late deps %+v (link to an output job via the owners table)", jl.Deps)
	}
	wantPoint(t, jl, PointDepsResolved, 201, Inferred, "dependencies_signaled_before_queue")
	if st := c.a.Stats(); st.Completed != 5 || len(c.a.waiters) != 0 {
		t.Errorf("stats %+v, waiters %d", st, len(c.a.waiters))
	}
}

func TestDependencyRules(t *testing.T) {
	unseen, afterRun := fk(0x10, 1), fk(0x20, 1)
	dep1, dep2 := fk(0x31, 1), fk(0x32, 1)
	jobs := newCollector(testConfig()).run(
		// A dependency whose signal is never seen: the job ran, so it was resolved by tr.
		addDep617(1, 100, unseen, fk(0x9, 9)), queue617(2, 100, unseen), run617(5, unseen), done617(9, unseen),
		// A same-ring dependency: drm_sched waits only for its scheduled fence, so the
		// finished fence may signal after this job has run.
		addDep617(20, 100, afterRun, fk(0x8, 8)), queue617(21, 100, afterRun), run617(25, afterRun),
		fsig(27, "drm_sched", fk(0x8, 8)), done617(30, afterRun),
		// Two dependencies: td is the last signal.
		addDep617(40, 100, dep2, fk(0xa, 1)), addDep617(40, 100, dep2, fk(0xb, 1)), queue617(41, 100, dep2),
		fsig(43, "x", fk(0xb, 1)), fsig(47, "x", fk(0xa, 1)), run617(48, dep2), done617(50, dep2),
		queue617(60, 100, dep1), run617(61, dep1), done617(62, dep1),
	)
	wantPoint(t, find(t, jobs, unseen), PointDepsResolved, 2, Inferred, "dependency_signal_unseen")
	wantPoint(t, find(t, jobs, afterRun), PointDepsResolved, 25, Inferred, "clamped_to_run")
	wantPoint(t, find(t, jobs, dep2), PointDepsResolved, 47, Measured, "dma_fence_signaled")
	wantPoint(t, find(t, jobs, dep1), PointDepsResolved, 60, Inferred, "no_dependencies")
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
