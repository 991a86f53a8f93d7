// Trace-event JSON from spans: the real amdgpu capture through the pipeline, and a
// synthetic set with what real captures lack (ioctl and validation stages, a gang submit,
// a stage that does not nest, unknown processes, spans that are not jobs). Every output is
// checked for structure and against the input spans read independently (validate_test.go).
package tracejson

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/ghostdriver/ghostdriver/internal/pipeline"
	"github.com/ghostdriver/ghostdriver/internal/replay"
	"github.com/ghostdriver/ghostdriver/internal/timeline"
)

func repoFile(t *testing.T, rel string) string {
	t.Helper()
	_, self, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(self), "..", "..", rel)
}

// writeBoth returns the input as OTLP/JSON lines and the trace-event JSON written from it.
func writeBoth(t *testing.T, batches []ptrace.Traces) (otlp []byte, out []byte, st Stats) {
	t.Helper()
	var m ptrace.JSONMarshaler
	var lines bytes.Buffer
	for _, td := range batches {
		b, err := m.MarshalTraces(td)
		if err != nil {
			t.Fatal(err)
		}
		lines.Write(b)
		lines.WriteByte('\n')
	}
	set, err := timeline.Read(bytes.NewReader(lines.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	st, err = Write(&buf, set)
	if err != nil {
		t.Fatal(err)
	}
	return lines.Bytes(), buf.Bytes(), st
}

func TestRealCaptureTraceJSON(t *testing.T) {
	var batches []ptrace.Traces
	_, _, err := timeline.Capture(context.Background(),
		replay.Config{Path: repoFile(t, "testdata/captures/gpuvis_amdgpu_4.11_full.trace-cmd-report.txt.gz"), HasEpoch: true},
		pipeline.Config{}, func(td ptrace.Traces) {
			c := ptrace.NewTraces()
			td.CopyTo(c)
			batches = append(batches, c)
		})
	if err != nil {
		t.Fatal(err)
	}
	otlp, out, st := writeBoth(t, batches)
	tf := parseTrace(t, out)
	checkStructure(t, tf)
	jobs := checkAgainstInput(t, tf, rawSpans(t, otlp))
	if jobs < 700 {
		t.Fatalf("%d jobs in the real capture's spans: the replay lost most of them", jobs)
	}
	t.Logf("%d jobs, %d slices, %d flows, %d unnested", st.Jobs, st.Slices, st.Flows, st.Unnested)
}

// synth builds spans the way internal/emit lays them out.
type synth struct {
	td  ptrace.Traces
	res map[string]ptrace.SpanSlice
	n   uint64
}

const base = int64(1_700_000_000_000_000_000)

func (s *synth) spans(service string, pid int64) ptrace.SpanSlice {
	key := fmt.Sprint(service, pid)
	if ss, ok := s.res[key]; ok {
		return ss
	}
	rs := s.td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", service)
	if pid != 0 {
		rs.Resource().Attributes().PutInt("process.pid", pid)
	}
	ss := rs.ScopeSpans().AppendEmpty().Spans()
	s.res[key] = ss
	return ss
}

func (s *synth) id() (pcommon.TraceID, pcommon.SpanID) {
	s.n++
	var tr pcommon.TraceID
	var sp pcommon.SpanID
	tr[0], tr[15] = 0xab, byte(s.n)
	sp[0], sp[7] = 0xcd, byte(s.n)
	return tr, sp
}

type stg struct {
	name       string
	start, end int64
}

type jobSpec struct {
	service        string
	pid, tid       int64
	thread         string
	ring           string
	fence          string
	start, end     int64
	errMsg         string
	stages         []stg
	spanPIDUnknown bool
}

func (s *synth) job(j jobSpec) {
	ss := s.spans(j.service, j.pid)
	tr, id := s.id()
	sp := ss.AppendEmpty()
	sp.SetName("gpu.job")
	sp.SetTraceID(tr)
	sp.SetSpanID(id)
	sp.SetStartTimestamp(pcommon.Timestamp(base + j.start))
	sp.SetEndTimestamp(pcommon.Timestamp(base + j.end))
	a := sp.Attributes()
	a.PutStr("ghostdriver.driver", "amdgpu")
	a.PutStr("ghostdriver.device", "0000:03:00.0")
	a.PutStr("ghostdriver.ring", j.ring)
	ctx, seq, _ := strings.Cut(j.fence, ":")
	a.PutStr("ghostdriver.fence.context", ctx)
	a.PutStr("ghostdriver.fence.seqno", seq)
	if j.pid != 0 && !j.spanPIDUnknown {
		a.PutInt("process.pid", j.pid)
	}
	if j.tid != 0 {
		a.PutInt("thread.id", j.tid)
		a.PutStr("thread.name", j.thread)
	}
	a.PutStr("ghostdriver.job.outcome", "completed")
	if j.errMsg != "" {
		a.PutStr("ghostdriver.job.outcome", "incomplete")
		sp.Status().SetCode(ptrace.StatusCodeError)
		sp.Status().SetMessage(j.errMsg)
	}
	for i, st := range j.stages {
		c := ss.AppendEmpty()
		c.SetName(st.name)
		c.SetTraceID(tr)
		var cid pcommon.SpanID
		cid[0], cid[6], cid[7] = 0xee, byte(s.n), byte(i)
		c.SetSpanID(cid)
		c.SetParentSpanID(id)
		c.SetStartTimestamp(pcommon.Timestamp(base + st.start))
		c.SetEndTimestamp(pcommon.Timestamp(base + st.end))
		c.Attributes().PutStr("ghostdriver.stage.source", "measured")
		c.Attributes().PutStr("ghostdriver.stage.rule", "a→b")
	}
}

func synthetic() ptrace.Traces {
	s := &synth{td: ptrace.NewTraces(), res: map[string]ptrace.SpanSlice{}}
	full := func(o int64) []stg {
		return []stg{{"ioctl", o, o + 100}, {"bo_validation", o, o + 40}, {"fence_dependency", o + 50, o + 200},
			{"scheduler_queue", o + 200, o + 220}, {"ring_emission", o + 220, o + 260}, {"dma_scheduling", o + 260, o + 300},
			{"execution", o + 300, o + 901}, {"fence_signal", o + 901, o + 1000}}
	}
	s.job(jobSpec{service: "vkcube", pid: 500, tid: 501, thread: "vkcube:cs0", ring: "gfx", fence: "7:1", start: 0, end: 1000, stages: full(0)})
	// A gang submit: one ioctl queues two jobs; both carry the same ioctl interval.
	s.job(jobSpec{service: "vkcube", pid: 500, tid: 501, thread: "vkcube:cs0", ring: "gfx", fence: "7:2", start: 2000, end: 2500,
		stages: []stg{{"ioctl", 2000, 2100}, {"bo_validation", 2000, 2030}, {"fence_dependency", 2050, 2050},
			{"ring_emission", 2050, 2080}, {"execution", 2080, 2500}}})
	s.job(jobSpec{service: "vkcube", pid: 500, tid: 501, thread: "vkcube:cs0", ring: "compute", fence: "8:1", start: 2000, end: 2710,
		stages: []stg{{"ioctl", 2000, 2100}, {"bo_validation", 2000, 2030}, {"fence_dependency", 2060, 2060},
			{"ring_emission", 2060, 2090}, {"dma_scheduling", 2090, 2500}, {"execution", 2500, 2700}, {"fence_signal", 2700, 2710}}})
	// An unfinished job with a stage this exporter has never heard of that overlaps another.
	s.job(jobSpec{service: "vkcube", pid: 500, tid: 501, thread: "vkcube:cs0", ring: "gfx", fence: "7:3", start: 3000, end: 3500,
		errMsg: "incomplete: not run when the input ended",
		stages: []stg{{"fence_dependency", 3000, 3300}, {"gpu_preempt", 3200, 3500}}})
	// The same thread, its process not on the span nor the resource: learnt from the others.
	s.job(jobSpec{service: "unknown_service", tid: 501, thread: "vkcube:cs0", ring: "gfx", fence: "7:4", start: 4000, end: 4400,
		stages: []stg{{"fence_dependency", 4000, 4000}, {"ring_emission", 4000, 4010}, {"execution", 4010, 4400}}})
	// A thread whose process nobody tells; no ioctl events.
	s.job(jobSpec{service: "unknown_service", tid: 777, thread: "Xorg<&>", ring: "gfx", fence: "9:1", start: 4100, end: 4600,
		stages: []stg{{"fence_dependency", 4100, 4100}, {"ring_emission", 4100, 4120}, {"dma_scheduling", 4120, 4400}, {"execution", 4400, 4600}}})
	// No submitting thread at all.
	s.job(jobSpec{service: "unknown_service", ring: "sdma0", fence: "10:1", start: 5000, end: 5300,
		stages: []stg{{"execution", 5000, 5300}}})
	// Not jobs: a CUDA submission tree and a stage whose job is not in the input.
	ss := s.spans("trainer", 900)
	tr, id := s.id()
	c := ss.AppendEmpty()
	c.SetName("cuda.submission")
	c.SetTraceID(tr)
	c.SetSpanID(id)
	o := ss.AppendEmpty()
	o.SetName("execution")
	o.SetTraceID(tr)
	o.SetSpanID(pcommon.SpanID{9, 9, 9})
	o.SetParentSpanID(pcommon.SpanID{8, 8, 8})
	o.Attributes().PutStr("ghostdriver.stage.source", "inferred")
	return s.td
}

func TestSyntheticTraceJSON(t *testing.T) {
	otlp, out, st := writeBoth(t, []ptrace.Traces{synthetic()})
	tf := parseTrace(t, out)
	checkStructure(t, tf)
	checkAgainstInput(t, tf, rawSpans(t, otlp))
	if tf.other["unnested_stage_slices"] != "1" || st.Unnested != 1 {
		t.Errorf("unnested stages: otherData %q, stats %d; want 1 (gpu_preempt overlaps fence_dependency)", tf.other["unnested_stage_slices"], st.Unnested)
	}
	if tf.other["spans_not_drawn_other"] != "1" || tf.other["spans_not_drawn_orphan"] != "1" {
		t.Errorf("spans not drawn: other %q orphan %q, want 1 and 1", tf.other["spans_not_drawn_other"], tf.other["spans_not_drawn_orphan"])
	}
	procs := map[int64]string{}
	named := false
	for _, e := range tf.events {
		if e.Ph == "M" && e.Name == "process_name" {
			procs[e.Pid] = e.Args["name"].(string)
		}
		named = named || (e.Ph == "M" && e.Name == "thread_name" && e.Args["name"] == "Xorg<&>")
	}
	// <, > and & are written as themselves: importers' string readers do not all take \u escapes.
	if !named || bytes.Contains(out, []byte(`\u003c`)) || bytes.Contains(out, []byte(`\u0026`)) || bytes.Contains(out, []byte(`\u003e`)) {
		t.Errorf("the thread named Xorg<&>: named %v, \\u escapes in the file %v", named, bytes.Contains(out, []byte(`\u00`)))
	}
	for _, e := range tf.events {
		if e.Ph != "X" {
			continue
		}
		switch {
		case e.Args["fence"] == "7:4" && e.Cat == "submit":
			if e.Pid != 500 || e.Tid != 501 {
				t.Errorf("job 7:4's submit slice %q on %d/%d, want process 500 (its thread's, from the other jobs) thread 501", e.Name, e.Pid, e.Tid)
			}
		case e.Args["fence"] == "9:1" && e.Name == "queue":
			if e.Tid != 777 || !strings.Contains(procs[e.Pid], "unknown") || e.Pid < 1<<22 {
				t.Errorf("job 9:1's queue slice on %d/%d (%q), want thread 777 in a process named as unknown", e.Pid, e.Tid, procs[e.Pid])
			}
		case e.Name == "gpu_preempt":
			if e.Pid != pidOfJob(tf, "7:3") {
				t.Errorf("the unknown stage is on process %d, not its ring's", e.Pid)
			}
		}
	}
}

// pidOfJob is the process of a job's in-flight slice.
func pidOfJob(tf traceFile, fence string) int64 {
	for _, e := range tf.events {
		if e.Ph == "X" && e.Cat == "job" && e.Args["fence"] == fence {
			return e.Pid
		}
	}
	return -1
}

type sliceKey struct {
	name    string
	ts, dur int64
}

// checkAgainstInput compares the export with the input's spans; it returns the number
// of gpu.job spans.
func checkAgainstInput(t *testing.T, tf traceFile, raw []rawSpan) int {
	t.Helper()
	jobs := map[string]rawSpan{}
	for _, s := range raw {
		if s.name == "gpu.job" {
			jobs[s.traceID+s.spanID] = s
		}
	}
	stagesOf := map[string][]rawSpan{} // job span id → its stages
	origin := int64(-1)
	for _, j := range jobs {
		if origin < 0 || j.start < origin {
			origin = j.start
		}
	}
	for _, s := range raw {
		j, ok := jobs[s.traceID+s.parent]
		if !ok || s.parent == "" || s.attrs["ghostdriver.stage.source"] == "" {
			continue
		}
		stagesOf[j.spanID] = append(stagesOf[j.spanID], s)
		origin = min(origin, s.start)
	}
	if got := tf.other["origin_unix_nano"]; got != fmt.Sprint(origin) {
		t.Errorf("origin %s, want %d (the earliest job or stage start)", got, origin)
	}

	want := map[sliceKey]int{}
	for _, ss := range stagesOf {
		for _, s := range ss {
			want[sliceKey{s.name, s.start - origin, max(s.end-s.start, 0)}]++
		}
	}
	got := map[sliceKey]int{}
	procs := map[int64]string{}
	threads := map[track]string{}
	byJob := map[string][]tev{}
	for _, e := range tf.events {
		if e.Ph == "M" && e.Name == "process_name" {
			procs[e.Pid] = e.Args["name"].(string)
		}
		if e.Ph == "M" && e.Name == "thread_name" {
			threads[track{e.Pid, e.Tid}] = e.Args["name"].(string)
		}
		if e.Ph != "X" {
			continue
		}
		switch e.Cat {
		case "stage":
			got[sliceKey{e.Name, e.ts, e.dur}]++
			byJob[e.Args["job_span_id"].(string)] = append(byJob[e.Args["job_span_id"].(string)], e)
		case "job":
			byJob[e.Args["span_id"].(string)] = append(byJob[e.Args["span_id"].(string)], e)
		case "submit":
			byJob[e.Args["job_span_id"].(string)] = append(byJob[e.Args["job_span_id"].(string)], e)
		default:
			t.Errorf("slice %q has category %q", e.Name, e.Cat)
		}
	}
	if len(want) == 0 {
		t.Fatal("the input has no stage spans")
	}
	for k, n := range want {
		if got[k] != n {
			t.Errorf("stage slice %v: %d in the export, %d in the spans", k, got[k], n)
		}
	}
	for k, n := range got {
		if want[k] == 0 {
			t.Errorf("stage slice %v (%d) is not in the spans", k, n)
		}
	}

	flowsWanted := 0
	for _, j := range jobs {
		evs := byJob[j.spanID]
		var job *tev
		for i := range evs {
			if evs[i].Cat == "job" {
				if job != nil {
					t.Errorf("job %s drawn twice", j.spanID)
				}
				job = &evs[i]
			}
		}
		if job == nil {
			t.Errorf("job %s (fence %s:%s) is not drawn", j.spanID, j.attrs["ghostdriver.fence.context"], j.attrs["ghostdriver.fence.seqno"])
			continue
		}
		ring := "GPU " + j.attrs["ghostdriver.driver"] + "/" + j.attrs["ghostdriver.ring"]
		if d := j.attrs["ghostdriver.device"]; d != "" {
			ring += " (" + d + ")"
		}
		if procs[job.Pid] != ring {
			t.Errorf("job %s is on process %q, want %q", j.spanID, procs[job.Pid], ring)
		}
		if job.end != j.end-origin || job.ts < j.start-origin {
			t.Errorf("job %s drawn [%d,%d], its span is [%d,%d]", j.spanID, job.ts, job.end, j.start-origin, j.end-origin)
		}
		// Ring-side stages on the job's ring; ioctl-side ones on the submitting thread.
		var execTS int64 = -1
		for _, s := range stagesOf[j.spanID] {
			if s.name == "execution" {
				execTS = s.start - origin
			}
		}
		tid := j.attrs["thread.id"]
		var out, in *tev
		for i := range evs {
			e := &evs[i]
			onThread := e.Name == "ioctl" || e.Name == "bo_validation" || e.Cat == "submit"
			if onThread {
				// A thread's overlapping submissions (a gang submit) get extra tracks
				// named after it.
				if fmt.Sprint(e.Tid) != tid && !strings.Contains(threads[track{e.Pid, e.Tid}], "["+tid+"]") {
					t.Errorf("job %s: %s on thread %d, its thread is %q", j.spanID, e.Name, e.Tid, tid)
				}
				if pid := j.attrs["process.pid"]; pid != "" && fmt.Sprint(e.Pid) != pid {
					t.Errorf("job %s: %s in process %d, want %s", j.spanID, e.Name, e.Pid, pid)
				}
			} else if e.Pid != job.Pid {
				t.Errorf("job %s: stage %s on process %d, its ring is %d", j.spanID, e.Name, e.Pid, job.Pid)
			}
			if e.flowOut {
				out = e
			}
			if e.flowIn {
				in = e
			}
		}
		if tid == "" {
			if out != nil || in != nil {
				t.Errorf("job %s has no submitting thread but a flow", j.spanID)
			}
			continue
		}
		flowsWanted++
		if out == nil || in == nil || out.bind != in.bind {
			t.Errorf("job %s: no flow from its submission to its execution", j.spanID)
			continue
		}
		if execTS >= 0 && (in.Name != "execution" || in.ts != execTS) {
			t.Errorf("job %s: flow ends on %q at %d, want its execution at %d", j.spanID, in.Name, in.ts, execTS)
		}
	}
	flows := 0
	for _, e := range tf.events {
		if e.flowOut {
			flows++
		}
	}
	if flows != flowsWanted {
		t.Errorf("%d flows, want %d (jobs with a submitting thread)", flows, flowsWanted)
	}
	n := 0
	for _, e := range tf.events {
		if e.Cat == "job" {
			n++
		}
	}
	if n != len(jobs) {
		t.Errorf("%d job slices, %d gpu.job spans", n, len(jobs))
	}
	keys := make([]string, 0, len(want))
	for k := range want {
		keys = append(keys, k.name)
	}
	sort.Strings(keys)
	return len(jobs)
}
