// imagination (powervr), ivpu and amdxdna captures, end to end: lines in the kernels' own
// formats (pvr_trace.h 2026, ivpu_trace.h 2024, amdxdna.h; drm_sched's 6.17 formats),
// decoded by the ftrace decoder and assembled. The expected bounds follow from what the
// drivers do between the events (pvr_queue.c, ivpu_job.c, aie2_ctx.c), worked out in
// the comments; T(0) is 1.000000 s.

package assemble

import "testing"

func jobByID(t *testing.T, jobs []*Job, id uint64) *Job {
	t.Helper()
	for _, j := range jobs {
		if j.JobID == id {
			return j
		}
	}
	t.Fatalf("no job %#x:%s", id, dump(jobs))
	return nil
}

// pvr alone. The kernel, per job: the submit ioctl's create_job traces pvr_job_create
// (tq); the scheduler's worker runs it (prepare_job, run_job): run_job writes the CCCB,
// kicks the firmware and traces pvr_job_submit_fw (tr = te: nothing earlier of the run
// is traced); the done fence is signalled from a firmware event (not traced); the job's
// release traces pvr_job_done, after the scheduler freed it (tf, inferred: later than
// the real end). A geometry job paired with a fragment job: both submit_fw in the
// geometry job's run_job (each its own job here: no scheduler job to confuse them
// with). The job at ...f00d is released without a submit (its ioctl failed).
const pvrOnlyCapture = `
     vkcube-2211    [001] .....     1.000100: pvr_job_create: pvr_dev=00000000a1b2c3d4 ctx=000000005e6f7a8b fw_obj=00000000deadbeef fw_addr=0x2f000 hwrt_addr=0x80 job=000000000000aaaa job_type=geometry sync_op_count=0
     vkcube-2211    [001] .....     1.000110: pvr_job_create: pvr_dev=00000000a1b2c3d4 ctx=000000005e6f7a8b fw_obj=00000000deadbeef fw_addr=0x2f000 hwrt_addr=0x80 job=000000000000bbbb job_type=fragment sync_op_count=1
 kworker/u8:3-91      [002] .....     1.000300: pvr_job_submit_fw: job=000000000000aaaa done_seqno=7
 kworker/u8:3-91      [002] .....     1.000301: pvr_job_submit_fw: job=000000000000bbbb done_seqno=7
     vkcube-2211    [001] .....     1.000400: pvr_job_create: pvr_dev=00000000a1b2c3d4 ctx=000000005e6f7a8b fw_obj=00000000deadbeef fw_addr=0x31000 hwrt_addr=0x0 job=000000000000f00d job_type=compute sync_op_count=0
     vkcube-2211    [001] .....     1.000410: pvr_job_done: job=000000000000f00d
 kworker/u8:3-91      [002] .....     1.000900: pvr_job_done: job=000000000000aaaa
 kworker/u8:3-91      [002] .....     1.000950: pvr_job_done: job=000000000000bbbb
`

func TestPVROwnEventsMakeJobs(t *testing.T) {
	_, jobs := assembleText(t, pvrOnlyCapture)
	if len(jobs) != 3 {
		t.Fatalf("%d jobs, want 3:%s", len(jobs), dump(jobs))
	}
	for _, w := range []struct {
		id         uint64
		tq, te, tf int64
		ring       string
	}{
		{0xaaaa, 100, 300, 900, "geometry"},
		{0xbbbb, 110, 301, 950, "fragment"},
	} {
		j := jobByID(t, jobs, w.id)
		if j.Outcome != Completed || j.Driver != "powervr" || j.Ring != w.ring {
			t.Errorf("%#x: %s %q driver %q ring %q", w.id, j.Outcome, j.Reason, j.Driver, j.Ring)
		}
		wantPoint(t, j, PointQueued, w.tq, Measured, "pvr_job_create")
		wantPoint(t, j, PointRun, w.te, Measured, "pvr_job_submit_fw")
		wantPoint(t, j, PointEmitted, w.te, Measured, "pvr_job_submit_fw")
		wantPoint(t, j, PointFinished, w.tf, Inferred, rulePVRRelease)
		// Nothing is traced at the firmware's start or end: execution is inferred.
		wantPoint(t, j, PointHWStart, w.te, Inferred, ruleRingSerial)
		wantPoint(t, j, PointHWDone, w.tf, Inferred, ruleFallbackFinished)
	}
	if j := jobByID(t, jobs, 0xf00d); j.Outcome != Incomplete || j.Reason != reasonPVRNotSubmit {
		t.Errorf("failed submit: %s %q", j.Outcome, j.Reason)
	}
}

