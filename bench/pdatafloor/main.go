//go:build unix

// pdatafloor measures what the collector's data model itself costs per GPU job, beside
// what ghostdriver's span path costs for the same jobs (BENCHMARKS.md, "What the
// data model costs a job"): the floor under any receiver that hands a job's spans to the
// collector as pdata and any exporter that marshals them, whatever its own code does.
//
//	go run ./bench/pdatafloor [-jobs 100000] [-rounds 7] [-batch 1024] [-o FILE]
//
// The jobs are real assembled jobs: a generated 6.17-style capture (internal/testcapture: 4 rings,
// 8 processes) replayed through the pipeline with no span output. Then, interleaved round
// by round, each condition renders every job, in batches of -batch jobs (the receiver's
// largest batch), and the process's CPU time (getrusage: the garbage collector's workers
// included) is divided by the jobs. A collection runs before each condition, outside its
// window; the garbage a condition makes is collected in its own window as the runtime
// paces it. The held jobs make the live heap larger than a receiver's, so collections are
// rarer here than in a receiver: the floor errs low, as a floor should.
//
//   - pdata-spans: the same spans written with plain pdata calls: per job a gpu.job span
//     with its 12 attributes and one child span per stage with its 2, one resource per
//     batch, no id derivation, no tenants, no links: the least a receiver can do;
//   - pdata-spans+proto: the same, then ptrace.ProtoMarshaler (what the OTLP exporter and
//     the file exporter's protobuf format do with every batch);
//   - pdata-1span+proto: only the gpu.job span (stage spans off), then the marshaller;
//   - builder: ghostdriver's SpanBuilder (what the receiver hands to the collector);
//   - builder+proto: the builder, then the marshaller (the receiver and an OTLP exporter);
//   - encoder-proto: ghostdriver's JobEncoder to OTLP protobuf bytes (the CLI's file
//     output, no pdata): what the bytes cost without the data model.
//
// Output: one TSV row per round and condition, then the medians and what they mean for
// issue 15's "2 % of one core at 10 000 jobs/s" (2 000 ns per job for everything).
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"syscall"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/ghostdriver/ghostdriver/internal/assemble"
	"github.com/ghostdriver/ghostdriver/internal/emit"
	"github.com/ghostdriver/ghostdriver/internal/event"
	"github.com/ghostdriver/ghostdriver/internal/metadata"
	"github.com/ghostdriver/ghostdriver/internal/pipeline"
	"github.com/ghostdriver/ghostdriver/internal/replay"
	"github.com/ghostdriver/ghostdriver/internal/testcapture"
)

func main() {
	jobs := flag.Int("jobs", 100_000, "jobs in the generated 6.17-style capture")
	rounds := flag.Int("rounds", 7, "interleaved rounds")
	batch := flag.Int("batch", 1024, "jobs per batch (the receiver's largest)")
	out := flag.String("o", "", "write the TSV here (default stdout)")
	flag.Parse()
	w := io.Writer(os.Stdout)
	if *out != "" {
		f, err := os.Create(*out)
		if err != nil {
			fail(err)
		}
		defer f.Close()
		w = f
	}
	if *jobs < 1 || *rounds < 1 || *batch < 1 {
		fail(fmt.Errorf("-jobs, -rounds and -batch must be at least 1"))
	}
	js, err := assembled(*jobs)
	if err != nil {
		fail(err)
	}
	if err := run(w, js, *rounds, *batch); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "pdatafloor:", err)
	os.Exit(1)
}

// assembled replays a generated capture of n jobs and returns its completed jobs.
func assembled(n int) ([]*assemble.Job, error) {
	dir, err := os.MkdirTemp("", "pdatafloor")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "gen-6.17.txt")
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := testcapture.Write(f, testcapture.Options{Style: "6.17", Jobs: n, Rings: 4, Procs: 8}); err != nil {
		f.Close()
		return nil, err
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	src, err := replay.New(replay.Config{Path: path, Epoch: 1_700_000_000_000_000_000})
	if err != nil {
		return nil, err
	}
	var js []*assemble.Job
	p := pipeline.New(pipeline.Config{Assemble: assemble.DefaultConfig(), Metrics: metadata.DefaultMetricsConfig()}, src,
		pipeline.Outputs{Job: func(j *assemble.Job) {
			if j.Outcome == assemble.Completed {
				js = append(js, j)
			}
		}}, nil)
	if err := p.Run(context.Background()); err != nil {
		return nil, err
	}
	if len(js) != n {
		return nil, fmt.Errorf("%d of %d generated jobs completed", len(js), n)
	}
	return js, nil
}

