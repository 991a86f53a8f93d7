// Span files in both of the file exporter's formats read back to the same jobs; captures
// and broken files are told apart with errors that say where.
package timeline

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

func twoBatches() []ptrace.Traces {
	var out []ptrace.Traces
	for b := 0; b < 2; b++ {
		td := ptrace.NewTraces()
		rs := td.ResourceSpans().AppendEmpty()
		rs.Resource().Attributes().PutStr("service.name", "vkcube")
		rs.Resource().Attributes().PutInt("process.pid", 42)
		spans := rs.ScopeSpans().AppendEmpty().Spans()
		job := spans.AppendEmpty()
		job.SetName("gpu.job")
		job.SetTraceID(pcommon.TraceID{1, byte(b)})
		job.SetSpanID(pcommon.SpanID{2, byte(b)})
		job.SetStartTimestamp(pcommon.Timestamp(1000 + b*100))
		job.SetEndTimestamp(pcommon.Timestamp(1050 + b*100))
		job.Attributes().PutStr("ghostdriver.ring", "gfx")
		job.Attributes().PutInt("thread.id", 43)
		st := spans.AppendEmpty()
		st.SetName("execution")
		st.SetTraceID(pcommon.TraceID{1, byte(b)})
		st.SetSpanID(pcommon.SpanID{3, byte(b)})
		st.SetParentSpanID(pcommon.SpanID{2, byte(b)})
		st.SetStartTimestamp(pcommon.Timestamp(1010 + b*100))
		st.SetEndTimestamp(pcommon.Timestamp(1050 + b*100))
		st.Attributes().PutStr("ghostdriver.stage.source", "inferred")
		out = append(out, td)
	}
	return out
}

func TestJSONAndProtoFilesReadAlike(t *testing.T) {
	dir := t.TempDir()
	var js, pb bytes.Buffer
	for _, td := range twoBatches() {
		b, _ := (&ptrace.JSONMarshaler{}).MarshalTraces(td)
		js.Write(append(b, '\n'))
		p, _ := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
		pb.Write(binary.BigEndian.AppendUint32(nil, uint32(len(p))))
		pb.Write(p)
	}
	jp, pp := filepath.Join(dir, "s.json"), filepath.Join(dir, "s.pb")
	os.WriteFile(jp, js.Bytes(), 0o644)
	os.WriteFile(pp, pb.Bytes(), 0o644)
	for path, want := range map[string]FileFormat{jp: OTLPJSON, pp: OTLPProto,
		filepath.Join("..", "..", "testdata", "captures", "gpuvis_amdgpu_4.11_full.trace-cmd-report.txt.gz"):  NotOTLP,
		filepath.Join("..", "..", "testdata", "captures", "gpuvis_amdgpu_4.11_gpu_only.trace-cmd-report.txt"): NotOTLP} {
		if got, err := Sniff(path); err != nil || got != want {
			t.Errorf("Sniff(%s) = %v, %v; want %v", path, got, err, want)
		}
	}
	a, err := ReadFile(jp)
	if err != nil {
		t.Fatal(err)
	}
	b, err := ReadFile(pp)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Errorf("JSON and proto differ:\n%+v\n%+v", a, b)
	}
	if len(a.Jobs) != 2 || len(a.Jobs[1].Stages) != 1 || a.Jobs[1].Stages[0].Start != 1110 || a.Jobs[0].PID != 42 ||
		a.Jobs[0].TID != 43 || a.Jobs[0].Service != "vkcube" || a.Jobs[0].Ring.Ring != "gfx" {
		t.Errorf("read %+v", a.Jobs)
	}

	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, append(js.Bytes(), []byte("{\"resourceSpans\": 3}\n")...), 0o644)
	if _, err := ReadFile(bad); err == nil || !strings.Contains(err.Error(), "line 3") {
		t.Errorf("a broken third line: %v", err)
	}
	cut := filepath.Join(dir, "cut.pb")
	os.WriteFile(cut, pb.Bytes()[:pb.Len()-5], 0o644)
	if _, err := ReadFile(cut); err == nil || !strings.Contains(err.Error(), "request 2") {
		t.Errorf("a truncated second request: %v", err)
	}
}
