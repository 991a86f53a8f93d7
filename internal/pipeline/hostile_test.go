// Hostile streams through the whole pipeline: crafted ftrace text in (replay source →
// decoder → assembler → jobs), a counted outcome out for every kind of damage. Nothing
// may be lost without a counter saying so, and nothing may panic.
//
// Unit-level versions of some cases live next to the code they exercise:
//   - reorder within the window, late events: internal/assemble/reorder_test.go
//   - 32-bit dma_fence seqno wrapping while the 64-bit scheduler seqno counts on:
//     internal/assemble/sched_test.go TestSeqnoWrapAround
//   - fence pointer reuse (≤6.16): sched_test.go TestSched61PointerReuse
//   - clock jumps: internal/assemble/clock_test.go
//   - pid reuse in tenant attribution (start-time guard): internal/tenant/resolver_test.go
//   - malformed, mutated and 1 MiB lines: internal/ftrace/malformed_test.go
//   - long lines, truncated gzip at the source: internal/replay/replay_test.go
//
// This file drives all of them end to end from text, the way a capture reaches the
// receiver.
package pipeline

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ghostdriver/ghostdriver/internal/assemble"
	"github.com/ghostdriver/ghostdriver/internal/replay"
)

// line is one tracefs line with the time it carries (µs), so tests can reorder them.
type line struct {
	us   int64
	text string
}

func stamp(us int64) string { return fmt.Sprintf("%d.%06d", us/1e6, us%1e6) }

// 6.17+ drm_sched events: the job is named by its finished fence (context:seqno, 64-bit).
func queueLine(us int64, comm string, tid int, ctx, seq uint64) line {
	return line{us, fmt.Sprintf("%16s-%-7d [001] .....  %s: drm_sched_job_queue: dev=vgpu, fence=%d:%d, ring=vgpu-ring0, job count:0, hw job count:0, client_id:1",
		comm, tid, stamp(us), ctx, seq)}
}

func runLine(us int64, ctx, seq uint64) line {
	return line{us, fmt.Sprintf("    kworker/u8:1-29      [002] .....  %s: drm_sched_job_run: dev=vgpu, fence=%d:%d, ring=vgpu-ring0, job count:0, hw job count:1, client_id:1",
		stamp(us), ctx, seq)}
}

func doneLine(us int64, ctx, seq uint64) line {
	return line{us, fmt.Sprintf("          <idle>-0       [000] d.h1.  %s: drm_sched_job_done: fence=%d:%d signaled", stamp(us), ctx, seq)}
}

const (
	base   = int64(100_000_000) // 100 s: capture times in µs
	jobGap = int64(200)         // µs between jobs
)

// jobs returns n complete jobs on fence context ctx starting at seqno first, one after
// another, each as queue, run, done lines.
func jobs(n int, ctx, first uint64, comm string, tid int, start int64) []line {
	var out []line
	for i := 0; i < n; i++ {
		t := start + int64(i)*jobGap
		s := first + uint64(i)
		out = append(out, queueLine(t, comm, tid, ctx, s), runLine(t+20, ctx, s), doneLine(t+120, ctx, s))
	}
	return out
}