type condition struct {
	name   string
	render func(batch []*assemble.Job) (spans, bytes int)
}

func conditions() []condition {
	var m ptrace.ProtoMarshaler
	marshal := func(td ptrace.Traces) (int, int) {
		b, err := m.MarshalTraces(td)
		if err != nil {
			fail(err)
		}
		return td.SpanCount(), len(b)
	}
	clock := event.OffsetClock{}
	builder := emit.NewSpanBuilder(clock)
	encoder := emit.NewJobEncoder(clock, emit.FormatProto)
	var seq uint64
	return []condition{
		{"pdata-spans", func(b []*assemble.Job) (int, int) {
			td := plainSpans(b, &seq, true)
			return td.SpanCount(), 0
		}},
		{"pdata-spans+proto", func(b []*assemble.Job) (int, int) { return marshal(plainSpans(b, &seq, true)) }},
		{"pdata-1span+proto", func(b []*assemble.Job) (int, int) { return marshal(plainSpans(b, &seq, false)) }},
		{"builder", func(b []*assemble.Job) (int, int) {
			for _, j := range b {
				builder.Append(j)
			}
			return builder.Take().SpanCount(), 0
		}},
		{"builder+proto", func(b []*assemble.Job) (int, int) {
			for _, j := range b {
				builder.Append(j)
			}
			return marshal(builder.Take())
		}},
		{"encoder-proto", func(b []*assemble.Job) (int, int) {
			for _, j := range b {
				encoder.Append(j)
			}
			tb := encoder.Take()
			n, err := tb.WriteTo(io.Discard)
			if err != nil {
				fail(err)
			}
			spans := tb.SpanCount()
			tb.Release()
			return spans, int(n)
		}},
	}
}

// Attribute keys and values as ghostdriver writes them; the floor writes them with plain
// pdata calls.
var (
	jobKeys = [...]string{metadata.AttrDriver, metadata.AttrDevice, metadata.AttrRing, metadata.AttrFenceContext,
		metadata.AttrFenceSeqno, metadata.AttrHWFenceContext, metadata.AttrHWFenceSeqno, metadata.AttrClientID,
		metadata.AttrThreadID, metadata.AttrThreadName, metadata.AttrJobOutcome, metadata.AttrContextTier}
	stageKeys = [...]string{metadata.AttrStageSource, metadata.AttrStageRule}
)

