// i915, xe and msm: the per-driver mapping of drivers.go, standalone and (xe, msm) as
// enrichment of drm_sched jobs.
package assemble

import (
	"testing"

	"github.com/ghostdriver/ghostdriver/internal/event"
)

// i915 request events, as the decoder fills them: Fence {ctx, seqno}, Ring "class:instance".
func i915(k event.Kind, name string, t int64, tid uint32, f event.FenceKey) event.Event {
	return event.Event{Kind: k, Name: name, Time: T(t), TID: tid, PID: tid, Comm: "glxgears", CPU: 1,
		Driver: "i915", Device: "0", Ring: "0:0", Fence: f}
}

func TestI915(t *testing.T) {
	rq, preempted, guc := fk(44, 17313), fk(44, 17314), fk(45, 9)
	c := newCollector(testConfig())
	jobs := c.run(
		ioctlEnter(1, 383),
		i915(event.I915RequestAdd, "i915_request_add", 5, 383, rq), // add before queue on this kernel
		i915(event.I915RequestQueue, "i915_request_queue", 6, 383, rq),
		ioctlExit(8, 383),
		i915(event.I915RequestSubmit, "i915_request_submit", 10, 0, rq),
		i915(event.I915RequestIn, "i915_request_in", 12, 0, rq),
		i915(event.I915RequestOut, "i915_request_out", 40, 0, rq),
		fenceEv(event.FenceSignaled, "dma_fence_signaled", 41, 0, 0, "i915", rq), // out wins over it
		i915(event.I915RequestRetire, "i915_request_retire", 60, 0, rq),
		// Preempted: in/out twice — the first in and the last out bound execution.
		i915(event.I915RequestAdd, "i915_request_add", 70, 383, preempted),
		i915(event.I915RequestSubmit, "i915_request_submit", 71, 0, preempted),
		i915(event.I915RequestIn, "i915_request_in", 72, 0, preempted),
		i915(event.I915RequestOut, "i915_request_out", 75, 0, preempted),
		i915(event.I915RequestIn, "i915_request_in", 80, 0, preempted),
		i915(event.I915RequestOut, "i915_request_out", 90, 0, preempted),
		i915(event.I915RequestRetire, "i915_request_retire", 95, 0, preempted),
		// GuC submission: no in/out; the request fence's signal is th, ts is ring_serial.
		i915(event.I915RequestAdd, "i915_request_add", 100, 383, guc),
		i915(event.I915RequestSubmit, "i915_request_submit", 101, 0, guc),
		fenceEv(event.FenceSignaled, "dma_fence_signaled", 130, 0, 0, "i915", guc),
		i915(event.I915RequestRetire, "i915_request_retire", 140, 0, guc),
	)
	j := find(t, jobs, rq)
	if j.Outcome != Completed || j.Driver != "i915" || j.Ring != "0:0" || j.TID != 383 {
		t.Errorf("request: %+v", j)
	}
	wantPoint(t, j, PointQueued, 5, Measured, "i915_request_add")
	wantStages(t, j,
		"ioctl 1 8 measured sys_enter_ioctl→sys_exit_ioctl",
		"bo_validation 1 5 inferred sys_enter_ioctl→fallback_to_queued",
		"fence_dependency 5 5 inferred i915_request_add→no_dependencies",
		"scheduler_queue 5 10 inferred no_dependencies→i915_request_submit",
		"ring_emission 10 10 measured i915_request_submit→i915_request_submit",
		"dma_scheduling 10 12 measured i915_request_submit→i915_request_in",
		"execution 12 40 measured i915_request_in→i915_request_out",
		"fence_signal 40 60 measured i915_request_out→i915_request_retire",
	)
	jp := find(t, jobs, preempted)
	wantPoint(t, jp, PointHWStart, 72, Measured, "i915_request_in")
	wantPoint(t, jp, PointHWDone, 90, Measured, "i915_request_out")
	jg := find(t, jobs, guc)
	wantPoint(t, jg, PointHWStart, 101, Inferred, "ring_serial")
	wantPoint(t, jg, PointHWDone, 130, Measured, "dma_fence_signaled")
	if st := c.a.Stats(); st.Completed != 3 || len(st.Orphans) != 0 {
		t.Errorf("stats %+v", st)
	}
}

