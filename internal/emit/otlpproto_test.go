// AppendTracesProto against pdata's own marshaller, byte for byte: on the builder's spans
// (every fixture job, with and without stage spans, resources from a hook), on the batch
// that sets every field and value kind of the public ptrace API, and on values whose
// lengths cross the varint boundaries (127/128, 16383/16384 and more bytes), where a
// reserved length must grow or shrink. The file outputs' test (cmd/ghostdriver) checks
// the same on a real capture's jobs.
package emit

import (
	"strconv"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/ghostdriver/ghostdriver/internal/assemble"
)

func sameAsProtoMarshaler(t *testing.T, what string, td ptrace.Traces) {
	t.Helper()
	sameAsPdata(t, protoEncoding, what, td)
}

func TestTracesProtoSameAsMarshalerOnBuilderSpans(t *testing.T) {
	for _, stages := range []bool{true, false} {
		b := NewSpanBuilder(testClock, WithStageSpans(stages), WithHostName("node-1"),
			WithResourceFunc(func(j *assemble.Job, a pcommon.Map) {
				a.PutStr("k8s.pod.name", "pod-a")
				a.PutDouble("weird.ratio", 1e-7)
			}))
		for _, j := range allJobs() {
			b.Append(j)
		}
		sameAsProtoMarshaler(t, "builder spans", b.Take())
	}
	sameAsProtoMarshaler(t, "empty batch", ptrace.NewTraces())
}

func TestTracesProtoSameAsMarshalerOnEveryField(t *testing.T) {
	sameAsProtoMarshaler(t, "every field", everyFieldTraces())
}

func TestTracesProtoSameAsMarshalerAtLengthBoundaries(t *testing.T) {
	for _, n := range []int{0, 1, 100, 117, 118, 126, 127, 128, 129, 200, 16250, 16383, 16384, 16400, 70000, 2100000} {
		td := ptrace.NewTraces()
		rs := td.ResourceSpans().AppendEmpty()
		rs.Resource().Attributes().PutStr("r", strings.Repeat("r", n))
		ss := rs.ScopeSpans().AppendEmpty()
		sp := ss.Spans().AppendEmpty()
		sp.SetName(strings.Repeat("n", n))
		sp.Attributes().PutStr("a", strings.Repeat("a", n))
		sp.Attributes().PutEmptySlice("s").AppendEmpty().SetStr(strings.Repeat("s", n))
		sp.Status().SetMessage(strings.Repeat("m", n))
		sp.Links().AppendEmpty().TraceState().FromRaw("k=" + strings.Repeat("v", n))
		ss.Spans().AppendEmpty().SetName("small")
		sameAsProtoMarshaler(t, "lengths "+strconv.Itoa(n), td)
	}
}