// pvr under drm_sched (6.17 formats). Ioctl: create_job traces pvr_job_create, then
// pvr_queue_job_push queues the scheduler job (drm_sched_job_queue). Worker: the
// scheduler traces drm_sched_job_run, run_job kicks the firmware and traces
// pvr_job_submit_fw (te); the paired fragment job (created and queued second) is
// submitted in the geometry job's run_job (its submit_fw at 231) and its own run_job,
// later, returns at once with no pvr event (te falls back to its run). The done fence's
// signal runs the scheduler's done (tf); the release traces pvr_job_done after it.
//
//	geometry: tq 105, tr 200, te 230, tf 700; fragment: tq 115, tr 240, te = tr, tf 900.
const pvrSchedCapture = `
     vkcube-2211    [001] .....     1.000100: pvr_job_create: pvr_dev=00000000a1b2c3d4 ctx=000000005e6f7a8b fw_obj=00000000deadbeef fw_addr=0x2f000 hwrt_addr=0x80 job=000000000000aaaa job_type=geometry sync_op_count=0
     vkcube-2211    [001] .....     1.000105: drm_sched_job_queue: dev=fd00000.gpu, fence=60:1, ring=pvr-queue, job count:0, hw job count:0, client_id:4
     vkcube-2211    [001] .....     1.000110: pvr_job_create: pvr_dev=00000000a1b2c3d4 ctx=000000005e6f7a8b fw_obj=00000000deadbeef fw_addr=0x2f000 hwrt_addr=0x80 job=000000000000bbbb job_type=fragment sync_op_count=1
     vkcube-2211    [001] .....     1.000115: drm_sched_job_queue: dev=fd00000.gpu, fence=62:1, ring=pvr-queue, job count:0, hw job count:0, client_id:4
 kworker/u8:3-91      [002] .....     1.000200: drm_sched_job_run: dev=fd00000.gpu, fence=60:1, ring=pvr-queue, job count:0, hw job count:1, client_id:4
 kworker/u8:3-91      [002] .....     1.000230: pvr_job_submit_fw: job=000000000000aaaa done_seqno=7
 kworker/u8:3-91      [002] .....     1.000231: pvr_job_submit_fw: job=000000000000bbbb done_seqno=7
 kworker/u8:4-92      [003] .....     1.000240: drm_sched_job_run: dev=fd00000.gpu, fence=62:1, ring=pvr-queue, job count:0, hw job count:1, client_id:4
       <idle>-0       [000] d.h1.     1.000700: drm_sched_job_done: fence=60:1 signaled
       <idle>-0       [000] d.h1.     1.000900: drm_sched_job_done: fence=62:1 signaled
 kworker/u8:3-91      [002] .....     1.000950: pvr_job_done: job=000000000000aaaa
 kworker/u8:3-91      [002] .....     1.000960: pvr_job_done: job=000000000000bbbb
`

func TestPVREventsAgreeWithTheScheduler(t *testing.T) {
	c, jobs := assembleText(t, pvrSchedCapture)
	if len(jobs) != 2 {
		t.Fatalf("%d jobs, want the scheduler's 2:%s", len(jobs), dump(jobs))
	}
	g := find(t, jobs, fk(60, 1))
	if g.Outcome != Completed || g.Driver != "powervr" {
		t.Errorf("geometry: %s %q driver %q", g.Outcome, g.Reason, g.Driver)
	}
	wantPoint(t, g, PointQueued, 105, Measured, "drm_sched_job_queue")
	wantPoint(t, g, PointRun, 200, Measured, "drm_sched_job_run")
	wantPoint(t, g, PointEmitted, 230, Measured, "pvr_job_submit_fw")
	wantPoint(t, g, PointFinished, 700, Measured, "drm_sched_job_done")
	f := find(t, jobs, fk(62, 1))
	if f.Outcome != Completed {
		t.Errorf("fragment: %s %q", f.Outcome, f.Reason)
	}
	wantPoint(t, f, PointRun, 240, Measured, "drm_sched_job_run")
	wantPoint(t, f, PointEmitted, 240, Inferred, ruleFallbackRun)
	wantPoint(t, f, PointFinished, 900, Measured, "drm_sched_job_done")
	if n := c.a.Stats().Orphans["pvr_job_done"]; n != 0 {
		t.Errorf("%d pvr_job_done matched no job", n)
	}
}

