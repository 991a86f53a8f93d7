// The real amdgpu 4.11 capture (gpuvis, Steam VR compositor + Xorg): decoded by the
// ftrace decoder, assembled, and checked against an independent join of the raw lines.
//
// The independent join (expectCapture) reads the three event lines with plain string
// handling — it shares no code with the decoder or the assembler — and is equivalent to:
//
//	awk 'function kv(s,k){match(s,k"=[^ ,]*");return substr(s,RSTART+length(k)+1,RLENGTH-length(k)-1)}
//	     /amdgpu_cs_ioctl:/      {q[kv($0,"context")":"kv($0,"seqno")]=1}
//	     /amdgpu_sched_run_job:/ {r[kv($0,"context")":"kv($0,"seqno")]=1}
//	     /dma_fence_signaled:.*driver=amd_sched/ {d[kv($0,"context")":"kv($0,"seqno")]=1}
//	     END{for(k in q)if(r[k]&&d[k])n++;print n}'   # → 639 completed, all on gfx
//
// The capture's per-CPU buffers started at different times (CPU3 at 630659.13, CPU2 at
// .83, CPU0 at 630660.18, CPU1 at .29), so the first second holds queue events whose run
// (CPU0, the gfx worker) and finish (CPU1, the interrupt) were overwritten, and sdma1 kernel
// jobs run on CPU2 whose finished fences signalled on CPU1 before it was recording.
package assemble

import (
	"bufio"
	"bytes"
	"math/rand"
	"os"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/ghostdriver/ghostdriver/internal/event"
	"github.com/ghostdriver/ghostdriver/internal/ftrace"
)

// capturePath is the repository's copy of the real gpuvis capture (byte-identical to the
// one in the project's shared captures), so a fresh clone runs these tests.
const capturePath = "../../testdata/captures/gpuvis_amdgpu_4.11_gpu_only.trace-cmd-report.txt"

func readCapture(t testing.TB) []byte {
	t.Helper()
	b, err := os.ReadFile(capturePath)
	if err != nil {
		t.Fatalf("reading the bundled capture: %v", err)
	}
	return b
}

// decodeCapture runs the ftrace decoder over the capture.
func decodeCapture(t testing.TB, raw []byte) []event.Event {
	t.Helper()
	d := ftrace.NewDecoder()
	var evs []event.Event
	sc := bufio.NewScanner(bytes.NewReader(raw))
	n := 0
	for sc.Scan() {
		n++
		var ev event.Event
		if d.Decode(sc.Bytes(), n, &ev) {
			evs = append(evs, ev)
		}
	}
	return evs
}

// rawJob is one job as the independent join sees it (times in ns, -1 when absent).
type rawJob struct {
	ring              string
	tq, tr, tsig, tf  int64 // tsig: the scheduled fence (context−1) signal
	hasQ, hasR, hasTF bool
}

type rawKey struct{ ctx, seq uint64 }

