// msm's GPU stamps: the anchor rule (drivers.go gpuToCPU, gpuExecution) as unit tests,
// and capture-level tests: msm captures written in the kernel's own formats (tracefs with
// the TGID column), decoded by the ftrace decoder and assembled, checked against times
// computed by hand in the comments from the raw numbers (19.2 ticks per µs: 192 ticks
// are 10 µs), not by the code under test.
package assemble

import (
	"bufio"
	"strings"
	"testing"
	"time"

	"github.com/ghostdriver/ghostdriver/internal/event"
	"github.com/ghostdriver/ghostdriver/internal/ftrace"
)

func TestGPUToCPU(t *testing.T) {
	const mhz19 = 19_200_000
	an := gpuAnchor{cpu: 5_000_000_000, ticks: 1_920_000_000}
	for _, c := range []struct {
		name string
		tick uint64
		an   gpuAnchor
		hz   int64
		want int64
	}{
		{"the anchor itself", 1_920_000_000, an, mhz19, 5_000_000_000},
		{"19200 ticks = 1 ms", 1_920_019_200, an, mhz19, 5_001_000_000},
		// 2262 ticks / 19.2 MHz = 117 812.5 ns: truncated.
		{"sub-ns truncates", 1_920_002_262, an, mhz19, 5_000_117_812},
		{"before the anchor", 1_920_000_000 - 192, an, mhz19, 4_999_990_000},
		// A day of ticks (1 658 880 000 000) must not overflow: 86 400 s exactly.
		{"a day later", 1_920_000_000 + 19_200_000*86_400, an, mhz19, 5_000_000_000 + 86_400_000_000_000},
		// The counter wrapped between anchor and stamp: 2^64-100 → 92 is 192 ticks forward.
		{"wrap", 92, gpuAnchor{cpu: 7_000, ticks: 1<<64 - 100}, mhz19, 7_000 + 10_000},
		// Another frequency (no msm generation has one; the rule takes it per driver):
		// 27 MHz, 270 ticks = 10 µs; 1 GHz, 1 tick = 1 ns.
		{"27 MHz", 1_920_000_270, an, 27_000_000, 5_000_010_000},
		{"1 GHz", 1_920_000_001, an, 1_000_000_000, 5_000_000_001},
	} {
		if got := gpuToCPU(c.tick, c.an, c.hz); got != c.want {
			t.Errorf("%s: gpuToCPU(%d) = %d, want %d", c.name, c.tick, got, c.want)
		}
	}
}

func TestGPUExecutionChecks(t *testing.T) {
	const hz = 19_200_000
	an := gpuAnchor{cpu: 1_000_000, ticks: 19_200}
	for _, c := range []struct {
		name           string
		start, end     uint64
		retire         int64
		wantTS, wantTH int64
		why            string
	}{
		// start 20 µs, end 100 µs after the anchor; retired at +150 µs.
		{"ok", 19_200 + 384, 19_200 + 1920, 1_150_000, 1_020_000, 1_100_000, ""},
		{"a2xx..a5xx: zeros", 0, 0, 1_150_000, 0, 0, stampsNone},
		{"end before start", 19_200 + 1920, 19_200 + 384, 1_150_000, 0, 0, stampsEndFirst},
		// 7.2+: CP_ALWAYS_ON_CONTEXT counts per context, far below the flush's counter.
		{"other counter", 1000, 5000, 1_150_000, 0, 0, stampsBeforeAnchor},
		// end maps to +100 µs but the retire came at +50 µs: not this anchor's clock.
		{"end after retire", 19_200 + 384, 19_200 + 1920, 1_050_000, 0, 0, stampsAfterRetire},
		{"end at retire", 19_200 + 384, 19_200 + 1920, 1_100_000, 1_020_000, 1_100_000, ""},
	} {
		ts, th, why := gpuExecution(an, c.start, c.end, c.retire, hz)
		if ts != c.wantTS || th != c.wantTH || why != c.why {
			t.Errorf("%s: got (%d, %d, %q), want (%d, %d, %q)", c.name, ts, th, why, c.wantTS, c.wantTH, c.why)
		}
	}
}

// assembleText decodes capture lines with the ftrace decoder and assembles them.
func assembleText(t *testing.T, text string) (*collector, []*Job) {
	t.Helper()
	d := ftrace.NewDecoder()
	var evs []event.Event
	sc := bufio.NewScanner(strings.NewReader(text))
	n := 0
	for sc.Scan() {
		n++
		l := strings.TrimSpace(sc.Text())
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		var ev event.Event
		if !d.Decode([]byte(l), n, &ev) {
			t.Fatalf("line %d not decoded: %q (%+v)", n, l, d.Stats())
		}
		evs = append(evs, ev)
	}
	c := newCollector(testConfig())
	return c, c.run(evs...)
}

func stageOf(j *Job, name string) (StageSpan, bool) {
	for _, s := range j.Stages {
		if s.Stage.String() == name {
			return s, true
		}
	}
	return StageSpan{}, false
}

