// AppendTracesJSON against pdata's own marshaller, byte for byte: on the builder's spans
// (every fixture job, with and without stage spans, with resources from a hook) and on a
// hand-made batch that sets every field and value kind of the public ptrace API, with
// strings that need escaping and doubles at every formatting boundary.
package emit

import (
	"bytes"
	"math"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/ghostdriver/ghostdriver/internal/assemble"
)

// otlpEncoding is one of pdata's trace encodings and our encoder of it, for the tests
// that hold the encoder to pdata's marshaller byte for byte.
type otlpEncoding struct {
	name      string
	marshal   func(ptrace.Traces) ([]byte, error)
	appendTo  func([]byte, ptrace.Traces) []byte
	unmarshal func([]byte) (ptrace.Traces, error)
	context   int    // bytes shown either side of the first difference
	show      string // how they are shown
}

var (
	jsonEncoding = otlpEncoding{"ptrace.JSONMarshaler", (&ptrace.JSONMarshaler{}).MarshalTraces, AppendTracesJSON,
		(&ptrace.JSONUnmarshaler{}).UnmarshalTraces, 80, "%s"}
	protoEncoding = otlpEncoding{"ptrace.ProtoMarshaler", (&ptrace.ProtoMarshaler{}).MarshalTraces, AppendTracesProto,
		(&ptrace.ProtoUnmarshaler{}).UnmarshalTraces, 32, "% x"}
)

// sameAsPdata requires enc's encoder to append exactly what pdata's marshaller writes for
// td, keeping the destination's bytes, and the result to read back with as many spans.
func sameAsPdata(t *testing.T, enc otlpEncoding, what string, td ptrace.Traces) {
	t.Helper()
	want, err := enc.marshal(td)
	if err != nil {
		t.Fatal(err)
	}
	got := enc.appendTo([]byte("prefix"), td)
	if !bytes.HasPrefix(got, []byte("prefix")) {
		t.Fatalf("%s: the destination's bytes were not kept", what)
	}
	got = got[len("prefix"):]
	if !bytes.Equal(got, want) {
		i := 0
		for i < len(got) && i < len(want) && got[i] == want[i] {
			i++
		}
		lo := max(0, i-enc.context)
		t.Fatalf("%s: differs from %s at byte %d of %d/%d:\n got …"+enc.show+"\nwant …"+enc.show, what, enc.name, i, len(got), len(want),
			got[lo:min(len(got), i+enc.context)], want[lo:min(len(want), i+enc.context)])
	}
	// And it reads back as the same traces.
	back, err := enc.unmarshal(got)
	if err != nil {
		t.Fatalf("%s: does not read back: %v", what, err)
	}
	if back.SpanCount() != td.SpanCount() {
		t.Fatalf("%s: %d spans read back, %d written", what, back.SpanCount(), td.SpanCount())
	}
}

func sameAsMarshaler(t *testing.T, what string, td ptrace.Traces) {
	t.Helper()
	sameAsPdata(t, jsonEncoding, what, td)
}

func TestTracesJSONSameAsMarshalerOnBuilderSpans(t *testing.T) {
	for _, stages := range []bool{true, false} {
		b := NewSpanBuilder(testClock, WithStageSpans(stages), WithHostName("node-1"),
			WithResourceFunc(func(j *assemble.Job, a pcommon.Map) {
				a.PutStr("k8s.pod.name", "pod \"a\"\n")
				a.PutDouble("weird.ratio", 1e-7)
			}))
		for _, j := range allJobs() {
			b.Append(j)
		}
		sameAsMarshaler(t, "builder spans", b.Take())
	}
	sameAsMarshaler(t, "empty batch", ptrace.NewTraces())
}

func TestTracesJSONSameAsMarshalerOnEveryField(t *testing.T) {
	sameAsMarshaler(t, "every field", everyFieldTraces())
}

