// v3d and old i915 captures, end to end: lines in the kernels' own formats (tracefs
// text), decoded by the ftrace decoder and assembled. The expected bounds follow from
// what the driver does between the events (v3d_sched.c, v3d_irq.c; i915_gem.c,
// i915_irq.c of 3.x), worked out in the comments; T(0) is 1.000000 s.

package assemble

import (
	"testing"

	"github.com/ghostdriver/ghostdriver/internal/event"
)

// v3d's own events only (a 6.8+ kernel: drm_sched workers are kworkers, the interrupt
// lands on whatever runs). Seqnos are per queue: bin and render both have a seqno 7.
//
// The kernel, per job: run_job creates the queue's hardware fence, traces v3d_submit_*
// with its seqno and then writes the register that starts the job (ts = the submit
// event); one job per queue is on the hardware; the handler of the queue's interrupt
// traces v3d_*_irq with the running job's seqno and then signals that fence (th = the
// IRQ event), whose callback signals drm_sched's finished fence in the same handler
// (tf = th, nothing of v3d's comes later). The cache-clean job runs on the CPU between
// v3d_cache_clean_begin and _end inside its run_job.
const v3dOnlyCapture = `
# tracer: nop
 kworker/u8:1-77      [001] .....     1.000100: v3d_submit_cl: dev=0, BCL, seqno=7, 0x00a41000..0x00a41240
       <idle>-0       [000] d.h1.     1.000400: v3d_bcl_irq: dev=0, seqno=7
 kworker/u8:2-78      [002] .....     1.000450: v3d_submit_cl: dev=0, RCL, seqno=7, 0x00b00000..0x00b00c80
# bin 8 runs while render 7 is on the hardware: another queue.
 kworker/u8:1-77      [001] .....     1.000500: v3d_submit_cl: dev=0, BCL, seqno=8, 0x00a42000..0x00a42240
       <idle>-0       [000] d.h1.     1.000700: v3d_bcl_irq: dev=0, seqno=8
      glmark2-900     [003] d.h1.     1.001450: v3d_rcl_irq: dev=0, seqno=7
 kworker/u8:3-79      [003] .....     1.002000: v3d_submit_tfu: dev=0, seqno=3
       <idle>-0       [000] d.h1.     1.002050: v3d_tfu_irq: dev=0, seqno=3
 kworker/u8:1-77      [001] .....     1.003000: v3d_submit_csd: dev=0, seqno=2
       <idle>-0       [000] d.h1.     1.003800: v3d_csd_irq: dev=0, seqno=2
 kworker/u8:2-78      [002] .....     1.003850: v3d_cache_clean_begin: dev=0
 kworker/u8:2-78      [002] .....     1.003870: v3d_cache_clean_end: dev=0
# bin 9 is run and the input ends before its interrupt.
 kworker/u8:1-77      [001] .....     1.004000: v3d_submit_cl: dev=0, BCL, seqno=9, 0x00a43000..0x00a43240
`

func v3dJob(t *testing.T, jobs []*Job, ring string, ts int64) *Job {
	t.Helper()
	for _, j := range jobs {
		if j.Ring == ring && j.Points[PointHWStart].Time == T(ts) {
			return j
		}
	}
	t.Fatalf("no %s job starting at %d µs:%s", ring, ts, dump(jobs))
	return nil
}

func TestV3DOwnEventsMakeJobs(t *testing.T) {
	_, jobs := assembleText(t, v3dOnlyCapture)
	if len(jobs) != 7 {
		t.Fatalf("%d jobs, want 7 (bin 7, 8, 9, render 7, tfu 3, csd 2, cache clean):%s", len(jobs), dump(jobs))
	}
	for _, c := range []struct {
		ring        string
		ts, th      int64
		start, done string
	}{
		{"v3d_bin", 100, 400, "v3d_submit_cl", "v3d_bcl_irq"},
		{"v3d_render", 450, 1450, "v3d_submit_cl", "v3d_rcl_irq"},
		{"v3d_bin", 500, 700, "v3d_submit_cl", "v3d_bcl_irq"},
		{"v3d_tfu", 2000, 2050, "v3d_submit_tfu", "v3d_tfu_irq"},
		{"v3d_csd", 3000, 3800, "v3d_submit_csd", "v3d_csd_irq"},
		{"v3d_cache_clean", 3850, 3870, "v3d_cache_clean_begin", "v3d_cache_clean_end"},
	} {
		j := v3dJob(t, jobs, c.ring, c.ts)
		if j.Outcome != Completed || j.Driver != "v3d" || j.Device != "0" {
			t.Errorf("%s at %d: %s %q driver %q device %q", c.ring, c.ts, j.Outcome, j.Reason, j.Driver, j.Device)
		}
		wantStages(t, j,
			"execution "+itoa(c.ts)+" "+itoa(c.th)+" measured "+c.start+"→"+c.done,
			"fence_signal "+itoa(c.th)+" "+itoa(c.th)+" inferred "+c.done+"→v3d_irq_as_finished")
	}
	j := v3dJob(t, jobs, "v3d_bin", 4000)
	if j.Outcome != Incomplete || len(j.Stages) != 0 {
		t.Errorf("bin 9: %s %q, %d stages, want incomplete without stages", j.Outcome, j.Reason, len(j.Stages))
	}
}