// wantStage checks one stage: bounds in µs after T(0), provenance and rule.
func wantStage(t *testing.T, j *Job, name string, start, end int64, src Provenance, rule string) {
	t.Helper()
	s, ok := stageOf(j, name)
	if !ok {
		t.Errorf("job %d: no %s stage", j.JobID, name)
		return
	}
	if s.Start != T(start) || s.End != T(end) || s.Src != src || s.Rule != rule {
		t.Errorf("job %d %s: got %d..%d µs %s %q, want %d..%d µs %s %q", j.JobID, name,
			(s.Start-T(0))/us, (s.End-T(0))/us, s.Src, s.Rule, start, end, src, rule)
	}
}

// Only the drm_msm_gpu events, as a systrace/Perfetto text capture of the gpu category
// gives them (tracefs with TGID). The flush and retire run on kernel threads (drm_sched's
// worker and msm's retire worker); the submitter is in pid=. T(0) is 1.000000 s.
//
// The counter: flush of 101 at 1.000150 reads F = 1 920 000 000. Every other counter
// value below is F + k·192, i.e. k·10 µs after 1.000150, which is how the hand-computed
// CPU times in the comments follow (the flushes' own ticks agree with their timestamps).
const msmOnlyCapture = `
# tracer: nop
    RenderThread-1453    (   1440) [002] .....     1.000100: msm_gpu_submit: id=101 pid=1453 ring=0 bos=3 cmds=1
   kworker/u16:2-96      (     96) [000] d..1.     1.000150: msm_gpu_submit_flush: id=101 pid=1453 ring=0:501 ticks=1920000000
    RenderThread-1453    (   1440) [002] .....     1.000300: msm_gpu_submit: id=102 pid=1453 ring=0 bos=3 cmds=1
   kworker/u16:2-96      (     96) [000] d..1.     1.000320: msm_gpu_submit_flush: id=102 pid=1453 ring=0:502 ticks=1920003264
# 101: start F+2·192 → 1.000170, end F+100·192 → 1.001150; elapsed = 18816·10000/192 = 980000 ns.
   kworker/u16:5-97      (     97) [001] .....     1.001400: msm_gpu_submit_retired: id=101 pid=1453 ring=0:501 elapsed=980000 ns mhz=587 start=1920000384 end=1920019200
# 102: start F+101·192 → 1.001160, end F+250·192 → 1.002650 (1490 µs); retired 1.4 ms after its end.
   kworker/u16:5-97      (     97) [001] .....     1.004050: msm_gpu_submit_retired: id=102 pid=1453 ring=0:502 elapsed=1490000 ns mhz=587 start=1920019392 end=1920048000
          glmark-2001    (   2000) [003] .....     1.005000: msm_gpu_submit: id=103 pid=2001 ring=0 bos=1 cmds=1
   kworker/u16:2-96      (     96) [000] d..1.     1.005020: msm_gpu_submit_flush: id=103 pid=2001 ring=0:503 ticks=1920093504
# 103: flush F+487·192 (1.005020); start F+490·192 → 1.005050, end F+545·192 → 1.005600.
   kworker/u16:5-97      (     97) [001] .....     1.005700: msm_gpu_submit_retired: id=103 pid=2001 ring=0:503 elapsed=550000 ns mhz=587 start=1920094080 end=1920104640
# 104: its msm_gpu_submit is not in the capture; flush F+585·192 (1.006000). Its stamps are
# on another counter (7.2+ CP_ALWAYS_ON_CONTEXT, per context): not used, inferred.
   kworker/u16:2-96      (     96) [000] d..1.     1.006000: msm_gpu_submit_flush: id=104 pid=2001 ring=0:504 ticks=1920112320
   kworker/u16:5-97      (     97) [001] .....     1.006500: msm_gpu_submit_retired: id=104 pid=2001 ring=0:504 elapsed=208333 ns mhz=587 start=1000 end=5000
`

