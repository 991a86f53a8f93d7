// v3d with drm_sched's queue and done events but not its run event (a capture that
// enabled drm_sched_job_queue and drm_sched_job_done only): the v3d events must bound
// the scheduler's job, not open a second one.

package assemble

import "testing"

// The kernel as in v3dSchedCapture, without the run events: the v3d scheduler's worker
// runs the queue's jobs one at a time in the order they became ready (one client here,
// no dependencies), run_job traces v3d_submit_cl and starts the job, the IRQ event
// comes before the hardware fence's signal, whose callback traces drm_sched_job_done.
// Bin: tq 100, ts 215, th 600, tf 604; render: tq 110, ts 663, th 1500, tf 1504. The
// run is not traced: tr is inferred at the submit event (run_job was running then).
const v3dSchedNoRunCapture = `
      glmark2-900     [003] .....     1.000100: drm_sched_job_queue: dev=fec00000.v3d, fence=41:1, ring=v3d_bin, job count:0, hw job count:0, client_id:3
      glmark2-900     [003] .....     1.000110: drm_sched_job_queue: dev=fec00000.v3d, fence=43:1, ring=v3d_render, job count:0, hw job count:0, client_id:3
 kworker/u8:1-77      [001] .....     1.000215: v3d_submit_cl: dev=0, BCL, seqno=7, 0x00a41000..0x00a41240
       <idle>-0       [000] d.h1.     1.000600: v3d_bcl_irq: dev=0, seqno=7
       <idle>-0       [000] d.h1.     1.000604: drm_sched_job_done: fence=41:1 signaled
 kworker/u8:2-78      [002] .....     1.000663: v3d_submit_cl: dev=0, RCL, seqno=7, 0x00b00000..0x00b00c80
      glmark2-900     [003] d.h1.     1.001500: v3d_rcl_irq: dev=0, seqno=7
      glmark2-900     [003] d.h1.     1.001504: drm_sched_job_done: fence=43:1 signaled
`

func TestV3DWithoutTheRunEventIsOneJob(t *testing.T) {
	_, jobs := assembleText(t, v3dSchedNoRunCapture)
	if len(jobs) != 2 {
		t.Fatalf("%d jobs, want the scheduler's 2:%s", len(jobs), dump(jobs))
	}
	for _, w := range []struct {
		fence          uint64
		tq, ts, th, tf int64
		irq, ring      string
	}{
		{41, 100, 215, 600, 604, "v3d_bcl_irq", "v3d_bin"},
		{43, 110, 663, 1500, 1504, "v3d_rcl_irq", "v3d_render"},
	} {
		j := find(t, jobs, fk(w.fence, 1))
		if j.Outcome != Completed || j.Ring != w.ring {
			t.Errorf("%d: %s %q ring %q", w.fence, j.Outcome, j.Reason, j.Ring)
		}
		wantPoint(t, j, PointQueued, w.tq, Measured, "drm_sched_job_queue")
		wantPoint(t, j, PointRun, w.ts, Inferred, ruleV3DRunUntraced)
		wantPoint(t, j, PointHWStart, w.ts, Measured, "v3d_submit_cl")
		wantPoint(t, j, PointHWDone, w.th, Measured, w.irq)
		wantPoint(t, j, PointFinished, w.tf, Measured, "drm_sched_job_done")
		wantStage(t, j, "execution", w.ts, w.th, Measured, "v3d_submit_cl→"+w.irq)
	}
}

// Two clients' bin jobs without run events: 41:1 (queued first) depends on 50:9, which
// has not signalled when the first submit comes, so the scheduler runs 45:1 (queued
// second, runnable) first: the submit at 300 is 45:1's; 50:9 signals at 500, and the
// submit at 600 is 41:1's.
const v3dNoRunDepCapture = `
      glmark2-900     [003] .....     1.000090: drm_sched_job_add_dep: fence=41:1 depends on fence=50:9
      glmark2-900     [003] .....     1.000100: drm_sched_job_queue: dev=fec00000.v3d, fence=41:1, ring=v3d_bin, job count:0, hw job count:0, client_id:3
       vkcube-901     [002] .....     1.000110: drm_sched_job_queue: dev=fec00000.v3d, fence=45:1, ring=v3d_bin, job count:0, hw job count:0, client_id:4
 kworker/u8:1-77      [001] .....     1.000300: v3d_submit_cl: dev=0, BCL, seqno=7, 0x00a41000..0x00a41240
       <idle>-0       [000] d.h1.     1.000400: v3d_bcl_irq: dev=0, seqno=7
       <idle>-0       [000] d.h1.     1.000404: drm_sched_job_done: fence=45:1 signaled
       <idle>-0       [000] d.h1.     1.000500: dma_fence_signaled: driver=other timeline=x context=50 seqno=9
 kworker/u8:1-77      [001] .....     1.000600: v3d_submit_cl: dev=0, BCL, seqno=8, 0x00a42000..0x00a42240
       <idle>-0       [000] d.h1.     1.000800: v3d_bcl_irq: dev=0, seqno=8
       <idle>-0       [000] d.h1.     1.000804: drm_sched_job_done: fence=41:1 signaled
`

func TestV3DWithoutTheRunEventWaitsForDependencies(t *testing.T) {
	_, jobs := assembleText(t, v3dNoRunDepCapture)
	if len(jobs) != 2 {
		t.Fatalf("%d jobs, want 2:%s", len(jobs), dump(jobs))
	}
	for _, w := range []struct {
		fence      uint64
		ts, th, tf int64
	}{
		{45, 300, 400, 404},
		{41, 600, 800, 804},
	} {
		j := find(t, jobs, fk(w.fence, 1))
		if j.Outcome != Completed {
			t.Errorf("%d: %s %q", w.fence, j.Outcome, j.Reason)
		}
		wantPoint(t, j, PointHWStart, w.ts, Measured, "v3d_submit_cl")
		wantPoint(t, j, PointHWDone, w.th, Measured, "v3d_bcl_irq")
		wantPoint(t, j, PointFinished, w.tf, Measured, "drm_sched_job_done")
	}
}