// xe events, as the decoder fills them: the job's "fence=%p" in FencePtr and JobID,
// hardware fences with {ctx, seqno} and their pointer.
func xe(k event.Kind, name string, t int64, tid uint32, ptr uint64, f event.FenceKey) event.Event {
	return event.Event{Kind: k, Name: name, Time: T(t), TID: tid, CPU: 2, Driver: "xe", Device: "0000:00:02.0",
		FencePtr: ptr, JobID: ptr, Fence: f}
}

func TestXeWithDrmSched(t *testing.T) {
	f := fk(0x1_0000_0040, 3)
	const ptr = 0xffff8881
	hw := fk(0x1_2345, 77)
	c := newCollector(testConfig())
	jobs := c.run(
		ioctlEnter(1, 100),
		xe(event.XeSchedJobCreate, "xe_sched_job_create", 3, 100, ptr, fk(0, 77)),
		queue617(5, 100, f), ioctlExit(7, 100),
		run617(10, f),
		xe(event.XeSchedJobRun, "xe_sched_job_run", 12, 500, ptr, fk(0, 77)),
		xe(event.XeHwFenceSignal, "xe_hw_fence_signal", 50, 0, ptr, hw),
		done617(52, f),
		xe(event.XeSchedJobFree, "xe_sched_job_free", 60, 0, ptr, fk(0, 77)),
	)
	if len(jobs) != 1 {
		t.Fatalf("xe create and the drm_sched job not merged: %s", dump(jobs))
	}
	j := jobs[0]
	if j.Outcome != Completed || j.Finished != f || j.Driver != "xe" || j.HWFence != hw {
		t.Errorf("job %+v", j)
	}
	wantPoint(t, j, PointQueued, 5, Measured, "drm_sched_job_queue")
	wantPoint(t, j, PointIoctlEnter, 1, Measured, "sys_enter_ioctl")
	wantPoint(t, j, PointEmitted, 12, Measured, "xe_sched_job_run")
	wantPoint(t, j, PointHWDone, 50, Measured, "xe_hw_fence_signal")
	wantPoint(t, j, PointFinished, 52, Measured, "drm_sched_job_done")
	if st := c.a.Stats(); st.Completed != 1 || st.Pending != 0 || len(st.Orphans) != 0 || len(c.a.byID) != 0 {
		t.Errorf("stats %+v", st)
	}
}

func TestXeStandalone(t *testing.T) {
	const ptr = 0xffff9000
	hw := fk(0x1_2345, 78)
	jobs := newCollector(testConfig()).run(
		ioctlEnter(1, 100),
		xe(event.XeSchedJobCreate, "xe_sched_job_create", 3, 100, ptr, fk(0, 78)),
		ioctlExit(6, 100),
		xe(event.XeSchedJobRun, "xe_sched_job_run", 10, 500, ptr, fk(0, 78)),
		xe(event.XeHwFenceSignal, "xe_hw_fence_signal", 40, 0, ptr, hw),
	)
	if len(jobs) != 1 {
		t.Fatalf("jobs %s", dump(jobs))
	}
	j := jobs[0]
	if j.Outcome != Completed || j.Driver != "xe" || j.JobID != ptr || j.HWFence != hw {
		t.Errorf("job %+v", j)
	}
	wantStages(t, j,
		"ioctl 1 6 measured sys_enter_ioctl→sys_exit_ioctl",
		"bo_validation 1 3 inferred sys_enter_ioctl→fallback_to_queued",
		"fence_dependency 3 3 inferred xe_sched_job_create→no_dependencies",
		"scheduler_queue 3 10 inferred no_dependencies→xe_sched_job_run",
		"ring_emission 10 10 inferred xe_sched_job_run→fallback_to_run",
		"dma_scheduling 10 10 inferred fallback_to_run→ring_serial",
		"execution 10 40 inferred ring_serial→xe_hw_fence_signal",
		"fence_signal 40 40 inferred xe_hw_fence_signal→xe_hw_fence_as_finished",
	)
}

// msm events, as the decoder fills them: JobID = submit id, Ring = ring number, Fence.Seqno.
func msm(k event.Kind, name string, t int64, tid uint32, id, seq uint64) event.Event {
	return event.Event{Kind: k, Name: name, Time: T(t), TID: tid, CPU: 1, Driver: "msm", Ring: "0",
		JobID: id, Fence: event.FenceKey{Seqno: seq}}
}

