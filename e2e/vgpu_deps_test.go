// Dependency waits on the virtual GPU rig, against an oracle. The oracle reads only the
// vgpu driver's ground truth (testdata/vgpu/kmod/vgpu.c: for each job its in-fences as the
// driver added them, the kernel's own signal timestamps of those fences, the job's entity,
// scheduler and push time) and applies drm_sched's rules as the kernel states them in
// drm_sched_entity_add_dependency_cb (drivers/gpu/drm/scheduler/sched_entity.c, the same in
// 6.1 and 7.3):
//
//   - a fence whose context is the job's entity's fence_context (its scheduled fence) or
//     fence_context + 1 (its finished fence) is ignored: "Fence is a scheduled/finished
//     fence from a job which belongs to the same entity, we can ignore fences from ourself";
//   - a drm_sched fence of the same scheduler, without error and without
//     DRM_SCHED_FENCE_DONT_PIPELINE, is waited for only until its scheduled fence signals
//     ("Fence is from the same scheduler, only need to wait for it to be scheduled");
//   - any other fence until it signals.
//
// td = max(tq, end of each waited dependency), where tq, the queue event, fires inside
// drm_sched_entity_push_job: the driver logs push_ns right before that call and push_end_ns
// right after it, so the oracle's td is the interval [max(push, ends), max(push_end, ends)]
// (a few µs wide, unless the vCPU stalled inside the call). Nothing here uses the receiver's code;
// the spans (live in the guest, the classic-tracepoint phase, and the tracefs capture
// replayed on the host) are then checked job by job: fence_dependency must end at the
// oracle's td within the rig's clock tolerance (testdata/vgpu/README.md).
package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

type depClass string

const (
	depOwnEntity depClass = "own_entity"      // ignored by the scheduler
	depSameSched depClass = "same_scheduler"  // waited for until its scheduled fence signals
	depOther     depClass = "other_scheduler" // waited for until it signals (here: the other ring)
)

type oracleDep struct {
	fence  string
	class  depClass
	end    int64 // when the scheduler stops waiting for it (unused for depOwnEntity)
	signal int64 // when the fence itself signalled (-1: not logged)
}

type oracleJob struct {
	g                   gtJob
	sched               string
	entityCtx           uint64 // the job's scheduled fence context (= its entity's fence_context)
	push, handover      int64
	scheduled, finished int64
	pushEnd             int64 // after drm_sched_entity_push_job returned (= push when not logged)
	td                  int64 // the oracle's end of fence_dependency: at the earliest …
	tdHi                int64 // … and at the latest (the queue event lies in [push, pushEnd])
	deps                []oracleDep
	waited              bool // some dependency ended after push: a real fence wait
}