func render(lines []line) []byte {
	var b bytes.Buffer
	b.WriteString("# tracer: nop\n#\n")
	for _, l := range lines {
		b.WriteString(l.text)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// outcome is what one run counted.
type outcome struct {
	stats Stats
	jobs  []*assemble.Job
	err   error
}

func (o outcome) String() string {
	a, s := o.stats.Assembler, o.stats.Source
	return fmt.Sprintf("completed=%d incomplete=%d evicted_timeout=%d evicted_cap=%d duplicates=%d late=%d clock_jumps=%d orphans=%v malformed=%d err=%v",
		a.Completed, a.Incomplete, a.EvictedTimeout, a.EvictedCap, a.Duplicates, a.Late, a.ClockJumps, a.Orphans, s.Malformed, o.err)
}

// runCapture replays data (a file's bytes) through a pipeline and returns its counts.
func runCapture(t *testing.T, data []byte, cfg Config) outcome {
	t.Helper()
	var jobs []*assemble.Job
	o := runCaptureWith(t, data, cfg, Outputs{Job: func(j *assemble.Job) { jobs = append(jobs, j) }})
	o.jobs = jobs
	return o
}

// runCaptureWith is runCapture with the caller's outputs.
func runCaptureWith(t *testing.T, data []byte, cfg Config, out Outputs) outcome {
	t.Helper()
	path := filepath.Join(t.TempDir(), "capture")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := replay.New(replay.Config{Path: path, HasEpoch: true, Epoch: 1_700_000_000_000_000_000})
	if err != nil {
		t.Fatal(err)
	}
	var o outcome
	p := New(cfg, src, out, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	o.err = p.Run(ctx)
	o.stats = p.Stats()
	return o
}

func outcomes(jobs []*assemble.Job) map[assemble.Outcome]int {
	m := map[assemble.Outcome]int{}
	for _, j := range jobs {
		m[j.Outcome]++
	}
	return m
}

const n = 200

func TestHostileBaseline(t *testing.T) {
	o := runCapture(t, render(jobs(n, 4, 1, "app", 234, base)), Config{})
	a := o.stats.Assembler
	if o.err != nil || a.Completed != n || len(o.jobs) != n || a.Late != 0 || o.stats.Source.Malformed != 0 {
		t.Fatalf("baseline: %s", o)
	}
}

// Lines of different CPUs handed over out of order (shuffled within 50 µs, well inside
// the 20 ms reorder window): the same jobs as in order, none late.
func TestHostileOutOfOrder(t *testing.T) {
	ls := jobs(n, 4, 1, "app", 234, base)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range ls {
		j := i + r.IntN(4)
		if j < len(ls) && ls[j].us-ls[i].us < 50 {
			ls[i], ls[j] = ls[j], ls[i]
		}
	}
	o := runCapture(t, render(ls), Config{})
	if a := o.stats.Assembler; a.Completed != n || a.Late != 0 || a.Incomplete != 0 {
		t.Fatalf("out of order: %s", o)
	}
}

// Every line twice (a capture merged with itself, a replayed ring buffer page): one job
// each, every second copy counted as a duplicate or an orphan, none lost or doubled.
func TestHostileDuplicated(t *testing.T) {
	var ls []line
	for _, l := range jobs(n, 4, 1, "app", 234, base) {
		ls = append(ls, l, l)
	}
	o := runCapture(t, render(ls), Config{})
	a := o.stats.Assembler
	var orphans uint64
	for _, v := range a.Orphans {
		orphans += v
	}
	if a.Completed != n || len(o.jobs) != n {
		t.Fatalf("duplicated: %s", o)
	}
	// 3n second copies: each is either a duplicate of a job event or an orphan (a done
	// after its job left).
	if a.Duplicates+orphans != 3*n {
		t.Errorf("duplicated: %d duplicates + %d orphans, want %d: %s", a.Duplicates, orphans, 3*n, o)
	}
}

// Missing events: every tenth job loses its run, every tenth (other) its done, every
// tenth (other) its queue. Each such job is output once, as Incomplete or Evicted with a
// reason; the rest complete.
func TestHostileMissing(t *testing.T) {
	var ls []line
	noRun, noDone, noQueue := 0, 0, 0
	for i, l := range jobs(n, 4, 1, "app", 234, base) {
		job, kind := i/3, i%3
		switch {
		case job%10 == 1 && kind == 1:
			noRun++
			continue
		case job%10 == 2 && kind == 2:
			noDone++
			continue
		case job%10 == 3 && kind == 0:
			noQueue++
			continue
		}
		ls = append(ls, l)
	}
	o := runCapture(t, render(ls), Config{})
	a := o.stats.Assembler
	got := outcomes(o.jobs)
	if len(o.jobs) != n || int(a.Completed) != n-noRun-noDone-noQueue {
		t.Fatalf("missing: %d jobs %v: %s", len(o.jobs), got, o)
	}
	reasons := map[string]int{}
	for _, j := range o.jobs {
		if j.Outcome != assemble.Completed {
			if j.Reason == "" {
				t.Errorf("job %v: %s without a reason", j.Finished, j.Outcome)
			}
			reasons[strings.SplitN(j.Reason, ":", 2)[0]]++
		}
	}
	if got[assemble.Completed]+got[assemble.Incomplete]+got[assemble.Evicted] != n || reasons["no run event"] != noRun ||
		reasons["no queue event"] != noQueue {
		t.Errorf("missing: outcomes %v reasons %v (no run %d, no done %d, no queue %d)", got, reasons, noRun, noDone, noQueue)
	}
}

// 64-bit scheduler seqnos crossing 2^32 (dma_fence prints the 32-bit truncation; the
// assembler joins on it): distinct jobs, all complete, none merged. Half the jobs end with
// their finished fence's dma_fence_signaled (context and seqno printed as %u, so 2^32 + k
// reads as k) instead of drm_sched_job_done: the join from the truncated key finds the
// right 64-bit job on both sides of the wrap.
func TestHostileSeqnoWrap(t *testing.T) {
	const ctx, first = 0x7_0000_0005, 0xffff_fff6
	ls := jobs(20, ctx, first, "app", 234, base)
	fenceEnded := map[uint64]int64{} // seqno → signal time (µs)
	for i := range ls {
		if i%3 != 2 || (i/3)%2 == 0 {
			continue // a queue or run line, or an even job (keeps its done line)
		}
		seq := uint64(first + i/3)
		us := ls[i].us
		ls[i] = line{us, fmt.Sprintf("          <idle>-0       [000] d.h1.  %s: dma_fence_signaled: driver=drm_sched timeline=vgpu-ring0 context=%d seqno=%d",
			stamp(us), uint32(ctx&0xffff_ffff), uint32(seq))}
		fenceEnded[seq] = us
	}
	o := runCapture(t, render(ls), Config{})
	if a := o.stats.Assembler; a.Completed != 20 || len(o.jobs) != 20 || a.Duplicates != 0 || len(a.Orphans) != 0 {
		t.Fatalf("wrap: %s", o)
	}
	seen := map[uint64]bool{}
	for _, j := range o.jobs {
		seen[j.Finished.Seqno] = true
		if j.Finished.Context != ctx {
			t.Errorf("job %v: context not the 64-bit one", j.Finished)
		}
		if us, ok := fenceEnded[j.Finished.Seqno]; ok {
			if end := j.End / 1000; end != us { // source time is ns; lines are µs
				t.Errorf("job %v ends at %d µs, its finished fence signalled at %d µs", j.Finished, end, us)
			}
		}
	}
	if !seen[0xffff_ffff] || !seen[0x1_0000_0000] || len(seen) != 20 || len(fenceEnded) != 10 {
		t.Errorf("seqnos %v (%d ended by dma_fence)", seen, len(fenceEnded))
	}
}

// A line stamped a day ahead in the middle of the capture, then the stream goes on:
// nothing times out, its event still processed (as an orphan). A capture file is replayed
// in time order (replay merges its sorted runs: the line goes out last, as its own run
// says), so the assembler sees no jump; its clock-jump guard is tested in assemble.
func TestHostileClockJump(t *testing.T) {
	ls := jobs(n, 4, 1, "app", 234, base)
	mid := len(ls) / 2
	jump := doneLine(ls[mid].us+86_400_000_000, 99, 1)
	ls = append(ls[:mid], append([]line{jump}, ls[mid:]...)...)
	o := runCapture(t, render(ls), Config{})
	a := o.stats.Assembler
	if a.Completed != n || a.EvictedTimeout != 0 || o.stats.Source.SortedRuns != 2 || a.Orphans["job_done"] != 1 {
		t.Fatalf("clock jump: %s", o)
	}
}

// pid reuse: thread 234 of one process exits, a new process gets the same id and submits
// on another context. Each job keeps the comm of the process that queued it.
func TestHostilePidReuse(t *testing.T) {
	ls := append(jobs(50, 4, 1, "old-app", 234, base), jobs(50, 6, 1, "new-app", 234, base+60*jobGap)...)
	o := runCapture(t, render(ls), Config{})
	if o.stats.Assembler.Completed != 100 {
		t.Fatalf("pid reuse: %s", o)
	}
	for _, j := range o.jobs {
		want := map[uint64]string{4: "old-app", 6: "new-app"}[j.Finished.Context]
		if j.Comm != want {
			t.Errorf("job %v: comm %q, want %q", j.Finished, j.Comm, want)
		}
	}
}

// 1 MiB lines (one just under the replay source's limit, one over it) and binary
// garbage: each counted malformed, every job around them complete.
func TestHostileHugeLinesAndGarbage(t *testing.T) {
	ls := jobs(n, 4, 1, "app", 234, base)
	var b bytes.Buffer
	r := rand.New(rand.NewPCG(3, 4))
	garbage := make([]byte, 64<<10)
	for i := range garbage {
		garbage[i] = byte(r.IntN(256))
		if garbage[i] == '\n' || garbage[i] == '#' { // '#' would start a comment line, not count as malformed
			garbage[i] = 0
		}
	}
	for i, l := range ls {
		b.WriteString(l.text + "\n")
		switch i {
		case 30:
			b.WriteString(strings.Repeat("x", replay.MaxLineLen-1) + "\n") // kept by the reader, too long for the decoder
		case 60:
			b.WriteString(strings.Repeat("y", replay.MaxLineLen+1) + "\n") // skipped by the reader
		case 90:
			b.Write(garbage) // one 64 KiB binary line
			b.WriteByte('\n')
		case 120:
			for j := 0; j < 100; j++ { // 100 short binary lines
				b.Write(garbage[j*50 : j*50+40])
				b.WriteByte('\n')
			}
		}
	}
	o := runCapture(t, b.Bytes(), Config{})
	if a := o.stats.Assembler; o.err != nil || a.Completed != n || a.Incomplete != 0 {
		t.Fatalf("garbage: %s", o)
	}
	if m := o.stats.Source.Malformed; m != 103 {
		t.Errorf("malformed %d, want 103 (two long lines, one 64 KiB and 100 short garbage lines): %s", m, o)
	}
	if len(o.stats.Source.MalformedSamples) == 0 {
		t.Error("no malformed samples kept")
	}
}

// A gzip capture cut in the middle: Run returns an error that says so; every job decoded
// before the cut is output (complete, or incomplete at the cut), none after it invented.
func TestHostileTruncatedGzip(t *testing.T) {
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write(render(jobs(2000, 4, 1, "app", 234, base)))
	zw.Close()
	cut := z.Bytes()[:z.Len()/2]
	o := runCapture(t, cut, Config{})
	if o.err == nil || !strings.Contains(o.err.Error(), "gzip") {
		t.Fatalf("truncated gzip: error %v", o.err)
	}
	a := o.stats.Assembler
	if a.Completed == 0 || a.Completed >= 2000 || int(a.Completed+a.Incomplete) != len(o.jobs) {
		t.Fatalf("truncated gzip: %d jobs: %s", len(o.jobs), o)
	}
	if a.Incomplete > 2 {
		t.Errorf("more than the jobs in flight at the cut are incomplete: %s", o)
	}
}