// ivpu (no scheduler). ivpu_job.c: the submit ioctl's ivpu_job_create traces "create"
// (job:0, the id is allocated later), ivpu_job_submit rings the command queue's doorbell
// and traces "submit" with the id (tr = te), the firmware's job-done message makes
// ivpu_job_signal_and_destroy signal the done fence and trace "done" (tf; th falls back
// to it). One command queue runs its jobs in order: job 19, submitted while 18 runs on
// context 3's compute engine, starts (ring_serial) when 18 is done, at 3500; job 20 on
// context 4 does not wait for context 3's.
const ivpuCapture = `
  benchmark_app-5120  [003] .....     1.000100: job: create context:3 engine:0 job:0
  benchmark_app-5120  [003] .....     1.000180: job: submit context:3 engine:0 job:17
 irq/160-intel_vpu-412 [000] .....     1.002900: job: done context:3 engine:0 job:17
  benchmark_app-5120  [003] .....     1.003000: job: create context:3 engine:0 job:0
  benchmark_app-5120  [003] .....     1.003010: job: submit context:3 engine:0 job:18
  benchmark_app-5121  [002] .....     1.003020: job: create context:3 engine:0 job:0
  benchmark_app-5121  [002] .....     1.003030: job: submit context:3 engine:0 job:19
  benchmark_app-5122  [001] .....     1.003040: job: create context:4 engine:0 job:0
  benchmark_app-5122  [001] .....     1.003050: job: submit context:4 engine:0 job:20
 irq/160-intel_vpu-412 [000] .....     1.003500: job: done context:3 engine:0 job:18
 irq/160-intel_vpu-412 [000] .....     1.003800: job: done context:4 engine:0 job:20
 irq/160-intel_vpu-412 [000] .....     1.004000: job: done context:3 engine:0 job:19
`

func TestIVPUJobEvents(t *testing.T) {
	_, jobs := assembleText(t, ivpuCapture)
	if len(jobs) != 4 {
		t.Fatalf("%d jobs, want 4:%s", len(jobs), dump(jobs))
	}
	for _, w := range []struct {
		id             uint64
		tq, te, ts, tf int64
	}{
		{17, 100, 180, 180, 2900},
		{18, 3000, 3010, 3010, 3500},
		{19, 3020, 3030, 3500, 4000},
		{20, 3040, 3050, 3050, 3800},
	} {
		j := jobByID(t, jobs, w.id)
		if j.Outcome != Completed || j.Driver != "intel_vpu" || j.Ring != "compute" {
			t.Errorf("job %d: %s %q driver %q ring %q", w.id, j.Outcome, j.Reason, j.Driver, j.Ring)
		}
		wantPoint(t, j, PointQueued, w.tq, Measured, "job(create)")
		wantPoint(t, j, PointRun, w.te, Measured, "job(submit)")
		wantPoint(t, j, PointEmitted, w.te, Measured, "job(submit)")
		wantPoint(t, j, PointHWStart, w.ts, Inferred, ruleRingSerial)
		wantPoint(t, j, PointFinished, w.tf, Measured, "job(done)")
		wantStage(t, j, "execution", w.ts, w.tf, Inferred, ruleRingSerial+"→"+ruleFallbackFinished)
	}
}