// dependencyOracle computes a job's td from its ground-truth line. byFence holds the
// run's other lines: a dependency that is a job of the run must agree with that job's own
// line (the same kernel timestamps, read when each job was freed).
func dependencyOracle(g gtJob, byFence map[string]gtJob) (oracleJob, error) {
	kv := g.kv
	if _, ok := kv["push_ns"]; !ok {
		return oracleJob{}, fmt.Errorf("job %s: the ground truth has no push_ns: the run's vgpu.ko predates the dependency ground truth", g.fence)
	}
	num := func(k string) (int64, error) {
		v, err := strconv.ParseInt(kv[k], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("job %s: field %s=%q: %v", g.fence, k, kv[k], err)
		}
		return v, nil
	}
	o := oracleJob{g: g, sched: kv["sched"]}
	var err error
	for _, f := range []struct {
		k string
		v *int64
	}{{"push_ns", &o.push}, {"handover_ns", &o.handover}, {"scheduled_ns", &o.scheduled}, {"finished_ns", &o.finished}} {
		if *f.v, err = num(f.k); err != nil {
			return o, err
		}
	}
	o.pushEnd = o.push
	if v, err := strconv.ParseInt(kv["push_end_ns"], 10, 64); err == nil && v >= o.push {
		o.pushEnd = v // -1: free_job logged the job before the submit path read the clock
	}
	if o.entityCtx, err = strconv.ParseUint(kv["entity_ctx"], 10, 64); err != nil {
		return o, fmt.Errorf("job %s: entity_ctx %q: %v", g.fence, kv["entity_ctx"], err)
	}
	if own, _, _ := strings.Cut(g.fence, ":"); own != strconv.FormatUint(o.entityCtx+1, 10) {
		return o, fmt.Errorf("job %s: entity_ctx %d, but the finished fence's context is the entity's + 1", g.fence, o.entityCtx)
	}
	list := func(k string) []string {
		if v := kv[k]; v != "" && v != "-" {
			return strings.Split(v, ",")
		}
		return nil
	}
	signal, sched, schedNs, errs, noPipe := list("dep_signal_ns"), list("dep_sched"), list("dep_scheduled_ns"), list("dep_error"), list("dep_dont_pipeline")
	for _, l := range [][]string{signal, sched, schedNs, errs, noPipe} {
		if len(l) != len(g.deps) {
			return o, fmt.Errorf("job %s: %d dependencies but dependency fields of %d entries", g.fence, len(g.deps), len(l))
		}
	}
	o.td = o.push
	for i, d := range g.deps {
		ctxStr, _, _ := strings.Cut(d, ":")
		ctx, err := strconv.ParseUint(ctxStr, 10, 64)
		if err != nil {
			return o, fmt.Errorf("job %s: dependency %q: %v", g.fence, d, err)
		}
		od := oracleDep{fence: d, signal: -1}
		if v, err := strconv.ParseInt(signal[i], 10, 64); err == nil {
			od.signal = v
		}
		switch {
		case ctx == o.entityCtx || ctx == o.entityCtx+1:
			od.class = depOwnEntity
		case sched[i] == o.sched && errs[i] == "0" && noPipe[i] == "0":
			od.class = depSameSched
			if od.end, err = strconv.ParseInt(schedNs[i], 10, 64); err != nil || od.end < 0 {
				return o, fmt.Errorf("job %s: same-scheduler dependency %s has no scheduled time (%q)", g.fence, d, schedNs[i])
			}
		default:
			od.class = depOther
			if od.end, err = strconv.ParseInt(signal[i], 10, 64); err != nil || od.end < 0 {
				return o, fmt.Errorf("job %s: dependency %s has no signal time (%q)", g.fence, d, signal[i])
			}
		}
		if dj, ok := byFence[d]; ok {
			if fin := dj.kv["finished_ns"]; fin != signal[i] {
				return o, fmt.Errorf("job %s: dependency %s signalled at %s, its own line says finished at %s", g.fence, d, signal[i], fin)
			}
			// A scheduled time taken before the push may be drm_sched's rewrite of it (vgpu.c,
			// struct vgpu_signal_cb); after the push it is the callback's, the same as the job's own.
			own, _ := strconv.ParseInt(dj.kv["scheduled_ns"], 10, 64)
			field, _ := strconv.ParseInt(schedNs[i], 10, 64)
			if sched[i] != "-" && field != own && (own > o.push || field > o.push) {
				return o, fmt.Errorf("job %s: dependency %s scheduled at %s, its own line says %s", g.fence, d, schedNs[i], dj.kv["scheduled_ns"])
			}
		}
		if od.class != depOwnEntity && od.end > o.td {
			o.td, o.waited = od.end, true
		}
		o.deps = append(o.deps, od)
	}
	o.tdHi = max(o.td, o.pushEnd)
	return o, nil
}

func dependencyOracles(t *testing.T, gt []gtJob) []oracleJob {
	t.Helper()
	byFence := map[string]gtJob{}
	for _, g := range gt {
		byFence[g.fence] = g
	}
	var out []oracleJob
	for _, g := range gt {
		o, err := dependencyOracle(g, byFence)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, o)
	}
	return out
}

// creditLimit is the vgpu schedulers' credit limit of the run (modules.txt).
func creditLimit(t *testing.T, dir string) int {
	b, err := os.ReadFile(filepath.Join(dir, "modules.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "vgpu credit_limit="); ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil || n < 1 {
				t.Fatalf("modules.txt: %q", line)
			}
			return n
		}
	}
	t.Fatal("modules.txt has no vgpu credit_limit line: the run predates the credit-limit rig")
	return 0
}