func itoa(n int64) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

// The same kind of jobs with drm_sched's 6.17+ events and dma_fence's: one job each, the
// scheduler's, which the v3d events bound. Kernel order for the bin job: the submitting
// thread queues it (drm_sched_job_queue in drm_sched_entity_push_job); the queue's
// worker traces drm_sched_job_run, then run_job (v3d_bin_job_run) creates the hardware
// fence (dma_fence_init driver=v3d timeline=v3d-bin), traces v3d_submit_cl and starts
// the job; after run_job returns the scheduler signals the scheduled fence. The
// interrupt traces v3d_bcl_irq, signals the hardware fence, whose callback traces
// drm_sched_job_done and signals the finished fence. So: tq 100, tr 200, te 210 (the
// hardware fence's creation), ts 215, th 600 (the IRQ event, before the fence signal
// at 602), tf 604. The render job (render entity 43, hardware context 6): tq 110, tr
// 650, te 660, ts 663, th 1500, tf 1504.
const v3dSchedCapture = `
# tracer: nop
      glmark2-900     [003] .....     1.000100: drm_sched_job_queue: dev=fec00000.v3d, fence=41:1, ring=v3d_bin, job count:0, hw job count:0, client_id:3
      glmark2-900     [003] .....     1.000110: drm_sched_job_queue: dev=fec00000.v3d, fence=43:1, ring=v3d_render, job count:0, hw job count:0, client_id:3
 kworker/u8:1-77      [001] .....     1.000200: drm_sched_job_run: dev=fec00000.v3d, fence=41:1, ring=v3d_bin, job count:0, hw job count:1, client_id:3
 kworker/u8:1-77      [001] .....     1.000210: dma_fence_init: driver=v3d timeline=v3d-bin context=5 seqno=7
 kworker/u8:1-77      [001] .....     1.000215: v3d_submit_cl: dev=0, BCL, seqno=7, 0x00a41000..0x00a41240
 kworker/u8:1-77      [001] .....     1.000220: dma_fence_signaled: driver=drm_sched timeline=v3d_bin context=40 seqno=1
       <idle>-0       [000] d.h1.     1.000600: v3d_bcl_irq: dev=0, seqno=7
       <idle>-0       [000] d.h1.     1.000602: dma_fence_signaled: driver=v3d timeline=v3d-bin context=5 seqno=7
       <idle>-0       [000] d.h1.     1.000604: drm_sched_job_done: fence=41:1 signaled
       <idle>-0       [000] d.h1.     1.000605: dma_fence_signaled: driver=drm_sched timeline=v3d_bin context=41 seqno=1
 kworker/u8:2-78      [002] .....     1.000650: drm_sched_job_run: dev=fec00000.v3d, fence=43:1, ring=v3d_render, job count:0, hw job count:1, client_id:3
 kworker/u8:2-78      [002] .....     1.000660: dma_fence_init: driver=v3d timeline=v3d-render context=6 seqno=7
 kworker/u8:2-78      [002] .....     1.000663: v3d_submit_cl: dev=0, RCL, seqno=7, 0x00b00000..0x00b00c80
 kworker/u8:2-78      [002] .....     1.000670: dma_fence_signaled: driver=drm_sched timeline=v3d_render context=42 seqno=1
      glmark2-900     [003] d.h1.     1.001500: v3d_rcl_irq: dev=0, seqno=7
      glmark2-900     [003] d.h1.     1.001502: dma_fence_signaled: driver=v3d timeline=v3d-render context=6 seqno=7
      glmark2-900     [003] d.h1.     1.001504: drm_sched_job_done: fence=43:1 signaled
      glmark2-900     [003] d.h1.     1.001505: dma_fence_signaled: driver=drm_sched timeline=v3d_render context=43 seqno=1
`