func TestMsmStampsCapture(t *testing.T) {
	c, jobs := assembleText(t, msmOnlyCapture)
	if len(jobs) != 4 {
		t.Fatalf("jobs %s", dump(jobs))
	}
	const gs, ge = hookMsmGPUStart, hookMsmGPUEnd
	j1, j2, j3, j4 := findID(t, jobs, 101), findID(t, jobs, 102), findID(t, jobs, 103), findID(t, jobs, 104)

	wantPoint(t, j1, PointHWStart, 170, Measured, gs)
	wantPoint(t, j1, PointHWDone, 1150, Measured, ge)
	wantStage(t, j1, "execution", 170, 1150, Measured, gs+"→"+ge)
	wantStage(t, j1, "fence_signal", 1150, 1400, Measured, ge+"→msm_gpu_submit_retired")
	wantStage(t, j1, "dma_scheduling", 150, 170, Measured, "msm_gpu_submit_flush→"+gs)

	// 102 waited on the GPU for 101 (ended 1.001150, started 1.001160): the start is the
	// GPU's, not 101's retire (1.001400) as ring_serial would say; 1.4 ms retire latency.
	wantStage(t, j2, "execution", 1160, 2650, Measured, gs+"→"+ge)
	wantStage(t, j2, "fence_signal", 2650, 4050, Measured, ge+"→msm_gpu_submit_retired")

	wantStage(t, j3, "execution", 5050, 5600, Measured, gs+"→"+ge)
	wantStage(t, j3, "fence_signal", 5600, 5700, Measured, ge+"→msm_gpu_submit_retired")

	// 104: rejected stamps, so the inference: ts = max(te 1.006000, 103's end 1.005600), th = tf,
	// named for why.
	wantStage(t, j4, "execution", 6000, 6500, Inferred, "ring_serial→gpu_stamps_rejected")
	wantStage(t, j4, "fence_signal", 6500, 6500, Inferred, "gpu_stamps_rejected→msm_gpu_submit_retired")

	// Submitters: the msm_gpu_submit line's thread and TGID; for 104, only pid= (the flush
	// ran on a worker, whose TGID is not the submitter's process).
	for _, c := range []struct {
		j        *Job
		tid, pid uint32
		comm     string
	}{{j1, 1453, 1440, "RenderThread"}, {j2, 1453, 1440, "RenderThread"}, {j3, 2001, 2000, "glmark"}, {j4, 2001, 0, ""}} {
		if c.j.TID != c.tid || c.j.PID != c.pid || c.j.Comm != c.comm {
			t.Errorf("job %d: tid %d pid %d comm %q, want %d %d %q", c.j.JobID, c.j.TID, c.j.PID, c.j.Comm, c.tid, c.pid, c.comm)
		}
	}

	// Busy time on ring 0: 980 + 1490 + 550 µs measured, + 500 µs inferred for 104 = 3520 µs
	// (ring_serial alone gave 1250 + 2650 + 680 + 500 = 5080 µs).
	if rs, ok := c.a.Stats().Rings["0"]; !ok || rs.Busy != 3520*time.Microsecond {
		t.Errorf("ring 0 busy: %+v, want 3.52ms", rs)
	}
	if st := c.a.GPUStamps(); st != (GPUStampStats{Used: 3, Rejected: 1}) {
		t.Errorf("stamp stats %+v", st)
	}
}

// msm ≥5.19 with the scheduler traced too (6.17+ formats), in the kernel's order:
// msm_gpu_submit in the ioctl before drm_sched_job_queue (msm_gem_submit.c), the flush
// inside run_job on the worker (msm_job_run → msm_gpu_submit → a6xx_submit), the retire
// after the fence signal. One job, with the GPU's execution.
const msmSchedCapture = `
    RenderThread-1453    (   1440) [002] .....     1.000100: msm_gpu_submit: id=101 pid=1453 ring=0 bos=3 cmds=1
    RenderThread-1453    (   1440) [002] .....     1.000110: drm_sched_job_queue: dev=3d00000.gpu, fence=7:501, ring=gpu-ring-0, job count:0, hw job count:0, client_id:4
   kworker/u16:2-96      (     96) [000] .....     1.000140: drm_sched_job_run: dev=3d00000.gpu, fence=7:501, ring=gpu-ring-0, job count:0, hw job count:1, client_id:4
   kworker/u16:2-96      (     96) [000] d..1.     1.000150: msm_gpu_submit_flush: id=101 pid=1453 ring=0:501 ticks=1920000000
          <idle>-0       (      0) [001] d.h1.     1.001300: drm_sched_job_done: fence=7:501 signaled
# start F+2·192 → 1.000170, end F+100·192 → 1.001150.
   kworker/u16:5-97      (     97) [001] .....     1.001400: msm_gpu_submit_retired: id=101 pid=1453 ring=0:501 elapsed=980000 ns mhz=587 start=1920000384 end=1920019200
`

func TestMsmStampsWithDrmSched(t *testing.T) {
	_, jobs := assembleText(t, msmSchedCapture)
	if len(jobs) != 1 {
		t.Fatalf("want one job, got %s", dump(jobs))
	}
	j := jobs[0]
	const gs, ge = hookMsmGPUStart, hookMsmGPUEnd
	if j.Outcome != Completed || j.TID != 1453 || j.PID != 1440 || j.Driver != "msm" {
		t.Errorf("job %+v", j)
	}
	wantPoint(t, j, PointEmitted, 150, Measured, "msm_gpu_submit_flush")
	wantStage(t, j, "execution", 170, 1150, Measured, gs+"→"+ge)
	wantStage(t, j, "fence_signal", 1150, 1300, Measured, ge+"→drm_sched_job_done")
}

// Under drm_sched a rejected pair leaves th to the scheduler side (here no hardware fence
// is traced: th = tf, fallback_to_finished), never the retire, which comes after tf.
func TestMsmRejectedStampsWithDrmSched(t *testing.T) {
	text := strings.Replace(msmSchedCapture, "start=1920000384 end=1920019200", "start=1000 end=5000", 1)
	c, jobs := assembleText(t, text)
	if len(jobs) != 1 {
		t.Fatalf("want one job, got %s", dump(jobs))
	}
	wantStage(t, jobs[0], "execution", 150, 1300, Inferred, "ring_serial→fallback_to_finished")
	if st := c.a.GPUStamps(); st != (GPUStampStats{Rejected: 1}) {
		t.Errorf("stamp stats %+v", st)
	}
}