// amdxdna alone, and under drm_sched (6.17 formats). aie2_ctx.c: run_job sends the
// command to the firmware's mailbox and traces "sent to device" (te; alone, tr too); the
// firmware's response handler (aie2_sched_notify) traces "signaled fence" and then
// signals the job's fence (th), whose callback runs the scheduler's done (tf; alone,
// tf = th). Alone: 12:5 tr = te 300, th = tf 1100. With the scheduler: 12:6 tq 1200,
// tr 1300, te 1360, th 1900, tf 1902.
const xdnaCapture = `
 kworker/u16:2-301    [004] .....     1.000300: xdna_job: fence=(context:12, seqno:5), hwctx.1 seq#:4 sent to device, op=0
          <idle>-0     [000] d.h1.     1.001100: xdna_job: fence=(context:12, seqno:5), hwctx.1 seq#:4 signaled fence, op=0
      npu_app-7001    [002] .....     1.001200: drm_sched_job_queue: dev=0000:c5:00.1, fence=12:6, ring=amdxdna_js, job count:0, hw job count:0, client_id:9
 kworker/u16:2-301    [004] .....     1.001300: drm_sched_job_run: dev=0000:c5:00.1, fence=12:6, ring=amdxdna_js, job count:0, hw job count:1, client_id:9
 kworker/u16:2-301    [004] .....     1.001360: xdna_job: fence=(context:12, seqno:6), hwctx.1 seq#:5 sent to device, op=0
          <idle>-0     [000] d.h1.     1.001900: xdna_job: fence=(context:12, seqno:6), hwctx.1 seq#:5 signaled fence, op=0
          <idle>-0     [000] d.h1.     1.001902: drm_sched_job_done: fence=12:6 signaled
 kworker/u16:2-301    [004] .....     1.001950: xdna_job: fence=(context:12, seqno:6), hwctx.1 seq#:5 job free, op=0
`

func TestXDNAJobEvents(t *testing.T) {
	_, jobs := assembleText(t, xdnaCapture)
	if len(jobs) != 2 {
		t.Fatalf("%d jobs, want 2:%s", len(jobs), dump(jobs))
	}
	alone := find(t, jobs, fk(12, 5))
	if alone.Outcome != Completed || alone.Driver != "amdxdna" {
		t.Errorf("12:5: %s %q driver %q", alone.Outcome, alone.Reason, alone.Driver)
	}
	wantPoint(t, alone, PointRun, 300, Measured, "xdna_job(sent to device)")
	wantPoint(t, alone, PointEmitted, 300, Measured, "xdna_job(sent to device)")
	wantPoint(t, alone, PointHWDone, 1100, Measured, "xdna_job(signaled fence)")
	wantPoint(t, alone, PointFinished, 1100, Inferred, ruleXDNAFinished)
	s := find(t, jobs, fk(12, 6))
	if s.Outcome != Completed || s.Driver != "amdxdna" {
		t.Errorf("12:6: %s %q driver %q", s.Outcome, s.Reason, s.Driver)
	}
	wantPoint(t, s, PointQueued, 1200, Measured, "drm_sched_job_queue")
	wantPoint(t, s, PointRun, 1300, Measured, "drm_sched_job_run")
	wantPoint(t, s, PointEmitted, 1360, Measured, "xdna_job(sent to device)")
	wantPoint(t, s, PointHWDone, 1900, Measured, "xdna_job(signaled fence)")
	wantPoint(t, s, PointFinished, 1902, Measured, "drm_sched_job_done")
}