func TestV3DEventsAgreeWithTheScheduler(t *testing.T) {
	c, jobs := assembleText(t, v3dSchedCapture)
	if len(jobs) != 2 {
		t.Fatalf("%d jobs, want the scheduler's 2:%s", len(jobs), dump(jobs))
	}
	for _, w := range []struct {
		fence                  event.FenceKey
		tq, tr, te, ts, th, tf int64
		submit, irq, ring      string
	}{
		{fk(41, 1), 100, 200, 210, 215, 600, 604, "v3d_submit_cl", "v3d_bcl_irq", "v3d_bin"},
		{fk(43, 1), 110, 650, 660, 663, 1500, 1504, "v3d_submit_cl", "v3d_rcl_irq", "v3d_render"},
	} {
		j := find(t, jobs, w.fence)
		if j.Outcome != Completed || j.Ring != w.ring {
			t.Errorf("%v: %s %q ring %q", w.fence, j.Outcome, j.Reason, j.Ring)
		}
		wantPoint(t, j, PointQueued, w.tq, Measured, "drm_sched_job_queue")
		wantPoint(t, j, PointRun, w.tr, Measured, "drm_sched_job_run")
		wantPoint(t, j, PointEmitted, w.te, Measured, "dma_fence_init")
		wantPoint(t, j, PointHWStart, w.ts, Measured, w.submit)
		wantPoint(t, j, PointHWDone, w.th, Measured, w.irq)
		wantPoint(t, j, PointFinished, w.tf, Measured, "drm_sched_job_done")
		wantStage(t, j, "execution", w.ts, w.th, Measured, w.submit+"→"+w.irq)
		wantStage(t, j, "fence_signal", w.th, w.tf, Measured, w.irq+"→drm_sched_job_done")
	}
	if n := c.a.Stats().Orphans["v3d_bin_irq"] + c.a.Stats().Orphans["v3d_render_irq"]; n != 0 {
		t.Errorf("%d v3d IRQ events matched no job", n)
	}
}

// A 3.x i915 capture (legacy ring submission; ChromeOS-era names and formats, as
// snippets S7 shows them). The kernel: execbuffer emits the batch and traces
// i915_gem_ring_dispatch (tq), then i915_add_request writes the breadcrumb (seqno
// store and user interrupt), advances the tail and traces i915_gem_request_add (the
// request's run and te); a ring executes its requests in order; notify_ring traces
// i915_gem_request_complete with the ring's last written seqno when a user interrupt
// comes (only while someone waits); the retire worker traces i915_gem_request_retire
// for each request whose seqno has passed (tf).
//
//	ring 0: 100 (dispatch 100, add 110), 102 (300, 310); ring 1: 101 (200, 210).
//	complete ring=0 seqno=99 at 150: covers nothing of ours.
//	complete ring=0 seqno=102 at 900: th of 100 and 102 (not of 101: ring 1).
//	retire 100 at 1000, 102 at 1001, 101 at 2000 (no interrupt on ring 1: th = tf).
//	ts by ring_serial = max(te, the ring's previous job's th), at most th:
//	100: 110; 102: max(310, 900) = 900; 101: 210.
const i915LegacyCapture = `
          chrome-1539  [000]     1.000100: i915_gem_ring_dispatch: dev=0, ring=0, seqno=100, flags=1
          chrome-1539  [000]     1.000110: i915_gem_request_add: dev=0, ring=0, seqno=100
             cat-21833 [001]     1.000150: i915_gem_request_complete: dev=0, ring=0, seqno=99
          chrome-1539  [000]     1.000200: i915_gem_ring_dispatch: dev=0, ring=1, seqno=101, flags=0
          chrome-1539  [000]     1.000210: i915_gem_request_add: dev=0, ring=1, seqno=101
          chrome-1539  [000]     1.000300: i915_gem_ring_dispatch: dev=0, ring=0, seqno=102, flags=1
          chrome-1539  [000]     1.000310: i915_gem_request_add: dev=0, ring=0, seqno=102
               X-1012  [001]     1.000400: i915_gem_request_wait_begin: dev=0, ring=0, seqno=102
             cat-21833 [001]     1.000900: i915_gem_request_complete: dev=0, ring=0, seqno=102
               X-1012  [001]     1.000910: i915_gem_request_wait_end: dev=0, ring=0, seqno=102
     kworker/0:1-16    [000]     1.001000: i915_gem_request_retire: dev=0, ring=0, seqno=100
     kworker/0:1-16    [000]     1.001001: i915_gem_request_retire: dev=0, ring=0, seqno=102
     kworker/0:1-16    [000]     1.002000: i915_gem_request_retire: dev=0, ring=1, seqno=101
`

