// The JobEncoder against the SpanBuilder + pdata's marshallers, the path it replaces: the
// same jobs through both, batch after batch, must give the same bytes in both formats
// (pdata's ptrace.JSONMarshaler / ProtoMarshaler on the builder's Traces are the reference,
// not this package's encoders), and the encoder's bytes must decode with pdata's
// unmarshallers to traces that marshal back to the reference. Jobs: the fixtures, jobs
// with tenant attributes that replace the builder's own and repeat keys (also inside
// maps), every value kind, long strings at the varint boundaries, repeated identities
// (renamed ids), links within and across batches, tenants named by a later job, and a
// few thousand random jobs of eight processes so that a tenant's spans pass 16 KiB.
package emit

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/ghostdriver/ghostdriver/internal/assemble"
	"github.com/ghostdriver/ghostdriver/internal/attr"
	"github.com/ghostdriver/ghostdriver/internal/ctxtier"
	"github.com/ghostdriver/ghostdriver/internal/event"
	"github.com/ghostdriver/ghostdriver/internal/metadata"
	"github.com/ghostdriver/ghostdriver/internal/sample"
)

// encoderCase is one format: pdata's marshaller and unmarshaller of it.
type encoderCase struct {
	format    Format
	marshal   func(ptrace.Traces) ([]byte, error)
	unmarshal func([]byte) (ptrace.Traces, error)
}