// The ground truth on its own, before any span: the oracle agrees with what the kernel did
// (no job ran before the oracle's td), the credit limit held, and the workload produced every
// kind of wait the spans are then checked on.
func TestVirtualGPUDependencyOracle(t *testing.T) {
	dir := vgpuDir(t)
	limit := creditLimit(t, dir)
	for _, phase := range []string{"groundtruth.txt", "groundtruth-classic.txt"} {
		path := filepath.Join(dir, phase)
		if _, err := os.Stat(path); err != nil && phase != "groundtruth.txt" {
			continue
		}
		oracle := dependencyOracles(t, readGroundTruth(t, path))
		classes, telling := map[depClass]int{}, map[depClass]int{}
		creditWaits, waited := 0, 0
		for _, o := range oracle {
			for _, d := range o.deps {
				classes[d.class]++
				// A dependency that tells the rules apart: waiting "until it signals" would
				// end it more than the per-job tolerance later than the rule does.
				if d.class != depOther && d.signal-max(o.push, d.end) > hwBoundMaxErrNs {
					telling[d.class]++
				}
			}
			if o.waited {
				waited++
			}
			// run_job (handover) and the job's scheduled fence come after the scheduler
			// stopped waiting: an oracle td later than either is a wrong oracle.
			// The scheduled fence signals right after run_job returns (drm_sched_fence_scheduled).
			if o.scheduled < o.handover || o.finished < o.g.hwEnd {
				t.Errorf("%s job %s: scheduled at %d before run_job's handover %d, or finished at %d before the hardware's end %d",
					phase, o.g.fence, o.scheduled, o.handover, o.finished, o.g.hwEnd)
			}
			if o.td > o.handover || o.td > o.scheduled {
				t.Errorf("%s job %s: oracle td %d after the job ran (run_job %d, scheduled %d): the oracle contradicts the kernel",
					phase, o.g.fence, o.td, o.handover, o.scheduled)
			}
			// Ring credits: when run_job handed this job over, fewer than credit_limit
			// other jobs of the ring were on the hardware (handed over, not yet ended).
			busyAtRun, busyAtTd := 0, 0
			for _, k := range oracle {
				if k.g.ring != o.g.ring || k.g.fence == o.g.fence {
					continue
				}
				if k.handover < o.handover && k.g.hwEnd > o.handover {
					busyAtRun++
				}
				if k.handover <= o.td && k.finished > o.td {
					busyAtTd++
				}
			}
			if busyAtRun >= limit {
				t.Errorf("%s job %s ran with %d jobs of ring %d still on the hardware (credit limit %d)", phase, o.g.fence, busyAtRun, o.g.ring, limit)
			}
			// Runnable at td with the ring full: it waited for credits (scheduler_queue).
			if busyAtTd >= limit && o.handover > o.td {
				creditWaits++
			}
		}
		t.Logf("%s: %d jobs, dependencies %v (ending > %d ns before their fence signalled: %v), %d jobs really waited for a fence, %d runnable jobs found the ring full (credit limit %d)",
			phase, len(oracle), classes, hwBoundMaxErrNs, telling, waited, creditWaits, limit)
		if phase != "groundtruth.txt" {
			continue
		}
		for _, c := range []depClass{depOwnEntity, depSameSched, depOther} {
			if classes[c] == 0 {
				t.Errorf("no %s dependency in the run: the workload did not exercise that rule", c)
			}
		}
		if telling[depOwnEntity]+telling[depSameSched] == 0 {
			t.Errorf("no own-entity or same-scheduler dependency signalled more than %d ns after the rules stopped the wait: the spans cannot tell the rules from \"until it signals\"", hwBoundMaxErrNs)
		}
		if creditWaits == 0 {
			t.Errorf("no job found its ring full: the credit limit (%d) never held a runnable job back", limit)
		}
	}
}

// linkWait is the ghostdriver.dependency.wait value of a link for each oracle class.
var linkWait = map[depClass]string{depOwnEntity: "own_entity", depSameSched: "same_scheduler", depOther: "fence_signal"}

func linkTo(s, target ptrace.Span) (ptrace.SpanLink, bool) {
	for i := 0; i < s.Links().Len(); i++ {
		if l := s.Links().At(i); l.SpanID() == target.SpanID() {
			return l, true
		}
	}
	return ptrace.SpanLink{}, false
}

// spanSet is one observation of the run: its spans and the offset of their clock to
// CLOCK_MONOTONIC.
type spanSet struct {
	name      string
	gt, spans string // files
	clock     string // clock file ("" = span timestamps are CLOCK_MONOTONIC already)
	log       string // receiver log with the lost-event count ("" = nothing can be lost)
}

// The spans' fence_dependency against the oracle, job by job.
func TestVirtualGPUDependencyWaits(t *testing.T) {
	dir := vgpuDir(t)
	sets := []spanSet{
		{name: "live", gt: "groundtruth.txt", spans: "spans.json", clock: "clock.txt", log: "ghostdriver.log"},
		{name: "jobs", gt: "groundtruth.txt", spans: "spans-jobs.json", clock: "clock-jobs.txt", log: "ghostdriver-jobs.log"},
		{name: "classic", gt: "groundtruth-classic.txt", spans: "spans-classic.json", clock: "clock-classic.txt", log: "ghostdriver-classic.log"},
		{name: "replay", gt: "groundtruth.txt", spans: "spans-replay.json"},
	}
	ran := 0
	for _, set := range sets {
		if _, err := os.Stat(filepath.Join(dir, set.spans)); err != nil {
			t.Logf("%s: no %s in this run", set.name, set.spans)
			continue
		}
		ran++
		t.Run(set.name, func(t *testing.T) { checkDependencyWaits(t, dir, set) })
	}
	if ran == 0 {
		t.Fatal("no span file to check (spans.json, spans-classic.json, spans-replay.json)")
	}
}