// plainSpans is the floor: the batch's spans, each field set once, in one resource.
func plainSpans(b []*assemble.Job, seq *uint64, stages bool) ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "unknown_service")
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName(metadata.ScopeName)
	ss.Scope().SetVersion(metadata.ScopeVersion)
	spans := ss.Spans()
	per := 1
	if stages {
		per += assemble.NumStages
	}
	spans.EnsureCapacity(len(b) * per)
	for _, j := range b {
		*seq++
		var trace pcommon.TraceID
		var id pcommon.SpanID
		for i := range 8 {
			trace[i] = byte(*seq >> (8 * i))
			id[i] = byte(*seq >> (8 * i))
		}
		trace[15] = 1
		sp := spans.AppendEmpty()
		sp.SetTraceID(trace)
		sp.SetSpanID(id)
		sp.SetName(emit.JobSpanName)
		sp.SetKind(ptrace.SpanKindInternal)
		sp.SetStartTimestamp(pcommon.Timestamp(j.Start))
		sp.SetEndTimestamp(pcommon.Timestamp(j.End))
		a := sp.Attributes()
		a.EnsureCapacity(len(jobKeys))
		a.PutStr(jobKeys[0], j.Driver)
		a.PutStr(jobKeys[1], j.Device)
		a.PutStr(jobKeys[2], j.Ring)
		a.PutInt(jobKeys[3], int64(j.Finished.Context))
		a.PutInt(jobKeys[4], int64(j.Finished.Seqno))
		a.PutInt(jobKeys[5], int64(j.HWFence.Context))
		a.PutInt(jobKeys[6], int64(j.HWFence.Seqno))
		a.PutInt(jobKeys[7], int64(j.ClientID))
		a.PutInt(jobKeys[8], int64(j.TID))
		a.PutStr(jobKeys[9], j.Comm)
		a.PutStr(jobKeys[10], j.Outcome.String())
		a.PutStr(jobKeys[11], "none")
		if !stages {
			continue
		}
		for _, st := range j.Stages {
			c := spans.AppendEmpty()
			c.SetTraceID(trace)
			cid := id
			cid[7] ^= byte(st.Stage) + 1
			c.SetSpanID(cid)
			c.SetParentSpanID(id)
			c.SetName(st.Stage.String())
			c.SetKind(ptrace.SpanKindInternal)
			c.SetStartTimestamp(pcommon.Timestamp(st.Start))
			c.SetEndTimestamp(pcommon.Timestamp(st.End))
			ca := c.Attributes()
			ca.EnsureCapacity(len(stageKeys))
			ca.PutStr(stageKeys[0], st.Src.String())
			ca.PutStr(stageKeys[1], st.Rule)
		}
	}
	return td
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func run(w io.Writer, js []*assemble.Job, rounds, batch int) error {
	conds := conditions()
	for _, c := range conds { // warm: code, the builders' tables, the heap's size
		for i := 0; i < min(len(js), 16*batch); i += batch {
			c.render(js[i:min(i+batch, len(js))])
		}
	}
	type sample struct{ ns, allocs, spans, bytes float64 }
	res := map[string][]sample{}
	fmt.Fprintf(w, "round\tcondition\tjobs\tcpu_ns_per_job\tallocs_per_job\tspans_per_job\tbytes_per_job\n")
	for r := 0; r < rounds; r++ {
		for _, c := range conds {
			runtime.GC()
			var m0, m1 runtime.MemStats
			runtime.ReadMemStats(&m0)
			c0 := cpuTime()
			spans, bytes := 0, 0
			for i := 0; i < len(js); i += batch {
				s, n := c.render(js[i:min(i+batch, len(js))])
				spans += s
				bytes += n
			}
			cpu := cpuTime() - c0
			runtime.ReadMemStats(&m1)
			n := float64(len(js))
			s := sample{float64(cpu.Nanoseconds()) / n, float64(m1.Mallocs-m0.Mallocs) / n, float64(spans) / n, float64(bytes) / n}
			res[c.name] = append(res[c.name], s)
			fmt.Fprintf(w, "%d\t%s\t%d\t%.0f\t%.1f\t%.2f\t%.0f\n", r+1, c.name, len(js), s.ns, s.allocs, s.spans, s.bytes)
		}
	}
	med := func(v []sample, f func(sample) float64) float64 {
		x := make([]float64, len(v))
		for i, s := range v {
			x[i] = f(s)
		}
		slices.Sort(x)
		return x[len(x)/2]
	}
	fmt.Fprintf(w, "\n# medians over %d rounds, %d jobs (%d a batch); 2 %% of one core at 10 000 jobs/s leaves 2000 ns a job for everything\n", rounds, len(js), batch)
	fmt.Fprintf(w, "condition\tcpu_ns_per_job\tallocs_per_job\tspans_per_job\tbytes_per_job\tjobs_per_s_at_2pct_of_a_core\n")
	for _, c := range conds {
		ns := med(res[c.name], func(s sample) float64 { return s.ns })
		fmt.Fprintf(w, "%s\t%.0f\t%.1f\t%.2f\t%.0f\t%.0f\n", c.name, ns,
			med(res[c.name], func(s sample) float64 { return s.allocs }),
			med(res[c.name], func(s sample) float64 { return s.spans }),
			med(res[c.name], func(s sample) float64 { return s.bytes }), 0.02*1e9/ns)
	}
	return nil
}