// pvr with drm_sched's queue and done events but not its run event: the ioctl creates its
// jobs (pvr_job_create) then queues them in the same order (drm_sched_job_queue), so each
// create names the scheduler job its thread queues next; submit_fw (not in a run window)
// then bounds that job: tr inferred at it, te measured. The paired fragment job is handed
// to the firmware with the geometry job (231): with no run event, that is its run.
const pvrSchedNoRunCapture = `
     vkcube-2211    [001] .....     1.000100: pvr_job_create: pvr_dev=00000000a1b2c3d4 ctx=000000005e6f7a8b fw_obj=00000000deadbeef fw_addr=0x2f000 hwrt_addr=0x80 job=000000000000aaaa job_type=geometry sync_op_count=0
     vkcube-2211    [001] .....     1.000110: pvr_job_create: pvr_dev=00000000a1b2c3d4 ctx=000000005e6f7a8b fw_obj=00000000deadbeef fw_addr=0x2f000 hwrt_addr=0x80 job=000000000000bbbb job_type=fragment sync_op_count=1
     vkcube-2211    [001] .....     1.000120: drm_sched_job_queue: dev=fd00000.gpu, fence=60:1, ring=pvr-queue, job count:0, hw job count:0, client_id:4
     vkcube-2211    [001] .....     1.000125: drm_sched_job_queue: dev=fd00000.gpu, fence=62:1, ring=pvr-queue, job count:0, hw job count:0, client_id:4
 kworker/u8:3-91      [002] .....     1.000230: pvr_job_submit_fw: job=000000000000aaaa done_seqno=7
 kworker/u8:3-91      [002] .....     1.000231: pvr_job_submit_fw: job=000000000000bbbb done_seqno=7
       <idle>-0       [000] d.h1.     1.000700: drm_sched_job_done: fence=60:1 signaled
       <idle>-0       [000] d.h1.     1.000900: drm_sched_job_done: fence=62:1 signaled
 kworker/u8:3-91      [002] .....     1.000950: pvr_job_done: job=000000000000aaaa
 kworker/u8:3-91      [002] .....     1.000960: pvr_job_done: job=000000000000bbbb
`

func TestPVRWithoutTheRunEventIsOneJob(t *testing.T) {
	c, jobs := assembleText(t, pvrSchedNoRunCapture)
	if len(jobs) != 2 {
		t.Fatalf("%d jobs, want the scheduler's 2:%s", len(jobs), dump(jobs))
	}
	for _, w := range []struct {
		fence      uint64
		tq, te, tf int64
	}{
		{60, 120, 230, 700},
		{62, 125, 231, 900},
	} {
		j := find(t, jobs, fk(w.fence, 1))
		if j.Outcome != Completed || j.Driver != "powervr" {
			t.Errorf("%d: %s %q driver %q", w.fence, j.Outcome, j.Reason, j.Driver)
		}
		wantPoint(t, j, PointQueued, w.tq, Measured, "drm_sched_job_queue")
		wantPoint(t, j, PointRun, w.te, Inferred, rulePVRRunUntraced)
		wantPoint(t, j, PointEmitted, w.te, Measured, "pvr_job_submit_fw")
		wantPoint(t, j, PointFinished, w.tf, Measured, "drm_sched_job_done")
	}
	if n := c.a.Stats().Orphans["pvr_job_done"]; n != 0 {
		t.Errorf("%d pvr_job_done matched no job", n)
	}
}

// amdxdna with drm_sched's queue and done events but not its run event: "sent to device"
// names the scheduler's job by its finished fence and is its run (inferred) and te.
const xdnaNoRunCapture = `
      npu_app-7001    [002] .....     1.001200: drm_sched_job_queue: dev=0000:c5:00.1, fence=12:6, ring=amdxdna_js, job count:0, hw job count:0, client_id:9
 kworker/u16:2-301    [004] .....     1.001360: xdna_job: fence=(context:12, seqno:6), hwctx.1 seq#:5 sent to device
          <idle>-0     [000] d.h1.     1.001900: xdna_job: fence=(context:12, seqno:6), hwctx.1 seq#:5 signaled fence
          <idle>-0     [000] d.h1.     1.001902: drm_sched_job_done: fence=12:6 signaled
`

func TestXDNAWithoutTheRunEvent(t *testing.T) {
	_, jobs := assembleText(t, xdnaNoRunCapture)
	if len(jobs) != 1 {
		t.Fatalf("%d jobs, want 1:%s", len(jobs), dump(jobs))
	}
	j := jobs[0]
	if j.Outcome != Completed || j.Driver != "amdxdna" {
		t.Errorf("%s %q driver %q", j.Outcome, j.Reason, j.Driver)
	}
	wantPoint(t, j, PointRun, 1360, Inferred, ruleXDNARunUntraced)
	wantPoint(t, j, PointEmitted, 1360, Measured, "xdna_job(sent to device)")
	wantPoint(t, j, PointHWDone, 1900, Measured, "xdna_job(signaled fence)")
	wantPoint(t, j, PointFinished, 1902, Measured, "drm_sched_job_done")
}
