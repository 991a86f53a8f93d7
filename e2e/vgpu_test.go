// The live source against ground truth: the virtual GPU rig (testdata/vgpu) boots a real
// kernel with a real DRM driver under QEMU, runs `ghostdriver live` in the guest while a
// test app submits jobs, and brings back the spans, the driver's own log of what its fake
// hardware did, and the CLOCK_MONOTONIC→wall offset the receiver used. This test checks
// the spans against that log. `make test-vgpu` runs it once per kernel with
// GHOSTDRIVER_VGPU_OUT pointing at the run's artifacts.
package e2e

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/ghostdriver/ghostdriver/internal/testreq"
)

// Tolerances for hardware start/end, tabled and justified in testdata/vgpu/README.md
// ("Timer noise and clock agreement"): under TCG the tracepoint timestamps and the driver's ktime_get_ns() taken
// at the same point differ by p50 1–19 µs and typically ≤ 1 ms on a loaded host. The two
// are separate instructions, so when the host deschedules QEMU's vCPU thread between them
// (seen: 11.7 ms once, host load average 6.6) one bound of one job is off by the stall:
// up to 5 % of the jobs (at least 2: when the classic phase ran ≈ 23 jobs, 5 % allowed
// one stall a run, and two were seen on 2026-12-03 in 2 of 13 7.3 runs on an idle host)
// may exceed hwBoundMaxErrNs, but none hwBoundOutlierNs. Counted by stamp: a job's execution
// start inferred from the previous job's end on its ring is the same stamp, and one stall
// then puts two jobs' bounds off (seen on 2026-12-04 on 6.1 at load ≈ 4: two stalls, four
// jobs, in the receiver that runs second on the tracepoint).
const (
	hwBoundMaxErrNs     = 2_000_000
	hwBoundOutlierNs    = 50_000_000
	hwBoundMedianErrNs  = 100_000
	hwBoundOutlierShare = 0.05
	hwBoundOutlierMin   = 2
)

// outliersAllowed is how many of n jobs may have a bound beyond hwBoundMaxErrNs.
func outliersAllowed(n int) int {
	return max(hwBoundOutlierMin, int(hwBoundOutlierShare*float64(n)))
}

type gtJob struct {
	ring, pid, tid int
	fence          string
	hwStart, hwEnd int64
	deps           []string
	kv             map[string]string // every field of the line (vgpu_deps_test.go reads the dependency ones)
}

// jobOf returns the span of ground-truth job g, or nil (an error) when it has none, and
// checks that the span names the process, thread and ring the driver saw, reporting a
// mismatch with report (t.Errorf, or a jobDamage's errorf).
func jobOf(t *testing.T, jobs map[string]*spanJob, g gtJob, report func(format string, args ...any)) *spanJob {
	t.Helper()
	sj, ok := jobs[g.fence]
	if !ok {
		t.Errorf("job %s (pid %d tid %d ring %d) has no gpu.job span", g.fence, g.pid, g.tid, g.ring)
		return nil
	}
	if sj.pid != int64(g.pid) {
		report("job %s: process.pid %d, the driver saw pid %d", g.fence, sj.pid, g.pid)
	}
	if tid, _ := sj.job.Attributes().Get("thread.id"); tid.Int() != int64(g.tid) {
		report("job %s: thread.id %d, the driver saw tid %d", g.fence, tid.Int(), g.tid)
	}
	if ring := attrStr(sj.job, "ghostdriver.ring"); ring != fmt.Sprintf("vgpu-ring%d", g.ring) {
		report("job %s: ring %q, want vgpu-ring%d", g.fence, ring, g.ring)
	}
	return sj
}

type spanJob struct {
	job    ptrace.Span
	pid    int64
	res    pcommon.Map // the job's resource (its tenant)
	stages map[string]ptrace.Span
}

func vgpuDir(t *testing.T) string {
	dir := os.Getenv("GHOSTDRIVER_VGPU_OUT")
	if dir == "" {
		testreq.Skip(t, testreq.VGPU, "GHOSTDRIVER_VGPU_OUT is not set: this test checks the artifacts of a virtual GPU run; `make test-vgpu` runs the rig and sets it")
	}
	return dir
}

// rigReceiverRan skips or fails a check of the receiver's output in a guest where the
// receiver did not run (host.txt: ghostdriver=no): a plain skip when the run was told to
// leave it out (VGPU_NO_GHOSTDRIVER, run.sh), the rig's failure otherwise.
func rigReceiverRan(t *testing.T, dir string) {
	t.Helper()
	host, err := os.ReadFile(filepath.Join(dir, "host.txt"))
	if err != nil || !strings.Contains(string(host), "ghostdriver=no") {
		return
	}
	if os.Getenv("VGPU_NO_GHOSTDRIVER") != "" {
		t.Skip("the run left the receiver out (VGPU_NO_GHOSTDRIVER)")
	}
	testreq.Skip(t, testreq.VGPU, "the receiver did not run in this guest (host.txt: ghostdriver=no) although VGPU_NO_GHOSTDRIVER is not set")
}

// rigPhase skips or fails a check of one receiver phase whose artifact (file) this run
// lacks: a plain skip when the run was told to leave the phase out (env set empty, run.sh),
// the rig's failure otherwise. env "" names a phase that cannot be left out.
func rigPhase(t *testing.T, dir, file, env string) {
	t.Helper()
	rigReceiverRan(t, dir)
	if v, ok := os.LookupEnv(env); env != "" && ok && v == "" {
		t.Skipf("the run left this phase out (%s=\"\")", env)
	}
	if _, err := os.Stat(filepath.Join(dir, file)); err != nil {
		testreq.Skip(t, testreq.VGPU, fmt.Sprintf("no %s in this run, and the run did not leave its phase out: %v", file, err))
	}
}

