// Span ids are unique whatever the jobs: two jobs of one identity (the same finished
// fence, the same fallback identity) never share a span id; the first keeps the derived
// id that links computed from the fence point at; the renaming is counted. The fuzz
// target feeds hostile job sequences (few fence keys, fallback identities, app contexts,
// stages on and off, batches taken at any point) and checks every span id in the output.
package emit

import (
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/ghostdriver/ghostdriver/internal/assemble"
	"github.com/ghostdriver/ghostdriver/internal/event"
)

func stagedJob(fin event.FenceKey, start int64) *assemble.Job {
	return &assemble.Job{
		Driver: "amdgpu", Ring: "gfx", Finished: fin, Start: start, End: start + 300,
		Stages: []assemble.StageSpan{
			{Stage: assemble.StageFenceDependency, Start: start, End: start + 100},
			{Stage: assemble.StageExecution, Start: start + 100, End: start + 300},
		},
	}
}

func TestSameIdentityTwice(t *testing.T) {
	fin := event.FenceKey{Context: 4929, Seqno: 3832}
	b := NewSpanBuilder(testClock)
	b.Append(stagedJob(fin, 1000))
	b.Append(stagedJob(fin, 5000)) // the same job assembled a second time from pieces
	spans := flatten(b.Take())
	seen := map[pcommon.SpanID]bool{}
	for _, e := range spans {
		if seen[e.span.SpanID()] {
			t.Fatalf("span id %v twice", e.span.SpanID())
		}
		seen[e.span.SpanID()] = true
	}
	jobs := jobSpans(spans)
	if len(jobs) != 2 || len(spans) != 6 {
		t.Fatalf("%d spans, %d job spans", len(spans), len(jobs))
	}
	// the first keeps the id a link to the fence computes
	_, linked := derivedIDs(identityOfFence(0, fin))
	if jobs[0].span.SpanID() != linked || jobs[1].span.SpanID() == linked {
		t.Errorf("ids %v %v, a link to the fence reaches %v", jobs[0].span.SpanID(), jobs[1].span.SpanID(), linked)
	}
	if b.RenamedIDs() != 1 {
		t.Errorf("renamed %d, want 1", b.RenamedIDs())
	}
}

// allStagesJob is a job with one span of every stage.
func allStagesJob(fin event.FenceKey, start int64) *assemble.Job {
	j := &assemble.Job{Driver: "amdgpu", Ring: "gfx", Finished: fin, Start: start, End: start + 10*int64(assemble.NumStages)}
	for s := range assemble.NumStages {
		t := start + 10*int64(s)
		j.Stages = append(j.Stages, assemble.StageSpan{Stage: assemble.Stage(s), Start: t, End: t + 10})
	}
	return j
}

// A job's span id is its base (low 4 bits 0) and each stage span's id is that base with the
// stage's number + 1 there: the guard then needs only the job's id to keep all of them
// unique.
func TestStageSpanIDsTakeTheJobsBase(t *testing.T) {
	var jobs []*assemble.Job
	for i := range 64 {
		jobs = append(jobs, allStagesJob(event.FenceKey{Context: 7, Seqno: uint64(i)}, int64(i)*1000))
	}
	spans := build(t, jobs)
	for _, js := range jobSpans(spans) {
		base := js.span.SpanID()
		if base[7]&stageBits != 0 {
			t.Fatalf("job span id %v: low 4 bits %#x, want 0", base, base[7]&stageBits)
		}
		kids := childrenOf(spans, base)
		if len(kids) != assemble.NumStages {
			t.Fatalf("job %v: %d stage spans, want %d", base, len(kids), assemble.NumStages)
		}
		for _, k := range kids {
			s := stageNamed(t, k.Name())
			want := base
			want[7] |= byte(s) + 1
			if k.SpanID() != want {
				t.Errorf("stage span %s of job %v: id %v, want %v", k.Name(), base, k.SpanID(), want)
			}
		}
	}
}

