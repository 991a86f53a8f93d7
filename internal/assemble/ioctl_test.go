// The submitting thread: ioctl brackets, BO validation, ioctls without jobs, a job that
// finishes before its ioctl returns, trace context, and jobs without ioctl events.
package assemble

import (
	"testing"

	"github.com/ghostdriver/ghostdriver/internal/event"
)

func TestIoctlBracket(t *testing.T) {
	f1, f2, f3 := fk(0x50, 1), fk(0x50, 2), fk(0x60, 1)
	enter := ioctlEnter(100, 100)
	enter.TraceID, enter.SpanID, enter.CtxTier = [16]byte{1, 2, 3}, [8]byte{4, 5}, 1
	c := newCollector(testConfig())
	jobs := c.run(
		ioctlEnter(10, 100), ioctlExit(12, 100), // GEM_CREATE or the like: no job
		ioctlEnter(20, 100), boEnd(25, 100), queue617(30, 100, f1), ioctlExit(33, 100),
		run617(40, f1), done617(70, f1),
		// A tiny job that finishes before its ioctl returns: the exit still lands (held job).
		enter, queue617(104, 100, f2), run617(105, f2), done617(108, f2), ioctlExit(115, 100),
		// Another thread, no ioctl events (e.g. a kernel submission): no ioctl span.
		queue617(200, 300, f3), run617(210, f3), done617(220, f3),
	)
	j1 := find(t, jobs, f1)
	wantPoint(t, j1, PointIoctlEnter, 20, Measured, "sys_enter_ioctl")
	wantPoint(t, j1, PointBOValidEnd, 25, Measured, "amdgpu_cs_parser_bos")
	wantPoint(t, j1, PointIoctlExit, 33, Measured, "sys_exit_ioctl")
	wantStages(t, j1,
		"ioctl 20 33 measured sys_enter_ioctl→sys_exit_ioctl",
		"bo_validation 20 25 measured sys_enter_ioctl→amdgpu_cs_parser_bos",
		"fence_dependency 30 30 inferred drm_sched_job_queue→no_dependencies",
		"scheduler_queue 30 40 inferred no_dependencies→drm_sched_job_run",
		"ring_emission 40 40 inferred drm_sched_job_run→fallback_to_run",
		"dma_scheduling 40 40 inferred fallback_to_run→ring_serial",
		"execution 40 70 inferred ring_serial→fallback_to_finished",
		"fence_signal 70 70 inferred fallback_to_finished→drm_sched_job_done",
	)
	if j1.Start != T(20) || j1.PID != 100 || j1.Comm != "app" {
		t.Errorf("job 1: start %d pid %d comm %q", j1.Start, j1.PID, j1.Comm)
	}

	j2 := find(t, jobs, f2)
	wantPoint(t, j2, PointIoctlExit, 115, Measured, "sys_exit_ioctl")
	wantPoint(t, j2, PointBOValidEnd, 104, Inferred, "fallback_to_queued") // no validation hook in this ioctl
	if j2.TraceID != enter.TraceID || j2.SpanID != enter.SpanID || j2.CtxTier != 1 {
		t.Errorf("trace context not carried: %+v", j2)
	}
	if j2.End != T(108) {
		t.Errorf("job 2 ends at %d, want its finish", j2.End)
	}

	j3 := find(t, jobs, f3)
	wantUnknown(t, j3, PointIoctlEnter)
	wantUnknown(t, j3, PointIoctlExit)
	wantUnknown(t, j3, PointBOValidEnd)
	if _, ok := j3.Stage(StageIoctl); ok {
		t.Error("job 3 has an ioctl stage without ioctl events")
	}
	if _, ok := j3.Stage(StageBOValidation); ok {
		t.Error("job 3 has a bo_validation stage without ioctl events")
	}
	if j3.Start != T(200) {
		t.Errorf("job 3 starts at %d, want its queue", j3.Start)
	}
	if st := c.a.Stats(); st.IoctlsWithoutJob != 1 || st.Completed != 3 {
		t.Errorf("stats: %+v", st)
	}
}