func readGroundTruth(t *testing.T, path string) []gtJob {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []gtJob
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "ring=") {
			continue
		}
		kv := map[string]string{}
		for _, fld := range strings.Fields(line) {
			if k, v, ok := strings.Cut(fld, "="); ok {
				kv[k] = v
			}
		}
		num := func(k string) int64 {
			v, err := strconv.ParseInt(kv[k], 10, 64)
			if err != nil {
				t.Fatalf("groundtruth %q: field %s: %v", line, k, err)
			}
			return v
		}
		j := gtJob{ring: int(num("ring")), pid: int(num("pid")), tid: int(num("tid")), fence: kv["fence"],
			hwStart: num("hw_start_ns"), hwEnd: num("hw_end_ns"), kv: kv}
		if d := kv["deps"]; d != "" && d != "-" {
			j.deps = strings.Split(d, ",")
		}
		out = append(out, j)
	}
	if len(out) == 0 {
		t.Fatalf("%s holds no jobs", path)
	}
	return out
}

func readClockOffset(t *testing.T, path string) int64 {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	v, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "mono_to_wall_offset_ns=")
	if !ok {
		t.Fatalf("%s: unexpected content %q", path, b)
	}
	off, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return off
}

func readJobSpans(t *testing.T, path string) map[string]*spanJob {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	jobs := map[string]*spanJob{}
	byID := map[string]*spanJob{}
	var kids []ptrace.Span
	var um ptrace.JSONUnmarshaler
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		td, err := um.UnmarshalTraces(sc.Bytes())
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		for i := 0; i < td.ResourceSpans().Len(); i++ {
			rs := td.ResourceSpans().At(i)
			var pid int64
			if v, ok := rs.Resource().Attributes().Get("process.pid"); ok {
				pid = v.Int()
			}
			for j := 0; j < rs.ScopeSpans().Len(); j++ {
				sp := rs.ScopeSpans().At(j).Spans()
				for k := 0; k < sp.Len(); k++ {
					s := ptrace.NewSpan()
					sp.At(k).CopyTo(s)
					if s.Name() != "gpu.job" {
						kids = append(kids, s)
						continue
					}
					ctx, _ := s.Attributes().Get("ghostdriver.fence.context")
					seq, _ := s.Attributes().Get("ghostdriver.fence.seqno")
					key := fmt.Sprintf("%d:%d", ctx.Int(), seq.Int())
					if _, dup := jobs[key]; dup {
						t.Errorf("two gpu.job spans for fence %s", key)
					}
					res := pcommon.NewMap()
					rs.Resource().Attributes().CopyTo(res)
					sj := &spanJob{job: s, pid: pid, res: res, stages: map[string]ptrace.Span{}}
					jobs[key] = sj
					byID[s.SpanID().String()] = sj
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	for _, k := range kids {
		sj, ok := byID[k.ParentSpanID().String()]
		if !ok {
			t.Errorf("stage span %s has no gpu.job parent", k.Name())
			continue
		}
		if _, dup := sj.stages[k.Name()]; dup {
			t.Errorf("job has two %s spans", k.Name())
		}
		sj.stages[k.Name()] = k
	}
	return jobs
}

func attrStr(s ptrace.Span, k string) string {
	v, ok := s.Attributes().Get(k)
	if !ok {
		return ""
	}
	return v.AsString()
}

// jobDamage collects what a test found wrong with each job. The receiver counts the events
// the kernel skipped (recursion protection: on the preemptible 7.3 guest under TCG a task
// is now and then preempted inside a program, and the next task on that CPU skips it) or
// could not reserve (reportedLost). A lost event damages at most one job, so up to that
// many damaged jobs are logged as explained by the loss; beyond it every finding is an
// error. Nothing may go wrong uncounted, and with nothing lost every finding fails.
type jobDamage struct {
	cur  []string
	jobs [][]string
}

func (d *jobDamage) errorf(format string, args ...any) {
	d.cur = append(d.cur, fmt.Sprintf(format, args...))
}

// endJob closes the findings of the current job (call it before each job).
func (d *jobDamage) endJob() {
	if len(d.cur) > 0 {
		d.jobs = append(d.jobs, d.cur)
		d.cur = nil
	}
}

func (d *jobDamage) report(t *testing.T, lost int) {
	t.Helper()
	d.reportAgainst(t, lost, "lost events")
}

// reportAgainst accepts the jobs with findings when the receiver counted at least as many
// of what explains them (n of what), and fails with every finding otherwise.
func (d *jobDamage) reportAgainst(t *testing.T, n int, what string) {
	t.Helper()
	d.endJob()
	if len(d.jobs) <= n {
		for _, f := range d.jobs {
			t.Logf("explained by the %d %s the receiver counted: %s", n, what, strings.Join(f, "; "))
		}
		return
	}
	t.Errorf("%d jobs have findings, the receiver counted %d %s", len(d.jobs), n, what)
	for _, f := range d.jobs {
		for _, e := range f {
			t.Error(e)
		}
	}
}

// mapStr is a string attribute of m, "" when absent.
func mapStr(m pcommon.Map, k string) string {
	if v, ok := m.Get(k); ok {
		return v.AsString()
	}
	return ""
}

// guestFacts is the named key=value lines of the guest's guest.txt, joined ("key=?" when absent).
func guestFacts(dir string, keys ...string) string {
	b, _ := os.ReadFile(filepath.Join(dir, "guest.txt"))
	var out []string
	for _, k := range keys {
		v := "?"
		for _, line := range strings.Split(string(b), "\n") {
			if rest, ok := strings.CutPrefix(line, k+"="); ok {
				v = rest
			}
		}
		out = append(out, k+"="+v)
	}
	return strings.Join(out, "; ")
}

// reportedLost is what the receiver itself counted as lost in the kernel (ring buffer
// reserve failures and program runs the kernel skipped), from its summary.
func reportedLost(t *testing.T, dir string) int {
	return reportedLostIn(t, filepath.Join(dir, "ghostdriver.log"))
}

func reportedLostIn(t *testing.T, path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "events lost before decoding: "); ok {
			// "N" or "N (ring buffer full: A, program runs the kernel skipped: B)"
			v, _, _ = strings.Cut(strings.TrimSpace(v), " ")
			n, err := strconv.Atoi(v)
			if err != nil {
				t.Fatalf("ghostdriver.log: %q", line)
			}
			return n
		}
	}
	return 0
}

// unmatchedIn is the count of kind in the summary's "job events that matched no job" list
// (internal/summary: "...; job events that matched no job: job_done=3 job_run=1"), 0 when the
// log has none.
func unmatchedIn(t *testing.T, path, kind string) int {
	return summaryCount(t, path, "job events that matched no job: ", kind)
}

// summaryCount reads key=N from the first summary line with marker, in the list after the
// marker (0 when absent).
func summaryCount(t *testing.T, path, marker, key string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		_, list, ok := strings.Cut(line, marker)
		if !ok {
			continue
		}
		for _, kv := range strings.Fields(list) {
			if v, ok := strings.CutPrefix(kv, key+"="); ok {
				n, err := strconv.Atoi(v)
				if err != nil {
					t.Fatalf("%s: %q", path, line)
				}
				return n
			}
		}
	}
	return 0
}