func TestMsmStandalone(t *testing.T) {
	c := newCollector(testConfig())
	jobs := c.run(
		ioctlEnter(1, 700),
		msm(event.MsmSubmit, "msm_gpu_submit", 4, 700, 12, 0),
		msm(event.MsmSubmitFlush, "msm_gpu_submit_flush", 6, 700, 12, 301),
		ioctlExit(8, 700),
		msm(event.MsmSubmit, "msm_gpu_submit", 10, 700, 13, 0),
		msm(event.MsmSubmitFlush, "msm_gpu_submit_flush", 11, 700, 13, 302),
		msm(event.MsmSubmitRetired, "msm_gpu_submit_retired", 50, 0, 12, 301),
		msm(event.MsmSubmitRetired, "msm_gpu_submit_retired", 70, 0, 13, 302),
	)
	j := findID(t, jobs, 12)
	if j.Outcome != Completed || j.Driver != "msm" || j.Ring != "0" {
		t.Errorf("job %+v", j)
	}
	wantStages(t, j,
		"ioctl 1 8 measured sys_enter_ioctl→sys_exit_ioctl",
		"bo_validation 1 4 inferred sys_enter_ioctl→fallback_to_queued",
		"fence_dependency 4 4 inferred msm_gpu_submit→no_dependencies",
		"scheduler_queue 4 6 inferred no_dependencies→msm_gpu_submit_flush",
		"ring_emission 6 6 measured msm_gpu_submit_flush→msm_gpu_submit_flush",
		"dma_scheduling 6 6 inferred msm_gpu_submit_flush→ring_serial",
		"execution 6 50 inferred ring_serial→fallback_to_finished",
		"fence_signal 50 50 inferred fallback_to_finished→msm_gpu_submit_retired",
	)
	// The second submit queued behind the first on ring 0.
	wantPoint(t, findID(t, jobs, 13), PointHWStart, 50, Inferred, "ring_serial")
	if st := c.a.Stats(); st.Completed != 2 {
		t.Errorf("stats %+v", st)
	}
}

func TestMsmWithDrmSched(t *testing.T) {
	const ent, ptr = 0xe, 0xf
	sub := msm(event.MsmSubmit, "msm_gpu_submit", 21, 500, 12, 0)
	flush := msm(event.MsmSubmitFlush, "msm_gpu_submit_flush", 23, 500, 12, 301)
	sub.CPU, flush.CPU = 2, 2
	c := newCollector(testConfig())
	jobs := c.run(
		queue61(10, 700, ent, ptr, 5), run61(20, ent, ptr, 5), sub, flush,
		done61(50, ptr),
		msm(event.MsmSubmitRetired, "msm_gpu_submit_retired", 55, 0, 12, 301),
	)
	if len(jobs) != 1 {
		t.Fatalf("jobs %s", dump(jobs))
	}
	j := jobs[0]
	wantPoint(t, j, PointEmitted, 23, Measured, "msm_gpu_submit_flush")
	wantPoint(t, j, PointFinished, 50, Measured, "drm_sched_process_job")
	if j.Outcome != Completed || len(c.a.Stats().Orphans) != 0 {
		t.Errorf("job %+v stats %+v", j, c.a.Stats())
	}
}

// The other order on the submitting thread (queue traced before create), and the
// hardware fence announced by xe_hw_fence_create, found by its key when it signals.
func TestXeQueueBeforeCreate(t *testing.T) {
	f := fk(0x1_0000_0050, 1)
	const ptr = 0xffff8882
	hw := fk(0x1_2345, 90)
	create := xe(event.XeHwFenceCreate, "xe_hw_fence_create", 4, 100, ptr, hw)
	signal := xe(event.XeHwFenceSignal, "xe_hw_fence_signal", 50, 0, 0xdead, hw) // pointer not shared
	c := newCollector(testConfig())
	jobs := c.run(
		ioctlEnter(1, 100), queue617(2, 100, f),
		xe(event.XeSchedJobCreate, "xe_sched_job_create", 3, 100, ptr, fk(0, 90)),
		create, ioctlExit(7, 100),
		run617(10, f), signal, done617(52, f),
	)
	if len(jobs) != 1 || jobs[0].Outcome != Completed || jobs[0].HWFence != hw {
		t.Fatalf("jobs %s", dump(jobs))
	}
	wantPoint(t, jobs[0], PointHWDone, 50, Measured, "xe_hw_fence_signal")
	if st := c.a.Stats(); len(st.Orphans) != 0 {
		t.Errorf("stats %+v", st)
	}
}