// expectCapture joins the raw lines independently.
func expectCapture(t *testing.T, raw []byte) (jobs map[rawKey]*rawJob, orphanSignals int) {
	t.Helper()
	jobs = map[rawKey]*rawJob{}
	type sig struct {
		k      rawKey
		time   int64
		driver string
	}
	var sigs []sig
	field := func(line, name string) string {
		i := strings.Index(line, " "+name+"=")
		if i < 0 {
			t.Fatalf("no %s in %q", name, line)
		}
		v := line[i+len(name)+2:]
		if j := strings.IndexAny(v, ", "); j >= 0 {
			v = v[:j]
		}
		return v
	}
	num := func(s string) uint64 {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	stamp := func(line string) int64 {
		// "comm-tid [cpu] 630659.133157: name: ..."
		i := strings.Index(line, "] ")
		rest := strings.TrimSpace(line[i+2:])
		ts := rest[:strings.Index(rest, ":")]
		dot := strings.Index(ts, ".")
		sec, frac := num(ts[:dot]), num(ts[dot+1:])
		return int64(sec)*1e9 + int64(frac)*1e3
	}
	get := func(k rawKey) *rawJob {
		j := jobs[k]
		if j == nil {
			j = &rawJob{tq: -1, tr: -1, tsig: -1, tf: -1}
			jobs[k] = j
		}
		return j
	}
	for _, line := range strings.Split(string(raw), "\n") {
		switch {
		case strings.Contains(line, " amdgpu_cs_ioctl: "):
			j := get(rawKey{num(field(line, "context")), num(field(line, "seqno"))})
			j.tq, j.hasQ, j.ring = stamp(line), true, field(line, "timeline")
		case strings.Contains(line, " amdgpu_sched_run_job: "):
			j := get(rawKey{num(field(line, "context")), num(field(line, "seqno"))})
			j.tr, j.hasR, j.ring = stamp(line), true, field(line, "timeline")
		case strings.Contains(line, " dma_fence_signaled: "):
			sigs = append(sigs, sig{rawKey{num(field(line, "context")), num(field(line, "seqno"))}, stamp(line), field(line, "driver")})
		}
	}
	for _, s := range sigs {
		matched := false
		if s.driver == "amd_sched" {
			if j := jobs[s.k]; j != nil {
				j.tf, j.hasTF = s.time, true
				matched = true
			}
			if j := jobs[rawKey{s.k.ctx + 1, s.k.seq}]; j != nil {
				j.tsig = s.time
				matched = true
			}
		}
		if !matched {
			orphanSignals++
		}
	}
	return jobs, orphanSignals
}

// captureEdge is the time of the first line of the CPU whose buffer starts last.
func captureEdge(t *testing.T, raw []byte) int64 {
	first := map[string]string{}
	for _, line := range strings.Split(string(raw), "\n") {
		i, k := strings.Index(line, " ["), strings.Index(line, "] ")
		if i < 0 || k < i {
			continue
		}
		if _, ok := first[line[i+2:k]]; !ok {
			rest := strings.TrimSpace(line[k+2:])
			first[line[i+2:k]] = rest[:strings.Index(rest, ":")]
		}
	}
	var edge int64
	for _, ts := range first {
		sec, _ := strconv.ParseInt(ts[:strings.Index(ts, ".")], 10, 64)
		frac, _ := strconv.ParseInt(ts[strings.Index(ts, ".")+1:], 10, 64)
		edge = max(edge, sec*1e9+frac*1e3)
	}
	if edge != 630660_292601_000 {
		t.Fatalf("edge %d", edge)
	}
	return edge
}

// expectReason derives an incomplete job's reason from what the raw lines hold.
func expectReason(w *rawJob, jobs map[rawKey]*rawJob, k rawKey, edge int64) string {
	var parts []string
	if !w.hasQ {
		submitted := false // any amdgpu_cs_ioctl on the job's fence context?
		for k2, j2 := range jobs {
			submitted = submitted || k2.ctx == k.ctx && j2.hasQ
		}
		if submitted {
			parts = append(parts, reasonNoQueue)
		} else {
			parts = append(parts, reasonNoQueueStream)
		}
	}
	if !w.hasTF { // output at the end of the input
		if w.hasR {
			parts = append(parts, reasonNotFinished)
		} else {
			parts = append(parts, reasonNotRun)
		}
		first := w.tq
		if first < 0 {
			first = w.tr
		}
		if first < edge {
			return strings.Join(parts, "; ") + reasonEdge
		}
	}
	return strings.Join(parts, "; ")
}

// expectStages computes, independently, the points the assembler must report for the
// capture's jobs: te = scheduled-fence signal (else tr), th = tf (no hardware fence link
// in this capture), ts = max(te, the previous finished job's tf on the ring) capped at th.
func expectStages(jobs map[rawKey]*rawJob) (ts map[rawKey]int64) {
	type fin struct {
		k  rawKey
		tf int64
	}
	byRing := map[string][]fin{}
	for k, j := range jobs {
		if j.hasTF {
			byRing[j.ring] = append(byRing[j.ring], fin{k, j.tf})
		}
	}
	ts = map[rawKey]int64{}
	for _, fs := range byRing {
		sort.Slice(fs, func(a, b int) bool { return fs[a].tf < fs[b].tf })
		for i, f := range fs {
			j := jobs[f.k]
			if !j.hasR {
				continue
			}
			te := j.tr
			if j.tsig >= 0 {
				te = j.tsig
			}
			s := te
			if i > 0 && fs[i-1].tf > s {
				s = fs[i-1].tf
			}
			ts[f.k] = min(s, j.tf)
		}
	}
	return ts
}

func TestCaptureAmdgpu411(t *testing.T) {
	raw := readCapture(t)
	want, wantOrphans := expectCapture(t, raw)
	wantTS := expectStages(want)
	edge := captureEdge(t, raw)

	c := newCollector(DefaultConfig())
	evs := decodeCapture(t, raw)
	for i := 0; i < len(evs); i += 256 {
		c.a.Consume(evs[i:min(i+256, len(evs))])
	}
	c.a.Flush()

	// Every job (queue or run seen) output exactly once.
	got := map[rawKey]*Job{}
	for _, j := range c.jobs {
		k := rawKey{j.Finished.Context, j.Finished.Seqno}
		if got[k] != nil {
			t.Fatalf("job %v output twice", k)
		}
		got[k] = j
	}
	if len(got) != len(want) || len(want) != 783 {
		t.Fatalf("jobs: got %d, independent join %d, want 783", len(got), len(want))
	}

	completedPerRing := map[string]int{}
	reasons := map[string]int{}
	for k, w := range want {
		j := got[k]
		if j == nil {
			t.Fatalf("job %v not output", k)
		}
		complete := w.hasQ && w.hasR && w.hasTF
		if complete != (j.Outcome == Completed) {
			t.Errorf("job %v: outcome %s (%s), raw q=%v r=%v f=%v", k, j.Outcome, j.Reason, w.hasQ, w.hasR, w.hasTF)
			continue
		}
		if !complete {
			if r := expectReason(w, want, k, edge); j.Outcome != Incomplete || j.Reason != r {
				t.Errorf("job %v: %s %q, want Incomplete %q", k, j.Outcome, j.Reason, r)
			}
			reasons[j.Reason]++
			continue
		}
		completedPerRing[j.Ring]++
		p := j.Points
		te := w.tr
		if w.tsig >= 0 {
			te = w.tsig
		}
		for _, c := range []struct {
			p    Point
			want int64
		}{
			{PointQueued, w.tq}, {PointDepsResolved, w.tq}, {PointRun, w.tr}, {PointEmitted, te},
			{PointHWStart, wantTS[k]}, {PointHWDone, w.tf}, {PointFinished, w.tf},
		} {
			if p[c.p].Time != c.want {
				t.Errorf("job %v %s: got %d, want %d", k, c.p, p[c.p].Time, c.want)
			}
		}
		// fence_dependency, scheduler_queue, ring_emission, dma_scheduling, execution,
		// fence_signal (no ioctl events in this capture).
		if len(j.Stages) != 6 || j.Start != w.tq || j.End != w.tf {
			t.Errorf("job %v: %d stages, span [%d,%d], want 6 and [%d,%d]", k, len(j.Stages), j.Start, j.End, w.tq, w.tf)
		}
	}
	if len(completedPerRing) != 1 || completedPerRing["gfx"] != 639 {
		t.Errorf("completed per ring: %v, want gfx:639", completedPerRing)
	}
	// Every incomplete job of this capture lies before the capture's edge (CPU1, the
	// interrupt CPU, starts recording at 630660.292601); none is cut at the end.
	wantReasons := map[string]int{
		// QR-: run on CPU0, finished-fence signal (CPU1) not recorded.
		reasonNotFinished + reasonEdge: 26,
		// Q--: queued on CPU3/CPU2 before CPU0 (the gfx worker) and CPU1 were recording.
		reasonNotRun + reasonEdge: 90,
		// -R-: gfx jobs run right after CPU0 started, their queue not recorded…
		reasonNoQueue + "; " + reasonNotFinished + reasonEdge: 4,
		// …and sdma kernel jobs (no amdgpu_cs_ioctl on their contexts), finish not recorded.
		reasonNoQueueStream + "; " + reasonNotFinished + reasonEdge: 22,
		// -RD: the two sdma1 kernel jobs that finished after CPU1 started.
		reasonNoQueueStream: 2,
	}
	if !mapsEqual(reasons, wantReasons) {
		t.Errorf("incomplete reasons:\n got %v\nwant %v", reasons, wantReasons)
	}

	st := c.a.Stats()
	if st.Completed != 639 || st.Incomplete != 144 || st.EvictedTimeout != 0 || st.EvictedCap != 0 ||
		st.Pending != 0 || st.Held != 0 || st.Buffered != 0 {
		t.Errorf("stats: %+v", st)
	}
	if st.Orphans["fence_signaled"] != uint64(wantOrphans) || len(st.Orphans) != 1 {
		t.Errorf("orphans: %v, want fence_signaled:%d", st.Orphans, wantOrphans)
	}
	if st.Rings["gfx"].Jobs != 639+26+90+4 || st.Rings["sdma1"].Jobs != 23 || st.Rings["sdma0"].Jobs != 1 {
		t.Errorf("rings: %+v", st.Rings)
	}

	// One job, every stage spelled out from the raw lines:
	//   RenderThread-25155 [001] 630660.350725: amdgpu_cs_ioctl: … context=4929, seqno=3418
	//   gfx-190            [000] 630660.352389: amdgpu_sched_run_job: … context=4929, seqno=3418
	//   gfx-190            [000] 630660.352398: dma_fence_signaled: driver=amd_sched … context=4928 seqno=3418
	//   RenderThread-25155 [001] 630660.352682: dma_fence_signaled: driver=amd_sched … context=105 seqno=3080890  (previous gfx job)
	//   RenderThread-25155 [001] 630660.352704: dma_fence_signaled: driver=amd_sched … context=4929 seqno=3418
	j := got[rawKey{4929, 3418}]
	const base = int64(630660_000_000_000)
	var stages []string
	for _, s := range j.Stages {
		stages = append(stages, s.Stage.String()+" "+strconv.FormatInt((s.Start-base)/1000, 10)+" "+
			strconv.FormatInt((s.End-base)/1000, 10)+" "+s.Src.String()+" "+s.Rule)
	}
	wantStagesText := []string{
		"fence_dependency 350725 350725 inferred amdgpu_cs_ioctl→no_dependencies",
		"scheduler_queue 350725 352389 inferred no_dependencies→amdgpu_sched_run_job",
		"ring_emission 352389 352398 measured amdgpu_sched_run_job→dma_fence_signaled(scheduled)",
		"dma_scheduling 352398 352682 inferred dma_fence_signaled(scheduled)→ring_serial",
		"execution 352682 352704 inferred ring_serial→fallback_to_finished",
		"fence_signal 352704 352704 inferred fallback_to_finished→dma_fence_signaled",
	}
	if !slices.Equal(stages, wantStagesText) {
		t.Errorf("job 4929:3418 stages:\n got %q\nwant %q", stages, wantStagesText)
	}
	if j.Driver != "amdgpu" || j.Ring != "gfx" || j.JobID != 3490054 || j.TID != 25155 || j.Comm != "RenderThread" {
		t.Errorf("job 4929:3418: %+v", j)
	}

	// A job that ran while the ring was idle: execution starts at its own te.
	//   amdgpu_cs:0-1150 [000] 630660.348636 cs_ioctl 105:3080890; gfx-190 .348658 run; .348666 sched 104;
	//   previous gfx finish 4929:3417 at .352332 → ts = .352332, th = tf = .352682.
	j = got[rawKey{105, 3080890}]
	if j.Points[PointHWStart].Time != base+352332_000 || j.Points[PointEmitted].Time != base+348666_000 {
		t.Errorf("job 105:3080890: ts %d te %d", j.Points[PointHWStart].Time-base, j.Points[PointEmitted].Time-base)
	}
}

// TestCaptureShuffled feeds the capture with its per-CPU streams interleaved at random,
// each event delayed by up to 15ms (inside the 20ms window): the jobs must be identical.
func TestCaptureShuffled(t *testing.T) {
	raw := readCapture(t)
	evs := decodeCapture(t, raw)
	sorted := newCollector(DefaultConfig())
	sorted.a.Consume(evs)
	sorted.a.Flush()

	for seed := int64(1); seed <= 3; seed++ {
		shuffled := newCollector(DefaultConfig())
		arrival := shuffleWithinWindow(evs, seed, 15*1000*us)
		for i := 0; i < len(arrival); i += 64 {
			shuffled.a.Consume(arrival[i:min(i+64, len(arrival))])
		}
		shuffled.a.Flush()
		if !sameJobs(sorted.jobs, shuffled.jobs) {
			t.Fatalf("seed %d: shuffled input gave different jobs", seed)
		}
		if st := shuffled.a.Stats(); st.Late != 0 {
			t.Errorf("seed %d: %d late events", seed, st.Late)
		}
	}
}

// shuffleWithinWindow returns events in a random arrival order: per-CPU order kept (as a
// kernel ring buffer keeps it), each CPU's events delayed by a random amount up to maxDelay.
func shuffleWithinWindow(evs []event.Event, seed, maxDelay int64) []event.Event {
	r := rand.New(rand.NewSource(seed))
	type arr struct {
		at  int64
		idx int
	}
	perCPU := map[int32]int64{} // last arrival per CPU: keeps per-CPU order
	a := make([]arr, len(evs))
	for i := range evs {
		at := evs[i].Time + r.Int63n(maxDelay+1)
		if last, ok := perCPU[evs[i].CPU]; ok && at < last {
			at = last
		}
		perCPU[evs[i].CPU] = at
		a[i] = arr{at, i}
	}
	sort.SliceStable(a, func(i, j int) bool { return a[i].at < a[j].at })
	out := make([]event.Event, len(evs))
	for i := range a {
		out[i] = evs[a[i].idx]
	}
	return out
}

func sameJobs(a, b []*Job) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !reflect.DeepEqual(a[i], b[i]) {
			return false
		}
	}
	return true
}

func mapsEqual(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