// The main phase's live spans against the hardware's log, from both receivers the guest
// runs side by side: events mode (spans.json) and the per-job record mode (spans-jobs.json,
// when the run has it).
func TestVirtualGPUSpansMatchGroundTruth(t *testing.T) {
	dir := vgpuDir(t)
	t.Run("events", func(t *testing.T) { checkSpansMatchGroundTruth(t, dir, "spans.json", "clock.txt", "ghostdriver.log") })
	t.Run("jobs", func(t *testing.T) {
		rigPhase(t, dir, "spans-jobs.json", "GHOSTDRIVER_JOBS_ARGS")
		checkSpansMatchGroundTruth(t, dir, "spans-jobs.json", "clock-jobs.txt", "ghostdriver-jobs.log")
	})
}

func checkSpansMatchGroundTruth(t *testing.T, dir, spansFile, clockFile, logFile string) {
	gt := readGroundTruth(t, filepath.Join(dir, "groundtruth.txt"))
	offset := readClockOffset(t, filepath.Join(dir, clockFile))
	jobs := readJobSpans(t, filepath.Join(dir, spansFile))
	mono := func(ts uint64) int64 { return int64(ts) - offset }

	if len(jobs) != len(gt) {
		t.Errorf("%d gpu.job spans for %d jobs the hardware ran", len(jobs), len(gt))
	}
	stages := []string{"ioctl", "bo_validation", "fence_dependency", "scheduler_queue", "ring_emission", "dma_scheduling", "execution", "fence_signal"}
	var startErrs, endErrs []int64
	offStamps := map[pcommon.Timestamp]bool{} // hardware bounds off by more than hwBoundMaxErrNs
	// On the preemptible 7.3 kernel under TCG the kernel occasionally skips a tracing
	// program (recursion protection when a task is preempted inside it) or a reservation
	// fails; the receiver counts both. A job whose submit-ioctl entry was among them has
	// no ioctl/bo_validation span and no driver name (read at that hook). Such jobs are
	// accepted only up to the number of events the receiver reported lost: nothing may
	// go missing uncounted.
	lost, damage := reportedLostIn(t, filepath.Join(dir, logFile)), &jobDamage{}
	// Where the guest kernel refuses every fentry (no ftrace direct calls: arm64 6.1,
	// e2e/vgpu_fentry_test.go), the ioctl comes from the syscall tracepoints, which do not
	// name the DRM driver, and nothing measures BO validation: the receiver infers it.
	noFentry := fentryRefusedByKernel(t, dir)
	for _, g := range gt {
		damage.endJob()
		sj := jobOf(t, jobs, g, damage.errorf)
		if sj == nil {
			continue
		}
		s := sj.job
		_, hasIoctl := sj.stages["ioctl"]
		_, hasBO := sj.stages["bo_validation"]
		drv := attrStr(s, "ghostdriver.driver")
		if !hasIoctl && !hasBO && drv == "" {
			damage.errorf("job %s: no ioctl-side stages and no driver (its ioctl entry event was lost?)", g.fence)
		} else if noFentry && drv == "" {
			// no hook that reads the driver's name could attach
		} else if drv != "vgpu" {
			damage.errorf("job %s: driver %q, want vgpu (the DRM driver of the submitting file)", g.fence, drv)
		}
		if out := attrStr(s, "ghostdriver.job.outcome"); out != "completed" {
			damage.errorf("job %s: outcome %q (%s)", g.fence, out, s.Status().Message())
		}
		for _, st := range stages {
			if _, ok := sj.stages[st]; !ok && !(!hasIoctl && !hasBO && drv == "" && (st == "ioctl" || st == "bo_validation")) {
				damage.errorf("job %s: no %s span (has %d stages)", g.fence, st, len(sj.stages))
			}
		}
		// What fentry/fexit and tracepoints measure in the guest must say so.
		for _, st := range []string{"ioctl", "bo_validation", "fence_signal"} {
			if st == "bo_validation" && noFentry {
				continue
			}
			if sp, ok := sj.stages[st]; ok && attrStr(sp, "ghostdriver.stage.source") != "measured" {
				damage.errorf("job %s: %s is %s (%s), want measured", g.fence, st, attrStr(sp, "ghostdriver.stage.source"), attrStr(sp, "ghostdriver.stage.rule"))
			}
		}
		// Ring emission ends where the driver handed the job to the ring: the hardware
		// fence's dma_fence_emit (or fexit of the driver's run_job), never a fallback.
		if re, ok := sj.stages["ring_emission"]; ok {
			if r := attrStr(re, "ghostdriver.stage.rule"); !strings.HasSuffix(r, "→dma_fence_emit") && !strings.HasSuffix(r, "→fexit:vgpu_run_job") {
				damage.errorf("job %s: ring_emission ends by %q, want dma_fence_emit or fexit of vgpu_run_job", g.fence, r)
			}
		}
		ex, ok := sj.stages["execution"]
		if !ok {
			continue
		}
		if r := attrStr(ex, "ghostdriver.stage.rule"); !strings.HasSuffix(r, "→dma_fence_signaled") {
			damage.errorf("job %s: execution end is %q, want the hardware fence's signal", g.fence, r)
		}
		ds, de := mono(uint64(ex.StartTimestamp()))-g.hwStart, mono(uint64(ex.EndTimestamp()))-g.hwEnd
		startErrs, endErrs = append(startErrs, abs(ds)), append(endErrs, abs(de))
		if abs(ds) > hwBoundMaxErrNs || abs(de) > hwBoundMaxErrNs {
			// One stall makes one stamp late; where a job's start is inferred from the
			// previous job's end on its ring (ring_serial), that stamp bounds both jobs: a
			// stamp is counted once, whichever jobs it bounds.
			if abs(ds) > hwBoundMaxErrNs {
				offStamps[ex.StartTimestamp()] = true
			}
			if abs(de) > hwBoundMaxErrNs {
				offStamps[ex.EndTimestamp()] = true
			}
			msg := fmt.Sprintf("job %s: execution [%d, %d] vs hardware [%d, %d] (mono ns): off by %d / %d ns",
				g.fence, mono(uint64(ex.StartTimestamp())), mono(uint64(ex.EndTimestamp())), g.hwStart, g.hwEnd, ds, de)
			if abs(ds) > hwBoundOutlierNs || abs(de) > hwBoundOutlierNs {
				damage.errorf("%s", msg)
			} else {
				t.Log("outlier: " + msg)
			}
		}
	}
	damage.report(t, lost)
	if outliers := len(offStamps); outliers > outliersAllowed(len(gt)) {
		t.Errorf("%d stamps of %d jobs' hardware bounds are off by more than %d ns (at most %d may)", outliers, len(gt), hwBoundMaxErrNs, outliersAllowed(len(gt)))
	}
	if m := median(startErrs); m > hwBoundMedianErrNs {
		t.Errorf("median |execution start − hw_start| = %d ns > %d", m, hwBoundMedianErrNs)
	}
	if m := median(endErrs); m > hwBoundMedianErrNs {
		t.Errorf("median |execution end − hw_end| = %d ns > %d", m, hwBoundMedianErrNs)
	}
	t.Logf("%d jobs; |Δ hw_start| median %d ns max %d ns; |Δ hw_end| median %d ns max %d ns",
		len(gt), median(startErrs), maxOf(startErrs), median(endErrs), maxOf(endErrs))
}