func checkDependencyWaits(t *testing.T, dir string, set spanSet) {
	oracle := dependencyOracles(t, readGroundTruth(t, filepath.Join(dir, set.gt)))
	jobs := readJobSpans(t, filepath.Join(dir, set.spans))
	var offset int64
	if set.clock != "" {
		offset = readClockOffset(t, filepath.Join(dir, set.clock))
	}
	lost := 0
	if set.log != "" {
		lost = reportedLostIn(t, filepath.Join(dir, set.log))
	}
	mono := func(ts uint64) int64 { return int64(ts) - offset }
	damage := &jobDamage{}
	var errs []int64
	outliers, checked, ownOnly := 0, 0, 0
	byClass := map[string][]int64{}
	for _, o := range oracle {
		damage.endJob()
		sj, ok := jobs[o.g.fence]
		if !ok {
			damage.errorf("job %s: no gpu.job span", o.g.fence)
			continue
		}
		fd, ok := sj.stages["fence_dependency"]
		if !ok {
			damage.errorf("job %s: no fence_dependency span (stages %v)", o.g.fence, stageNames(sj))
			continue
		}
		tq, td := mono(uint64(fd.StartTimestamp())), mono(uint64(fd.EndTimestamp()))
		rule := attrStr(fd, "ghostdriver.stage.rule")
		checked++
		class := "no_dependency"
		if len(o.deps) > 0 {
			class = string(o.deps[0].class)
			for _, d := range o.deps[1:] {
				if string(d.class) != class {
					class = "mixed"
				}
			}
		}
		// A job whose every dependency is its own entity's waits for no fence.
		if len(o.deps) > 0 && !o.waited && class == string(depOwnEntity) {
			ownOnly++
			if td != tq {
				damage.errorf("job %s: depends only on its own entity (%v) but fence_dependency lasts %d ns (%s)", o.g.fence, o.g.deps, td-tq, rule)
			}
		}
		var d int64 // distance from the oracle's interval
		switch {
		case td < o.td:
			d = td - o.td
		case td > o.tdHi:
			d = td - o.tdHi
		}
		errs = append(errs, abs(d))
		byClass[class] = append(byClass[class], abs(d))
		if abs(d) > hwBoundMaxErrNs {
			outliers++
			msg := fmt.Sprintf("job %s (%s deps %v): fence_dependency ends at %d (%s), the oracle's td is [%d, %d] (push %d … %d, run %d): off by %d ns",
				o.g.fence, class, o.g.deps, td, rule, o.td, o.tdHi, o.push, o.pushEnd, o.handover, d)
			if abs(d) > hwBoundOutlierNs {
				damage.errorf("%s", msg)
			} else {
				t.Log("outlier: " + msg)
			}
		}
		// Every dependency the scheduler really waited for (one that ended after the push;
		// one already signalled then need not be reported by the scheduler) is a link, and a
		// link names the rule the scheduler applied (ghostdriver.dependency.wait).
		for _, dep := range o.deps {
			ds, ok := jobs[dep.fence]
			if !ok {
				continue
			}
			link, linked := linkTo(sj.job, ds.job)
			if !linked {
				if dep.class != depOwnEntity && dep.end > o.push {
					damage.errorf("job %s: no span link to its dependency %s", o.g.fence, dep.fence)
				}
				continue
			}
			if w := mapStr(link.Attributes(), "ghostdriver.dependency.wait"); w != linkWait[dep.class] {
				damage.errorf("job %s: link to %s says the scheduler waited %q, the oracle says %s (%q)",
					o.g.fence, dep.fence, w, dep.class, linkWait[dep.class])
			}
		}
	}
	damage.report(t, lost)
	if outliers > outliersAllowed(checked) {
		t.Errorf("%d of %d jobs have fence_dependency off the oracle by more than %d ns (at most %d may)", outliers, checked, hwBoundMaxErrNs, outliersAllowed(checked))
	}
	if m := median(errs); m > hwBoundMedianErrNs {
		t.Errorf("median |fence_dependency end − oracle td| = %d ns > %d", m, hwBoundMedianErrNs)
	}
	for c, v := range byClass {
		t.Logf("%s: %-16s %3d jobs: |Δ td| median %d ns, max %d ns", set.name, c, len(v), median(v), maxOf(v))
	}
	if checked == 0 || ownOnly == 0 {
		t.Errorf("%s: %d jobs checked, %d with only own-entity dependencies: the rig did not exercise the rules", set.name, checked, ownOnly)
	}
}