var encoderCases = []encoderCase{
	{FormatJSON, (&ptrace.JSONMarshaler{}).MarshalTraces, (&ptrace.JSONUnmarshaler{}).UnmarshalTraces},
	{FormatProto, (&ptrace.ProtoMarshaler{}).MarshalTraces, (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces},
}

func (c encoderCase) String() string {
	if c.format == FormatProto {
		return "proto"
	}
	return "json"
}

// sameAsBuilder runs batches through a SpanBuilder and a JobEncoder with opts and
// requires every batch's bytes to be the marshaller's bytes of the builder's Traces
// (extra, when set, gives each batch resource spans of another kind, added to both).
// It returns the attributes it compared (attrCoverage).
func sameAsBuilder(t *testing.T, c encoderCase, batches [][]*assemble.Job, extra func(int) ptrace.Traces, opts ...SpanOption) attrCoverage {
	t.Helper()
	return sameAsBuilderSampled(t, c, batches, extra, nil, opts...)
}

// sameAsBuilderSampled is sameAsBuilder with the sampler's decision for each job
// (sampled nil: Append).
func sameAsBuilderSampled(t *testing.T, c encoderCase, batches [][]*assemble.Job, extra func(int) ptrace.Traces,
	sampled func(*assemble.Job) Sampled, opts ...SpanOption) attrCoverage {
	t.Helper()
	cov := attrCoverage{}
	b := NewSpanBuilder(testClock, opts...)
	e := NewJobEncoder(testClock, c.format, opts...)
	for n, batch := range batches {
		for _, j := range batch {
			if sampled != nil {
				b.AppendSampled(j, sampled(j))
				e.AppendSampled(j, sampled(j))
				continue
			}
			b.Append(j)
			e.Append(j)
		}
		if b.Len() != e.Len() {
			t.Fatalf("batch %d: builder holds %d jobs, encoder %d", n, b.Len(), e.Len())
		}
		td := b.Take()
		cov.add(td)
		got := e.Take()
		if extra != nil {
			x := extra(n)
			x.ResourceSpans().MoveAndAppendTo(td.ResourceSpans())
			got.AddTraces(extra(n))
		}
		want, err := c.marshal(td)
		if err != nil {
			t.Fatal(err)
		}
		if got.SpanCount() != td.SpanCount() {
			t.Fatalf("batch %d: %d spans encoded, the builder made %d", n, got.SpanCount(), td.SpanCount())
		}
		if got.Size() != len(want) {
			t.Errorf("batch %d: Size %d, the marshaller wrote %d bytes", n, got.Size(), len(want))
		}
		bs := got.AppendTo([]byte("prefix"))
		if !bytes.HasPrefix(bs, []byte("prefix")) {
			t.Fatal("AppendTo did not keep the destination's bytes")
		}
		bs = bs[len("prefix"):]
		var w bytes.Buffer
		if _, err := got.WriteTo(&w); err != nil || !bytes.Equal(w.Bytes(), bs) {
			t.Fatalf("batch %d: WriteTo wrote other bytes than AppendTo (%v)", n, err)
		}
		if !bytes.Equal(bs, want) {
			i := 0
			for i < len(bs) && i < len(want) && bs[i] == want[i] {
				i++
			}
			lo := max(0, i-60)
			t.Fatalf("%s batch %d: differs from the builder+marshaller at byte %d of %d/%d:\n got …%q\nwant …%q", c, n, i, len(bs), len(want),
				bs[lo:min(len(bs), i+60)], want[lo:min(len(want), i+60)])
		}
		back, err := c.unmarshal(bs)
		if err != nil {
			t.Fatalf("batch %d: pdata cannot read the encoder's bytes: %v", n, err)
		}
		if again, _ := c.marshal(back); !bytes.Equal(again, want) {
			t.Fatalf("batch %d: the encoder's bytes decode to other traces than the builder's", n)
		}
		got.Release()
	}
	if b.RenamedIDs() != e.RenamedIDs() {
		t.Errorf("renamed ids: builder %d, encoder %d", b.RenamedIDs(), e.RenamedIDs())
	}
	return cov
}

func TestJobEncoderSameAsBuilderOnFixtures(t *testing.T) {
	hook := func(j *assemble.Job, attrs pcommon.Map) {
		if j.PID == 1000 {
			attrs.PutStr("service.name", "renderer")
		}
		attrs.PutInt("hook.calls", 1)
	}
	for _, c := range encoderCases {
		t.Run(c.String(), func(t *testing.T) {
			sameAsBuilder(t, c, [][]*assemble.Job{allJobs()}, nil)
			sameAsBuilder(t, c, [][]*assemble.Job{allJobs()}, nil, WithStageSpans(false))
			sameAsBuilder(t, c, [][]*assemble.Job{allJobs(), allJobs()}, nil,
				WithResourceFunc(hook), WithHostName("gpu-node-7"), WithScopeVersion("1.2.3"), WithIDSalt(99))
			sameAsBuilder(t, c, [][]*assemble.Job{allJobs()}, nil, WithScopeVersion(""), WithLinkMemory(0))
			// a tenant named by a later job of the batch, then known in the next
			sameAsBuilder(t, c, [][]*assemble.Job{{partialJob(), fullJob()}, {partialJob()}}, nil)
			// nothing at all
			sameAsBuilder(t, c, [][]*assemble.Job{{}}, nil)
			// the sampler's decisions: a threshold, certainty, a detached job; the second
			// batch repeats every identity, so every job is renamed (rv in its tracestate)
			sameAsBuilderSampled(t, c, [][]*assemble.Job{allJobs(), allJobs()}, nil, fixtureSampled)
			sameAsBuilderSampled(t, c, [][]*assemble.Job{allJobs()}, nil, fixtureSampled, WithStageSpans(false))
			// only another kind's spans (the CUDA command's batches), then both
			cudaOnly := func(n int) ptrace.Traces {
				td := ptrace.NewTraces()
				for i := range 2 {
					rs := td.ResourceSpans().AppendEmpty()
					rs.Resource().Attributes().PutInt("process.pid", int64(n*10+i))
					sp := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
					sp.SetName("cuda.launch")
					sp.SetSpanID(pcommon.SpanID{9, byte(n), byte(i)})
				}
				return td
			}
			sameAsBuilder(t, c, [][]*assemble.Job{{}, {}, {fullJob()}}, cudaOnly)
		})
	}
}

// Tenant attributes that replace the builder's own, repeat keys and hold every kind.
func TestJobEncoderSameAsBuilderOnTenantAttributes(t *testing.T) {
	long := strings.Repeat("x", 130) // a length that needs two varint bytes
	j := enrichedJob()
	j.Attrs = append(j.Attrs,
		attr.String(metadata.AttrRing, "replaced ring"), // the builder's own key: keeps its place
		attr.Int("ghostdriver.client_id", 13),           // repeated: the last value wins
		named("", attr.Value{}),
		named("d.small", attr.Value{Kind: attr.KindDouble, Double: 1e-7}),
		named("d.inf", attr.Value{Kind: attr.KindDouble, Double: math.Inf(-1)}),
		named("d.half", attr.Value{Kind: attr.KindDouble, Double: 0.5}),
		named("b.nil", attr.Value{Kind: attr.KindBytes}),
		named("b", attr.Value{Kind: attr.KindBytes, Bytes: []byte{0, 1, 0xff}}),
		named("a.empty", attr.Value{Kind: attr.KindArray}),
		named("a", attr.Value{Kind: attr.KindArray, Array: []attr.Value{{Kind: attr.KindString, Str: long}, {Kind: attr.KindInt, Int: -1}, {}}}),
		named("m.empty", attr.Value{Kind: attr.KindMap}),
		named("m", attr.Value{Kind: attr.KindMap, Map: []attr.Attribute{attr.String("k", "1"), attr.Bool("z", false), attr.String("k", "2"),
			{Key: "", Value: attr.Value{Kind: attr.KindInt, Int: 3}}}}),
		named("unknown.kind", attr.Value{Kind: attr.Kind(200)}),
		attr.String("esc\"aped\n", "tab\there \x01 é \\"),
		attr.String(long, long),
		attr.Int(metadata.AttrProcessPID, -5),
	)
	j.Comm = "c\u2028omm" // JSON escaping of the builder's own strings
	j.Resource = append(j.Resource, attr.String(long, long), named("res.map", attr.Value{Kind: attr.KindMap,
		Map: []attr.Attribute{attr.Int("n", 1), attr.Int("n", 2)}}))
	for _, c := range encoderCases {
		t.Run(c.String(), func(t *testing.T) {
			sameAsBuilder(t, c, [][]*assemble.Job{{j, fullJob(), j}}, nil)
		})
	}
}

func named(k string, v attr.Value) attr.Attribute { return attr.Attribute{Key: k, Value: v} }

// Random jobs of eight processes (and of none), batch after batch: repeated identities,
// links to jobs of this and earlier batches and to unknown ones, every outcome, loss,
// application contexts, sizes that pass the varint boundaries of tenants and requests.
func TestJobEncoderSameAsBuilderOnRandomJobs(t *testing.T) {
	for _, c := range encoderCases {
		t.Run(c.String(), func(t *testing.T) {
			batches := randomBatches()
			// CUDA-like resource spans from another builder beside the jobs, in some batches
			extra := func(n int) ptrace.Traces {
				td := ptrace.NewTraces()
				if n%2 == 1 {
					rs := td.ResourceSpans().AppendEmpty()
					rs.Resource().Attributes().PutStr("service.name", fmt.Sprint("cuda", n))
					sp := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
					sp.SetName("cuda.launch")
					sp.SetSpanID(pcommon.SpanID{1, 2, 3, byte(n)})
				}
				return td
			}
			sameAsBuilder(t, c, batches, extra)
			sameAsBuilder(t, c, batches, nil, WithStageSpans(false), WithIDSalt(7))
		})
	}
}

// randomBatches are six batches of random jobs, the same on every call.
func randomBatches() [][]*assemble.Job {
	r := rand.New(rand.NewPCG(1, 2))
	var batches [][]*assemble.Job
	var fences []event.FenceKey
	for n := range 6 {
		size := []int{1, 3, 700, 2500, 40, 1024}[n]
		batch := make([]*assemble.Job, size)
		for i := range batch {
			batch[i] = randomJob(r, &fences)
		}
		batches = append(batches, batch)
	}
	return batches
}

func randomJob(r *rand.Rand, fences *[]event.FenceKey) *assemble.Job {
	pids := []uint32{0, 100, 101, 102, 103, 104, 105, 106, 107}
	j := fullJob()
	j.PID = pids[r.IntN(len(pids))]
	j.TID = j.PID + uint32(r.IntN(2))
	j.Comm = fmt.Sprint("proc-", j.PID)
	j.Ring = []string{"gfx", "comp_1.0.0", "sdma0", "", strings.Repeat("ring", 25+r.IntN(40))}[r.IntN(5)] // long: 2-byte lengths
	start := r.Int64N(1 << 40)
	j.Start, j.End = start, start+r.Int64N(1<<20)-1000
	for i := range j.Stages {
		j.Stages[i].Start = start + r.Int64N(1000)
		j.Stages[i].End = j.Stages[i].Start + r.Int64N(100000) - 10
	}
	j.Stages = j.Stages[:r.IntN(len(j.Stages)+1)]
	switch r.IntN(10) {
	case 0: // an identity seen before: renamed
		if len(*fences) > 0 {
			j.Finished = (*fences)[r.IntN(len(*fences))]
		}
	case 1: // no finished fence: the fallback identity
		j.Finished = event.FenceKey{}
	default:
		j.Finished = event.FenceKey{Context: 1000 + r.Uint64N(4), Seqno: r.Uint64N(1 << 33)}
	}
	if !j.Finished.IsZero() {
		*fences = append(*fences, j.Finished)
	}
	j.HWFence = event.FenceKey{Context: r.Uint64N(3), Seqno: r.Uint64()}
	j.JobID = r.Uint64() >> r.IntN(64)
	j.Outcome = assemble.Outcome(r.IntN(3))
	if j.Outcome != assemble.Completed && r.IntN(2) == 0 {
		j.Reason = "reason " + strings.Repeat("r", r.IntN(200))
	}
	for range r.IntN(4) {
		d := assemble.Dependency{Fence: event.FenceKey{Context: 99, Seqno: r.Uint64N(100)}, Wait: assemble.DepWait(r.IntN(3))}
		if len(*fences) > 0 && r.IntN(3) > 0 {
			d.Job, d.JobKnown = (*fences)[r.IntN(len(*fences))], true
		} else if r.IntN(2) == 0 {
			d.Job, d.JobKnown = event.FenceKey{Context: 5000, Seqno: r.Uint64N(50)}, true
		}
		j.Deps = append(j.Deps, d)
	}
	if r.IntN(5) == 0 {
		j.Loss = assemble.LossInfo{Windows: 1, Events: r.Uint64(), Counted: r.IntN(2) == 0}
	}
	if r.IntN(4) == 0 {
		j.TraceID, j.SpanID, j.CtxTier = appTrace, appSpan, ctxtier.Traceparent
		j.TraceID[0] = byte(r.IntN(256))
	}
	if r.IntN(6) == 0 {
		j.Attrs = []attr.Attribute{attr.String("hw.vendor", "AMD"), attr.Int("n", r.Int64())}
	}
	return j
}

// A batch whose buffers grew past maxPooledBatch is not kept for reuse after Release; a
// small one is (the next Take hands the same batch out again).
func TestLargeBatchNotPooled(t *testing.T) {
	e := NewJobEncoder(testClock, FormatJSON)
	e.Append(fullJob())
	small := e.Take()
	small.Release()
	e.Take() // the batch started at the first Take, empty
	if e.cur != small {
		t.Fatal("a small released batch was not reused")
	}
	for i := 0; e.cur.Size() <= maxPooledBatch; i++ {
		j := fullJob()
		j.Finished.Seqno = uint64(i)
		e.Append(j)
		e.cur.pieces = e.cur.pieces[:0] // Size encodes again
	}
	large := e.Take()
	size := large.Size()
	large.Release()
	e.Take() // the batch started at the last Take; the next one is new, not large
	if e.cur == large {
		t.Fatalf("a released batch of %d bytes was kept for reuse", size)
	}
}

// fixtureSampled is a sampler's decision for each fixture: a detached job where it has an
// application context, a probability threshold for jobs that completed, certainty else.
func fixtureSampled(j *assemble.Job) Sampled {
	switch {
	case hasAppContext(j):
		return Sampled{TraceState: "ot=th:0", Detach: true}
	case j.Outcome == assemble.Completed:
		return Sampled{TraceState: "ot=th:fd7"}
	}
	return Sampled{TraceState: "ot=th:0"}
}

func TestSampledSpans(t *testing.T) {
	b := NewSpanBuilder(testClock)
	for _, j := range allJobs() {
		b.AppendSampled(j, fixtureSampled(j))
	}
	again := fullJob() // the first fixture's identity again: renamed
	b.AppendSampled(again, Sampled{TraceState: "ot=th:fd7"})
	td := b.Take()
	jobs := 0
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, sp := range ss.Spans().All() {
				ts := sp.TraceState().AsRaw()
				if ts != "ot=th:0" && ts != "ot=th:fd7" && !strings.HasPrefix(ts, "ot=rv:") {
					t.Errorf("span %s %s: tracestate %q", sp.Name(), sp.SpanID(), ts)
				}
				if sp.Name() != JobSpanName {
					continue
				}
				jobs++
				if sp.TraceID() == pcommon.TraceID(appTrace) {
					t.Errorf("a detached job stayed in the application's trace")
				}
				if ts == "ot=th:0" && !sp.ParentSpanID().IsEmpty() {
					t.Errorf("job span %s: parent %s, want none (detached or a root)", sp.SpanID(), sp.ParentSpanID())
				}
				for _, l := range sp.Links().All() {
					if v, ok := l.Attributes().Get(metadata.AttrSamplingUnsampledParent); ok {
						if !v.Bool() || l.TraceID() != pcommon.TraceID(appTrace) || l.SpanID() != pcommon.SpanID(appSpan) {
							t.Errorf("parent link %s/%s %v", l.TraceID(), l.SpanID(), v.AsRaw())
						}
					}
				}
				if strings.HasPrefix(ts, "ot=rv:") {
					want := sample.WithRandomness("ot=th:fd7", RootTraceID(0, again))
					if ts != want || sp.TraceID() == pcommon.TraceID(RootTraceID(0, again)) {
						t.Errorf("renamed job: tracestate %q (want %q), trace %s", ts, want, sp.TraceID())
					}
				}
			}
		}
	}
	if jobs != len(allJobs())+1 {
		t.Fatalf("%d job spans", jobs)
	}
}