// One ioctl queuing several jobs (amdgpu gang submit) brackets them all; the waits the
// thread did inside the ioctl before queueing become dependencies.
func TestIoctlMultipleJobsAndWaits(t *testing.T) {
	f1, f2, dep := fk(0x70, 1), fk(0x72, 1), fk(0x11, 9)
	wait := fenceEv(event.FenceWaitEnd, "dma_fence_wait_end", 13, 100, 1, "i915", dep)
	jobs := newCollector(testConfig()).run(
		ioctlEnter(10, 100), fsig(12, "i915", dep), wait,
		queue617(20, 100, f1), queue617(21, 100, f2), ioctlExit(25, 100),
		run617(30, f1), run617(31, f2), done617(50, f1), done617(60, f2),
	)
	for _, f := range []event.FenceKey{f1, f2} {
		j := find(t, jobs, f)
		wantPoint(t, j, PointIoctlEnter, 10, Measured, "sys_enter_ioctl")
		wantPoint(t, j, PointIoctlExit, 25, Measured, "sys_exit_ioctl")
	}
	j1 := find(t, jobs, f1)
	if len(j1.Deps) != 1 || j1.Deps[0].Fence != dep || j1.Deps[0].Signaled != T(12) || j1.Deps[0].Wait != DepWaitSignal {
		t.Errorf("deps %+v", j1.Deps)
	}
	// The wait ended before the queue: no fence_dependency time, the ioctl span holds it.
	wantPoint(t, j1, PointDepsResolved, 20, Inferred, "dependencies_signaled_before_queue")
	if len(find(t, jobs, f2).Deps) != 0 {
		t.Error("the wait belongs to the first job queued after it")
	}
}

// A job that finishes long before the ioctl that queued it returns (its thread preempted
// right after queueing: 53 ms on the arm64 guest) keeps its ioctl stage: the job waits past
// the reorder window for that exit instead of going out without it. A thread that never
// returns holds its job at most JobTimeout after the finish, then the job goes out without
// an ioctl stage and is counted.
func TestJobWaitsForItsSubmitIoctlExit(t *testing.T) {
	f1, f2 := fk(0x50, 1), fk(0x52, 1)
	cfg := testConfig()
	c := newCollector(cfg)
	far := (cfg.ReorderWindow.Microseconds()) * 3 // well past the window
	feed := func(evs ...event.Event) {
		for i := range evs {
			c.a.Consume(evs[i : i+1])
		}
	}
	feed(ioctlEnter(10, 100), queue617(20, 100, f1), run617(30, f1), done617(50, f1),
		// other threads keep the stream moving past the window
		ioctlEnter(far, 300), ioctlExit(far+1, 300), ioctlEnter(2*far, 300), ioctlExit(2*far+1, 300))
	if len(c.jobs) != 0 {
		t.Fatalf("job output at %d µs, before its submit ioctl returned", 2*far)
	}
	feed(ioctlExit(3*far, 100), ioctlEnter(4*far, 300), ioctlExit(4*far+1, 300))
	if len(c.jobs) != 1 {
		t.Fatalf("%d jobs output after the submit ioctl's exit, want 1", len(c.jobs))
	}
	j1 := find(t, c.jobs, f1)
	wantPoint(t, j1, PointIoctlExit, 3*far, Measured, "sys_exit_ioctl")
	if s, ok := j1.Stage(StageIoctl); !ok || s.End != T(3*far) {
		t.Fatalf("ioctl stage %+v %v, want it to end at the exit", s, ok)
	}

	// The thread never returns: out at finish + JobTimeout, without an ioctl stage.
	timeout := cfg.JobTimeout.Microseconds()
	feed(ioctlEnter(5*far, 101), queue617(5*far+10, 101, f2), run617(5*far+20, f2), done617(5*far+30, f2),
		ioctlEnter(5*far+timeout/2, 300), ioctlExit(5*far+timeout/2+1, 300))
	if len(c.jobs) != 1 {
		t.Fatalf("job 2 output before JobTimeout while its thread is still in the ioctl")
	}
	feed(ioctlEnter(5*far+30+timeout+far, 300), ioctlExit(5*far+30+timeout+far+1, 300))
	if len(c.jobs) != 2 {
		t.Fatalf("job 2 not output JobTimeout after its finish (%d jobs)", len(c.jobs))
	}
	j2 := find(t, c.jobs, f2)
	wantUnknown(t, j2, PointIoctlExit)
	if _, ok := j2.Stage(StageIoctl); ok {
		t.Error("job 2 has an ioctl stage without its exit")
	}
	if st := c.a.Stats(); st.IoctlExitsNotSeen != 1 || st.Completed != 2 {
		t.Errorf("stats: IoctlExitsNotSeen %d (want 1), completed %d", st.IoctlExitsNotSeen, st.Completed)
	}
}