// everyFieldTraces is a batch that sets every field and value kind of the public ptrace
// API (otlpproto_test.go uses it too).
func everyFieldTraces() ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.SetSchemaUrl("https://opentelemetry.io/schemas/1.26.0")
	rs.Resource().SetDroppedAttributesCount(3)
	ra := rs.Resource().Attributes()
	ra.PutStr("s", "quote\" backslash\\ nl\n cr\r tab\t bell\a nul\x00 del\x7f é ✓ \u2028 bad\xff\xfe end")
	ra.PutStr("", "empty key")
	ra.PutStr("empty", "")
	ra.PutBool("t", true)
	ra.PutBool("f", false)
	ra.PutInt("min", math.MinInt64)
	ra.PutInt("max", math.MaxInt64)
	ra.PutInt("zero", 0)
	for i, f := range []float64{0, math.Copysign(0, -1), 1, -1.5, 1e-6, 9.99e-7, 1e20, 1e21, -1e21, 123456789.125,
		math.SmallestNonzeroFloat64, math.MaxFloat64, math.NaN(), math.Inf(1), math.Inf(-1), 0.1} {
		ra.PutDouble("d"+string(rune('a'+i)), f)
	}
	ra.PutEmptyBytes("bytes").FromRaw([]byte{0, 1, 2, 0xff, 'x'})
	ra.PutEmptyBytes("nobytes")
	ra.PutEmpty("emptyvalue")
	sl := ra.PutEmptySlice("slice")
	sl.AppendEmpty().SetStr("x")
	sl.AppendEmpty().SetInt(7)
	sl.AppendEmpty()
	sl.AppendEmpty().SetEmptyMap().PutDouble("in", 2.5)
	ra.PutEmptySlice("noslice")
	mp := ra.PutEmptyMap("map")
	mp.PutEmptySlice("nested").AppendEmpty().SetBool(true)
	ra.PutEmptyMap("nomap")

	ss := rs.ScopeSpans().AppendEmpty()
	ss.SetSchemaUrl("scope-schema")
	ss.Scope().SetName("scope")
	ss.Scope().SetVersion("v1")
	ss.Scope().Attributes().PutStr("a", "b")
	ss.Scope().SetDroppedAttributesCount(1)
	sp := ss.Spans().AppendEmpty()
	sp.SetTraceID(pcommon.TraceID{0xde, 0xad, 0xbe, 0xef, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0xa, 0xff})
	sp.SetSpanID(pcommon.SpanID{1, 2, 3, 4, 5, 6, 7, 0x80})
	sp.TraceState().FromRaw("vendor=value")
	sp.SetParentSpanID(pcommon.SpanID{9, 9, 9, 9, 9, 9, 9, 9})
	sp.SetFlags(0x301)
	sp.SetName("name \"quoted\"")
	sp.SetKind(ptrace.SpanKindConsumer)
	sp.SetStartTimestamp(1)
	sp.SetEndTimestamp(math.MaxUint64)
	sp.Attributes().PutInt("n", -5)
	sp.SetDroppedAttributesCount(2)
	ev := sp.Events().AppendEmpty()
	ev.SetTimestamp(42)
	ev.SetName("event")
	ev.Attributes().PutStr("e", "v")
	ev.SetDroppedAttributesCount(4)
	sp.Events().AppendEmpty() // all empty
	sp.SetDroppedEventsCount(5)
	l := sp.Links().AppendEmpty()
	l.SetTraceID(pcommon.TraceID{1})
	l.SetSpanID(pcommon.SpanID{2})
	l.TraceState().FromRaw("k=v")
	l.Attributes().PutStr("l", "v")
	l.SetDroppedAttributesCount(6)
	l.SetFlags(1)
	sp.Links().AppendEmpty() // all empty
	sp.SetDroppedLinksCount(7)
	sp.Status().SetCode(ptrace.StatusCodeError)
	sp.Status().SetMessage("failed: \"why\"")

	ss.Spans().AppendEmpty() // a span with nothing set
	st := ss.Spans().AppendEmpty()
	st.Status().SetCode(ptrace.StatusCodeOk) // code without message
	st.SetKind(ptrace.SpanKindInternal)
	rs.ScopeSpans().AppendEmpty() // empty scope spans
	td.ResourceSpans().AppendEmpty()
	return td
}