func abs(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

func median(v []int64) int64 {
	if len(v) == 0 {
		return 0
	}
	c := append([]int64(nil), v...)
	sort.Slice(c, func(i, j int) bool { return c[i] < c[j] })
	return c[len(c)/2]
}

func maxOf(v []int64) int64 {
	var m int64
	for _, x := range v {
		m = max(m, x)
	}
	return m
}

// Real GPU drivers loaded in the guest without hardware (amdgpu and i915; xe on the newer
// kernel): their driver-specific programs must load and attach, and every program that
// could not must say why.
func TestVirtualGPUDriverProgramsAttach(t *testing.T) {
	dir := vgpuDir(t)
	mods, err := os.ReadFile(filepath.Join(dir, "modules.txt"))
	if err != nil {
		t.Fatal(err)
	}
	log, err := os.ReadFile(filepath.Join(dir, "ghostdriver.log"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"amdgpu", "i915"}
	if strings.Contains(string(mods), "label=7.3") {
		want = append(want, "xe")
	}
	if v, ok := os.LookupEnv("VGPU_OPTIONAL_DRIVERS"); ok {
		want = strings.Fields(v) // the run was told to load these (possibly none)
	} else if v, ok := hostValue(t, dir, "optional_drivers"); ok {
		want = strings.Fields(v) // what run.sh loaded in this run (host.txt)
	}
	loaded := map[string]bool{}
	for _, line := range strings.Split(string(mods), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[1] == "loaded" {
			loaded[f[0]] = true
		}
	}
	// The events the guest kernel has (formats.txt: every format file of the GPU event
	// systems in its tracefs): each of our driver programs for one of them must attach.
	present := map[string]bool{}
	if fm, err := os.ReadFile(filepath.Join(dir, "formats.txt")); err == nil {
		for _, line := range strings.Split(string(fm), "\n") {
			if name, ok := strings.CutPrefix(line, "name: "); ok {
				present[strings.TrimSpace(name)] = true
			}
		}
	} else {
		t.Fatal(err)
	}
	isDriver := map[string]bool{"amdgpu": true, "i915": true, "xe": true, "msm": true}
	attached, unavailable := map[string]int{}, map[string]int{}
	attachedEv, missedEv := map[string]bool{}, map[string]string{}
	for _, line := range strings.Split(string(log), "\n") {
		f := strings.Fields(line)
		if len(f) < 3 {
			continue
		}
		ev := f[1][strings.LastIndexByte(f[1], '/')+1:]
		switch f[2] {
		case "attached":
			attached[f[0]]++
			attachedEv[ev] = true
		case "unavailable":
			unavailable[f[0]]++
			if len(f) < 4 {
				t.Errorf("capability report line without a reason: %q", line)
			}
			if isDriver[f[0]] {
				missedEv[ev] = line
			}
		}
	}
	for ev, line := range missedEv {
		if present[ev] && !attachedEv[ev] {
			t.Errorf("the guest kernel has %s (formats.txt) but no rung attached: %q", ev, line)
		}
	}
	for _, d := range want {
		if !loaded[d] {
			t.Errorf("driver module %s did not load in the guest (modules.txt)", d)
			continue
		}
		if attached[d] == 0 {
			t.Errorf("%s is loaded but none of its programs attached (%d unavailable)", d, unavailable[d])
		}
		t.Logf("%s: %d programs attached, %d unavailable (tracepoints the kernel was built without)", d, attached[d], unavailable[d])
	}
}

// appJob is one job line of app.txt (testdata/vgpu/app/vgpu_app.c): who submitted it and
// which application context the submitting thread had (ctx=otep4947|traceparent|none,
// with trace= and span= for the first two).
type appJob struct {
	pid, tid    int64
	fence       string
	thread, dep string
	ctx         string
	trace, span string
}

func readAppJobs(t *testing.T, path string) []appJob {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []appJob
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "job ") {
			continue
		}
		kv := map[string]string{}
		for _, fld := range strings.Fields(line) {
			if k, v, ok := strings.Cut(fld, "="); ok {
				kv[k] = v
			}
		}
		pid, err1 := strconv.ParseInt(kv["pid"], 10, 64)
		tid, err2 := strconv.ParseInt(kv["tid"], 10, 64)
		if err1 != nil || err2 != nil || kv["fence"] == "" {
			t.Fatalf("app.txt: malformed job line %q", line)
		}
		out = append(out, appJob{pid: pid, tid: tid, fence: kv["fence"], thread: kv["thread"], dep: kv["dep"],
			ctx: kv["ctx"], trace: kv["trace"], span: kv["span"]})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// The application-context tiers end to end, in the guest: process A's two threads publish
// OTEP 4947 records with different active spans (changing every 4 jobs), process B has only
// TRACEPARENT, process C has neither. Every job span must carry the context its submitting
// thread had at the submit ioctl, C's jobs are roots with tenant attributes, and a job that
// waited for another process's fence links that job's span (in the other trace).
func TestVirtualGPUAppContext(t *testing.T) {
	dir := vgpuDir(t)
	// Without fentry (vgpu_fentry_test.go) no hook names the DRM driver on 6.1: see
	// checkSpansMatchGroundTruth.
	noFentry := fentryRefusedByKernel(t, dir)
	app := readAppJobs(t, filepath.Join(dir, "app.txt"))
	gt := readGroundTruth(t, filepath.Join(dir, "groundtruth.txt"))
	jobs := readJobSpans(t, filepath.Join(dir, "spans.json"))
	gtByFence := map[string]gtJob{}
	for _, g := range gt {
		gtByFence[g.fence] = g
	}
	appByFence := map[string]appJob{}
	for _, a := range app {
		appByFence[a.fence] = a
	}

	perCtx := map[string]int{}
	threadTraces := map[string]string{}         // A's thread name -> its trace id
	threadSpans := map[string]map[string]bool{} // A's thread name -> active spans seen
	ctxPIDs := map[string]map[int64]bool{}      // context kind -> processes
	crossLinks := 0
	damage := &jobDamage{}
	unreadable := &jobDamage{} // OTEP 4947 jobs that went out without any context
	for _, a := range app {
		damage.endJob()
		unreadable.endJob()
		perCtx[a.ctx]++
		if ctxPIDs[a.ctx] == nil {
			ctxPIDs[a.ctx] = map[int64]bool{}
		}
		ctxPIDs[a.ctx][a.pid] = true
		sj, ok := jobs[a.fence]
		if !ok {
			t.Errorf("job %s (%s, ctx %s) has no gpu.job span", a.fence, a.thread, a.ctx)
			continue
		}
		s := sj.job
		if g, ok := gtByFence[a.fence]; !ok || int64(g.pid) != a.pid || int64(g.tid) != a.tid {
			t.Errorf("job %s: app.txt and the ground truth disagree on the submitter", a.fence)
		}
		tier := attrStr(s, "ghostdriver.context.tier")
		if tid, _ := s.Attributes().Get("thread.id"); tid.Int() != a.tid {
			damage.errorf("job %s (%s): thread.id %d, submitted by tid %d", a.fence, a.thread, tid.Int(), a.tid)
		}
		if pid, _ := sj.res.Get("process.pid"); pid.Int() != a.pid {
			damage.errorf("job %s (%s): resource process.pid %d, submitted by pid %d", a.fence, a.thread, pid.Int(), a.pid)
		}
		if _, hasIoctl := sj.stages["ioctl"]; !hasIoctl && a.ctx == "otep4947" {
			// The thread context is read at the submit ioctl's entry; when the kernel
			// lost that event (counted by the receiver) the job has no context. Accepted
			// only up to the reported loss, as in TestVirtualGPUSpansMatchGroundTruth.
			damage.errorf("job %s (%s): no ioctl span, so no thread context (tier %q): its ioctl entry event was lost?", a.fence, a.thread, tier)
			continue
		}
		switch a.ctx {
		case "otep4947", "traceparent":
			if len(a.trace) != 32 || len(a.span) != 16 {
				t.Fatalf("job %s: app.txt has no trace/span ids for ctx=%s", a.fence, a.ctx)
			}
			if tier == "none" && a.ctx == "otep4947" {
				// No context at all: the kernel's read of the thread's record may have
				// faulted (its memory being collapsed or migrated at that instant), which
				// the receiver counts. Accepted only up to that count, below.
				unreadable.errorf("job %s (%s): no context, want the thread's trace %s span %s", a.fence, a.thread, a.trace, a.span)
				break // the switch: the job's other checks go on
			}
			if tier != a.ctx {
				damage.errorf("job %s (%s): context tier %q, want %s", a.fence, a.thread, tier, a.ctx)
			}
			if got := s.TraceID().String(); got != a.trace {
				damage.errorf("job %s (%s, %s): trace id %s, the thread's is %s", a.fence, a.thread, a.ctx, got, a.trace)
			}
			if got := s.ParentSpanID().String(); got != a.span {
				damage.errorf("job %s (%s, %s): parent span %s, the thread's active span is %s", a.fence, a.thread, a.ctx, got, a.span)
			}
			if a.ctx == "otep4947" {
				if prev, ok := threadTraces[a.thread]; ok && prev != a.trace {
					t.Errorf("thread %s published two trace ids (%s, %s)", a.thread, prev, a.trace)
				}
				threadTraces[a.thread] = a.trace
				if threadSpans[a.thread] == nil {
					threadSpans[a.thread] = map[string]bool{}
				}
				threadSpans[a.thread][a.span] = true
			}
		case "none":
			if tier != "none" {
				damage.errorf("job %s (%s): context tier %q, want none", a.fence, a.thread, tier)
			}
			if !s.ParentSpanID().IsEmpty() {
				damage.errorf("job %s (%s): parent span %s, want a root span (the process has no context)", a.fence, a.thread, s.ParentSpanID())
			}
			if svc := mapStr(sj.res, "service.name"); svc != "vgpu_app" {
				damage.errorf("job %s (%s): service.name %q, want the executable name vgpu_app", a.fence, a.thread, svc)
			}
			if exe := mapStr(sj.res, "process.executable.name"); exe != "vgpu_app" {
				damage.errorf("job %s (%s): process.executable.name %q, want vgpu_app", a.fence, a.thread, exe)
			}
			// The tenant attributes the guest can give a root span: the device the job ran
			// on (driver and kind from sysfs; vgpu is a platform device: no PCI address, no
			// SR-IOV parent) and, on 6.17+ events, the DRM client id.
			for k, want := range map[string]string{"ghostdriver.driver": "vgpu", "hw.type": "gpu", "ghostdriver.gpu.sriov_vf": "false"} {
				if got := attrStr(s, k); got != want && !(k == "ghostdriver.driver" && got == "" && noFentry) {
					damage.errorf("job %s (%s): %s %q, want %q", a.fence, a.thread, k, got, want)
				}
			}
			if attrStr(s, "ghostdriver.device") == "" || attrStr(s, "process.pid") == "" {
				damage.errorf("job %s (%s): no ghostdriver.device or process.pid", a.fence, a.thread)
			}
			if v, _ := sj.res.Get("process.pid"); v.Int() != a.pid {
				damage.errorf("job %s (%s): resource process.pid %d, want %d", a.fence, a.thread, v.Int(), a.pid)
			}
		default:
			t.Fatalf("job %s: app.txt says ctx=%q: the app in this run predates the context workload", a.fence, a.ctx)
		}
		// Cross-process dependency: a link (not a parent) to the job that signalled the fence.
		if kind, ref, ok := strings.Cut(a.dep, ":"); ok && kind == "sync_file" {
			dep, ok := jobs[ref]
			if !ok {
				damage.errorf("job %s depends on %s, which has no span", a.fence, ref)
				continue
			}
			if da, ok := appByFence[ref]; !ok || da.pid == a.pid {
				continue
			}
			linked := false
			for i := 0; i < s.Links().Len(); i++ {
				l := s.Links().At(i)
				if l.SpanID() == dep.job.SpanID() {
					linked = true
					if l.TraceID() != dep.job.TraceID() {
						damage.errorf("job %s: link to %s names trace %s, the dependency's span is in %s", a.fence, ref, l.TraceID(), dep.job.TraceID())
					}
				}
			}
			if !linked {
				damage.errorf("job %s (%s): no span link to its cross-process dependency %s", a.fence, a.thread, ref)
				continue
			}
			if s.ParentSpanID() == dep.job.SpanID() {
				damage.errorf("job %s: its dependency %s is its parent, want a link only", a.fence, ref)
			}
			crossLinks++
		}
	}
	for _, k := range []string{"otep4947", "traceparent", "none"} {
		if perCtx[k] == 0 {
			t.Errorf("no job with ctx=%s in app.txt: the workload did not exercise that tier", k)
		}
	}
	if len(ctxPIDs["otep4947"]) != 1 || len(ctxPIDs["traceparent"]) != 1 || len(ctxPIDs["none"]) != 1 {
		t.Errorf("processes per context kind: %d otep4947, %d traceparent, %d none; want one each",
			len(ctxPIDs["otep4947"]), len(ctxPIDs["traceparent"]), len(ctxPIDs["none"]))
	}
	if len(threadTraces) < 2 {
		t.Errorf("%d OTEP 4947 threads, want 2", len(threadTraces))
	} else {
		seen := map[string]string{}
		for th, tr := range threadTraces {
			if other, dup := seen[tr]; dup {
				t.Errorf("threads %s and %s published the same trace id %s", th, other, tr)
			}
			seen[tr] = th
			if n := len(threadSpans[th]); n < 2 {
				t.Errorf("thread %s had %d active span(s), want the span to change during the run", th, n)
			}
		}
	}
	if crossLinks == 0 {
		t.Error("no cross-process dependency was checked: the workload did not exercise one")
	}
	damage.report(t, reportedLost(t, dir))
	// Each context the kernel could not read is counted (kernel_drops{reason=
	// thread_context_unreadable}); a job without one beyond that count is a wrong answer.
	unreadable.endJob()
	if len(unreadable.jobs) > 0 {
		// What moved the guest's user memory while the workload ran (guest/init).
		t.Logf("guest: %s", guestFacts(dir, "thp_enabled", "memory_moved_during_app"))
	}
	unreadable.reportAgainst(t, summaryCount(t, filepath.Join(dir, "ghostdriver.log"), "counted in the kernel, not sent:", "thread_context_unreadable"),
		"unreadable thread contexts")
	t.Logf("jobs per context: %v; OTEP 4947 threads %d; cross-process links %d", perCtx, len(threadTraces), crossLinks)
}

// The classic-tracepoint rung end to end. After the main workload the guest runs a second,
// shorter one under `ghostdriver live --classic-tracepoints` (spans-classic.json,
// ghostdriver-classic.log, groundtruth-classic.txt: that phase's jobs only). The scheduler
// events must have been hooked by their classic tracepoints (the report saying why the
// higher rungs were not used), every raw entry decoded, and every job of the phase must
// be one gpu.job with the driver's fence key, pid and tid, and the children that the
// queue and finished events bound — on 6.1 from printed pointers joined to the fence key,
// on 7.3 from the printed keys.
func TestVirtualGPUClassicTracepoints(t *testing.T) {
	dir := vgpuDir(t)
	rigPhase(t, dir, "spans-classic.json", "GHOSTDRIVER_CLASSIC_ARGS")
	mods, err := os.ReadFile(filepath.Join(dir, "modules.txt"))
	if err != nil {
		t.Fatal(err)
	}
	// The scheduler events of the guest's generation, by report stage.
	events := map[string]string{"job_queue": "drm_sched_job", "job_run": "drm_run_job", "job_done": "drm_sched_process_job",
		"job_dependency": "drm_sched_job_wait_dep"}
	if strings.Contains(string(mods), "label=7.3") {
		events = map[string]string{"job_queue": "drm_sched_job_queue", "job_run": "drm_sched_job_run",
			"job_done": "drm_sched_job_done", "job_dependency": "drm_sched_job_add_dep"}
	}

	logPath := filepath.Join(dir, "ghostdriver-classic.log")
	log, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	attached, skipped := map[string]bool{}, map[string]bool{}
	malformed, decoded := -1, map[string]int{}
	for _, line := range strings.Split(string(log), "\n") {
		f := strings.Fields(line)
		if v, ok := strings.CutPrefix(line, "malformed lines: "); ok {
			malformed, _ = strconv.Atoi(strings.TrimSpace(v))
		}
		if v, ok := strings.CutPrefix(line, "events decoded:"); ok {
			for _, kv := range strings.Fields(v) {
				if k, n, ok := strings.Cut(kv, "="); ok {
					decoded[k], _ = strconv.Atoi(n)
				}
			}
		}
		if len(f) < 3 {
			continue
		}
		if _, sched := events[f[0]]; !sched {
			continue
		}
		switch {
		case f[2] == "attached":
			attached[f[1]] = true
		case f[2] == "unavailable" && strings.Contains(line, "classic tracepoints forced"):
			skipped[f[1]] = true
		}
	}
	for stage, ev := range events {
		if !attached["tracepoint/gpu_scheduler/"+ev] {
			t.Errorf("%s: tracepoint/gpu_scheduler/%s did not attach", stage, ev)
		}
		for _, higher := range []string{"tp_btf/" + ev, "raw_tp/" + ev} {
			if attached[higher] || !skipped[higher] {
				t.Errorf("%s: %s attached=%v, reported as skipped=%v; want skipped for the classic rung", stage, higher, attached[higher], skipped[higher])
			}
		}
	}
	for hook := range attached {
		if !strings.HasPrefix(hook, "tracepoint/gpu_scheduler/") {
			t.Errorf("scheduler stage hooked by %s in the classic phase", hook)
		}
	}
	if malformed != 0 {
		t.Errorf("the classic phase reports %d malformed records (want 0: every raw entry decoded)", malformed)
	}

	gt := readGroundTruth(t, filepath.Join(dir, "groundtruth-classic.txt"))
	if app := readAppJobs(t, filepath.Join(dir, "app-classic.txt")); len(app) != len(gt) {
		t.Fatalf("the classic phase's app printed %d jobs, its ground truth has %d", len(app), len(gt))
	}
	// Events the kernel skipped (recursion protection) or could not reserve are counted
	// by the receiver; as in the main phase (jobDamage), each damages at most one job and
	// excuses at most one finding here. Nothing may go missing uncounted.
	lost, damage := reportedLostIn(t, logPath), &jobDamage{}
	for _, k := range []string{"job_queue", "job_run"} {
		if decoded[k]+lost < len(gt) {
			t.Errorf("%d %s events decoded for %d jobs, %d events reported lost", decoded[k], k, len(gt), lost)
		}
	}
	offset := readClockOffset(t, filepath.Join(dir, "clock-classic.txt"))
	jobs := readJobSpans(t, filepath.Join(dir, "spans-classic.json"))
	if len(jobs) > len(gt) || len(jobs)+lost < len(gt) {
		t.Errorf("%d gpu.job spans for the %d jobs of the classic phase, %d events reported lost", len(jobs), len(gt), lost)
	}
	var endErrs []int64
	outliers, doneMissed, depLinks := 0, 0, 0
	bySpan := map[string]string{} // span id -> fence
	for k, sj := range jobs {
		bySpan[sj.job.SpanID().String()] = k
	}
	for _, g := range gt {
		damage.endJob()
		if _, ok := jobs[g.fence]; !ok { // its events were among those lost, or an error
			damage.errorf("job %s (pid %d tid %d ring %d) has no gpu.job span", g.fence, g.pid, g.tid, g.ring)
			continue
		}
		sj := jobOf(t, jobs, g, damage.errorf)
		s := sj.job
		if out := attrStr(s, "ghostdriver.job.outcome"); out != "completed" {
			damage.errorf("job %s: outcome %q (%s)", g.fence, out, s.Status().Message())
		}
		fd, ok1 := sj.stages["fence_dependency"]
		fs, ok2 := sj.stages["fence_signal"]
		_, ok3 := sj.stages["ring_emission"]
		if !ok1 || !ok2 || !ok3 {
			damage.errorf("job %s: stages %v, want fence_dependency, ring_emission and fence_signal", g.fence, stageNames(sj))
			continue
		}
		if r := attrStr(fd, "ghostdriver.stage.rule"); !strings.HasPrefix(r, events["job_queue"]+"→") {
			damage.errorf("job %s: fence_dependency %q does not start at the queue event %s", g.fence, r, events["job_queue"])
		}
		switch r := attrStr(fs, "ghostdriver.stage.rule"); {
		case strings.HasSuffix(r, "→"+events["job_done"]):
		case strings.HasSuffix(r, "→dma_fence_signaled"):
			// The finished fence's own signal closed the job: its done event was not
			// seen. Before Linux 6.7 the kernel skips a classic-tracepoint program
			// without counting it when the interrupt comes while another such program
			// (or a bpf() map update) is running on that CPU; checked against the
			// decoded count below.
			doneMissed++
			t.Logf("job %s: fence_signal %q (no %s event)", g.fence, r, events["job_done"])
		default:
			damage.errorf("job %s: fence_signal %q does not end at the finished event %s", g.fence, r, events["job_done"])
		}
		// A dependency learnt from the dependency event (≤6.16: named by ring and job
		// id) is a link to that job's span; never to a job it did not wait for.
		for i := 0; i < s.Links().Len(); i++ {
			dep, ok := bySpan[s.Links().At(i).SpanID().String()]
			if !ok || !slices.Contains(g.deps, dep) {
				damage.errorf("job %s: link to %q, its dependencies are %v", g.fence, dep, g.deps)
				continue
			}
			depLinks++
		}
		for name, st := range sj.stages {
			if r := attrStr(st, "ghostdriver.stage.rule"); strings.Contains(r, "run event lost") {
				damage.errorf("job %s: %s %q: the run event was not seen", g.fence, name, r)
			}
		}
		// tf: the scheduler's finished fence, signalled in the engine's interrupt right
		// after the driver reads hw_end (same tolerances as the main phase). The kernel's own
		// stamp of that signal (finished_ns, when the run's driver logs it) is the closer
		// reference: a vCPU stall between the driver's read and the signal (seen: 3-20 ms
		// at host load 19) is then not charged to the span.
		want := g.hwEnd
		if v, err := strconv.ParseInt(g.kv["finished_ns"], 10, 64); err == nil && v > 0 {
			want = v
		}
		de := abs(int64(fs.EndTimestamp()) - offset - want)
		endErrs = append(endErrs, de)
		if de > hwBoundMaxErrNs {
			outliers++
			if de > hwBoundOutlierNs {
				damage.errorf("job %s: finished %d ns away from the finished fence's signal (kernel stamp, else hw_end)", g.fence, de)
			} else {
				t.Logf("outlier: job %s finished %d ns away from the finished fence's signal (fence_signal %q)", g.fence, de, attrStr(fs, "ghostdriver.stage.rule"))
			}
		}
	}
	damage.report(t, lost)
	if outliers > outliersAllowed(len(gt)) {
		t.Errorf("%d of %d jobs finished more than %d ns away from the finished fence's signal (at most %d may)", outliers, len(gt), hwBoundMaxErrNs, outliersAllowed(len(gt)))
	}
	// Every job without its done event is one done event fewer decoded (nothing was
	// decoded wrongly: the exact check), and such jobs stay a minority (a guard against
	// done events that never attach, which would leave all of them without). The kernel
	// does not count these skips before 6.7; measured on the arm64 6.1 guest (single-
	// threaded TCG, where programs run slowly enough to overlap the completion timer):
	// 3, 5 and 6 of 72 jobs in three runs (2026-12-04), so a tenth was too tight a guard.
	// A decoded done event that reached no job is counted by the assembler ("job events
	// that matched no job" in the summary, ghostdriver.assembler.unmatched_events). Seen
	// on the x86 6.1 guest (2026-12-04: 4 jobs without, 71 decoded, 3 unmatched): the
	// join of pointers to keys had missed and the job had not registered its pointer
	// (fixed in assemble, TestSched61JoinedKeyThenPointerOnlyDone). Such a job is
	// accepted only against that count: none may go uncounted.
	unmatched := unmatchedIn(t, logPath, "job_done")
	if doneMissed > len(gt)-decoded["job_done"]+unmatched || doneMissed > max(2, len(gt)/4) {
		t.Errorf("%d jobs closed without their %s event; %d of those events decoded for %d jobs, %d matched no job",
			doneMissed, events["job_done"], decoded["job_done"], len(gt), unmatched)
	}
	if m := median(endErrs); m > hwBoundMedianErrNs {
		t.Errorf("median |tf − finished signal| = %d ns > %d", m, hwBoundMedianErrNs)
	}
	if depLinks == 0 {
		t.Error("no job of the classic phase links its dependency: the dependency events were not joined to their jobs")
	}
	t.Logf("classic phase: %d jobs, %d dependency links, scheduler hooks %v, |tf − finished signal| median %d ns max %d ns, lost %d",
		len(gt), depLinks, sortedKeys(attached), median(endErrs), maxOf(endErrs), lost)
}

func stageNames(sj *spanJob) []string {
	return sortedKeys(sj.stages)
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