func stageNamed(t *testing.T, name string) assemble.Stage {
	t.Helper()
	for s := range assemble.NumStages {
		if assemble.Stage(s).String() == name {
			return assemble.Stage(s)
		}
	}
	t.Fatalf("no stage named %q", name)
	return 0
}

// The guard remembers jobs, not spans: a job whose identity comes back after more than
// idMemory spans but fewer than idMemory jobs (here 20 000 jobs of 9 spans: 180 000 spans)
// is still renamed, so none of its spans repeats one of the first occurrence's.
func TestGuardWindowCountsJobs(t *testing.T) {
	const between = 20_000
	if between*(assemble.NumStages+1) <= idMemory || between >= idMemory {
		t.Fatalf("the test needs more than %d spans and fewer than %d jobs in between", idMemory, idMemory)
	}
	b := NewSpanBuilder(testClock)
	first := event.FenceKey{Context: 1, Seqno: 1}
	seen := map[pcommon.SpanID]bool{}
	take := func() {
		for _, e := range flatten(b.Take()) {
			if id := e.span.SpanID(); seen[id] {
				t.Fatalf("span id %v repeated within %d jobs", id, between+2)
			} else {
				seen[id] = true
			}
		}
	}
	b.Append(allStagesJob(first, 0))
	for i := range between {
		b.Append(allStagesJob(event.FenceKey{Context: 2, Seqno: uint64(i)}, int64(i)))
		if i%1000 == 999 {
			take()
		}
	}
	b.Append(allStagesJob(first, 1)) // the first job's fence again
	take()
	if b.RenamedIDs() != 1 {
		t.Errorf("renamed %d jobs, want 1", b.RenamedIDs())
	}
}

func FuzzSpanIDsUnique(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0})                                     // one job twice
	f.Add([]byte{1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 4, 0xff, 0, 0, 0})          // repeats and a batch cut
	f.Add([]byte{0x80, 0, 1, 0, 0x80, 0, 1, 0, 0x40, 1, 1, 1, 0x40, 1, 1, 1}) // fallback identities, app contexts
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 4*2000 {
			data = data[:4*2000]
		}
		for _, stages := range []bool{true, false} {
			b := NewSpanBuilder(testClock, WithStageSpans(stages), WithLinkMemory(4))
			seen := map[pcommon.SpanID]bool{}
			check := func() {
				for _, e := range flatten(b.Take()) {
					id := e.span.SpanID()
					if id.IsEmpty() || seen[id] {
						t.Fatalf("span id %v empty or repeated (stages %v)", id, stages)
					}
					seen[id] = true
				}
			}
			for i := 0; i+4 <= len(data); i += 4 {
				c, s, st, flags := data[i], data[i+1], data[i+2], data[i+3]
				if c == 0xff {
					check() // a batch ends here
					continue
				}
				j := stagedJob(event.FenceKey{Context: uint64(c & 3), Seqno: uint64(s & 3)}, int64(st&7))
				if c&0x80 != 0 {
					j.Finished = event.FenceKey{} // the fallback identity: device, ring, job id, start, tid
					j.JobID = uint64(s & 1)
				}
				if c&0x40 != 0 {
					j.TraceID, j.SpanID = [16]byte{1}, [8]byte{flags | 1} // an app context: its span is the parent
				}
				j.Stages = j.Stages[:int(flags)%3]
				b.Append(j)
			}
			check()
		}
	})
}

// BenchmarkJobIDs is the id cost of one job as Append pays it: the job's ids with the
// collision guard's claim of the job and its stages, then each stage span's id.
func BenchmarkJobIDs(b *testing.B) {
	jobs := benchJobs(512)
	g := newIDGuard()
	var sink pcommon.SpanID
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		j := jobs[i%len(jobs)]
		j.Finished.Seqno = uint64(i) // a fresh identity each time, as in a live stream
		_, span, _ := jobIDs(0, j, g)
		for k := range j.Stages {
			sink = stageSpanID(span, j.Stages[k].Stage)
		}
	}
	_ = sink
}