func TestI915LegacyRequestsComplete(t *testing.T) {
	_, jobs := assembleText(t, i915LegacyCapture)
	if len(jobs) != 3 {
		t.Fatalf("%d jobs, want 3:%s", len(jobs), dump(jobs))
	}
	for _, w := range []struct {
		seq                int64
		tq, te, ts, th, tf int64
		tsHook, thHook     string
		thSrc              Provenance
	}{
		{100, 100, 110, 110, 900, 1000, "ring_serial", "i915_gem_request_complete", Measured},
		{102, 300, 310, 900, 900, 1001, "ring_serial", "i915_gem_request_complete", Measured},
		{101, 200, 210, 210, 2000, 2000, "ring_serial", "fallback_to_finished", Inferred},
	} {
		j := find(t, jobs, fk(0, uint64(w.seq)))
		if j.Outcome != Completed || j.Driver != "i915" {
			t.Errorf("seqno %d: %s %q driver %q", w.seq, j.Outcome, j.Reason, j.Driver)
		}
		wantPoint(t, j, PointQueued, w.tq, Measured, "i915_gem_ring_dispatch")
		wantPoint(t, j, PointEmitted, w.te, Measured, "i915_gem_request_add")
		wantPoint(t, j, PointHWStart, w.ts, Inferred, w.tsHook)
		wantPoint(t, j, PointHWDone, w.th, w.thSrc, w.thHook)
		wantPoint(t, j, PointFinished, w.tf, Measured, "i915_gem_request_retire")
		wantUnknown(t, j, PointRun)
	}
}

// The scheduler's events and only dma_fence_signaled (no dma_fence_init): te is the
// submit event (the job is on the hardware when it is traced; the scheduled fence's
// signal, after run_job returns, comes later), so dma_scheduling is the measured
// zero between the two and no stage runs backwards.
const v3dSchedNoInitCapture = `
      glmark2-900     [003] .....     1.000100: drm_sched_job_queue: dev=fec00000.v3d, fence=41:1, ring=v3d_bin, job count:0, hw job count:0, client_id:3
 kworker/u8:1-77      [001] .....     1.000200: drm_sched_job_run: dev=fec00000.v3d, fence=41:1, ring=v3d_bin, job count:0, hw job count:1, client_id:3
 kworker/u8:1-77      [001] .....     1.000215: v3d_submit_cl: dev=0, BCL, seqno=7, 0x00a41000..0x00a41240
 kworker/u8:1-77      [001] .....     1.000220: dma_fence_signaled: driver=drm_sched timeline=v3d_bin context=40 seqno=1
       <idle>-0       [000] d.h1.     1.000600: v3d_bcl_irq: dev=0, seqno=7
       <idle>-0       [000] d.h1.     1.000604: drm_sched_job_done: fence=41:1 signaled
`

func TestV3DSubmitIsTheEmissionWithoutTheFencesCreation(t *testing.T) {
	_, jobs := assembleText(t, v3dSchedNoInitCapture)
	if len(jobs) != 1 {
		t.Fatalf("%d jobs:%s", len(jobs), dump(jobs))
	}
	j := jobs[0]
	wantPoint(t, j, PointEmitted, 215, Measured, "v3d_submit_cl")
	wantPoint(t, j, PointHWStart, 215, Measured, "v3d_submit_cl")
	wantStage(t, j, "ring_emission", 200, 215, Measured, "drm_sched_job_run→v3d_submit_cl")
	wantStage(t, j, "dma_scheduling", 215, 215, Measured, "v3d_submit_cl→v3d_submit_cl")
	wantStage(t, j, "execution", 215, 600, Measured, "v3d_submit_cl→v3d_bcl_irq")
}

// A Raspberry Pi kernel of the 6.1 series: drm_sched's ≤6.16 events (the job by its
// finished fence's pointer and id; the worker a kthread named after the queue) and v3d's.
// One job, the scheduler's: queued 100, run 200, started 230 (v3d_submit_cl, also te: no
// dma_fence event), hardware done 700 (v3d_bcl_irq), finished 705.
const v3dSched61Capture = `
      glmark2-900     [003] .....     1.000100: drm_sched_job: entity=00000000d1c4a8b0, id=12, fence=000000007a3e61c2, ring=v3d_bin, job count:0, hw job count:0
         v3d_bin-231  [001] .....     1.000200: drm_run_job: entity=00000000d1c4a8b0, id=12, fence=000000007a3e61c2, ring=v3d_bin, job count:0, hw job count:1
         v3d_bin-231  [001] .....     1.000230: v3d_submit_cl: dev=0, BCL, seqno=40, 0x00a41000..0x00a41240
          <idle>-0    [000] d.h1.     1.000700: v3d_bcl_irq: dev=0, seqno=40
          <idle>-0    [000] d.h1.     1.000705: drm_sched_process_job: fence=000000007a3e61c2 signaled
`

func TestV3DWithTheSchedulersOlderEvents(t *testing.T) {
	_, jobs := assembleText(t, v3dSched61Capture)
	if len(jobs) != 1 {
		t.Fatalf("%d jobs, want the scheduler's one:%s", len(jobs), dump(jobs))
	}
	j := jobs[0]
	if j.Outcome != Completed || j.Ring != "v3d_bin" {
		t.Errorf("%s %q ring %q", j.Outcome, j.Reason, j.Ring)
	}
	wantPoint(t, j, PointQueued, 100, Measured, "drm_sched_job")
	wantPoint(t, j, PointRun, 200, Measured, "drm_run_job")
	wantPoint(t, j, PointEmitted, 230, Measured, "v3d_submit_cl")
	wantPoint(t, j, PointHWStart, 230, Measured, "v3d_submit_cl")
	wantPoint(t, j, PointHWDone, 700, Measured, "v3d_bcl_irq")
	wantPoint(t, j, PointFinished, 705, Measured, "drm_sched_process_job")
}

// vc4 before any drm_sched port (vc4_gem.c, vc4_irq.c): exec 301 is binned and rendered,
// exec 302 is bin-less (render only). The kernel: vc4_submit_next_bin_job traces the BCL
// submit (in the ioctl when the binner is idle) just before submit_cl starts the half;
// the binner's interrupt (vc4_irq_finish_bin_job) traces vc4_bcl_end_irq and moves the
// exec to the render list, whose head is started (RCL submit, in the handler); the
// render interrupt traces vc4_rcl_end_irq and signals the exec's fence. One job per half:
// bin 301 ts 100 → th 890; render 301 ts 900 → th 2000; render 302 (queued behind 301's
// render) ts 2010 → th 2600; each tf = th.
const vc4Capture = `
       glxgears-812   [000] ....     1.000100: vc4_submit_cl: dev=0, BCL, seqno=301, 0x3c001000..0x3c001200
          <idle>-0    [000] d.h1     1.000890: vc4_bcl_end_irq: dev=0, seqno=301
          <idle>-0    [000] d.h1     1.000900: vc4_submit_cl: dev=0, RCL, seqno=301, 0x3c100000..0x3c100400
          <idle>-0    [000] d.h1     1.002000: vc4_rcl_end_irq: dev=0, seqno=301
          <idle>-0    [000] d.h1     1.002010: vc4_submit_cl: dev=0, RCL, seqno=302, 0x3c200000..0x3c200400
          <idle>-0    [000] d.h1     1.002600: vc4_rcl_end_irq: dev=0, seqno=302
`

func TestVC4HalvesAreJobs(t *testing.T) {
	_, jobs := assembleText(t, vc4Capture)
	if len(jobs) != 3 {
		t.Fatalf("%d jobs, want 3:%s", len(jobs), dump(jobs))
	}
	for _, c := range []struct {
		ring   string
		ts, th int64
		irq    string
	}{
		{"vc4_bin", 100, 890, "vc4_bcl_end_irq"},
		{"vc4_render", 900, 2000, "vc4_rcl_end_irq"},
		{"vc4_render", 2010, 2600, "vc4_rcl_end_irq"},
	} {
		j := v3dJob(t, jobs, c.ring, c.ts)
		if j.Outcome != Completed || j.Driver != "vc4" {
			t.Errorf("%s at %d: %s %q driver %q", c.ring, c.ts, j.Outcome, j.Reason, j.Driver)
		}
		wantStages(t, j,
			"execution "+itoa(c.ts)+" "+itoa(c.th)+" measured vc4_submit_cl→"+c.irq,
			"fence_signal "+itoa(c.th)+" "+itoa(c.th)+" inferred "+c.irq+"→vc4_irq_as_finished")
	}
}
