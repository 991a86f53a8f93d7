// The replay command's output files: the protobuf framing read back the way the collector
// file exporter's readers do (4-byte big-endian length, then an ExportTraceServiceRequest),
// the same spans in both formats, every job present, and a bad format refused.
package main

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/ghostdriver/ghostdriver/internal/testcapture"
	"github.com/ghostdriver/ghostdriver/internal/testreq"
)

// readProtoFile reads length-prefixed protobuf requests to the end of the file.
func readProtoFile(t *testing.T, path string) []ptrace.Traces {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := bufio.NewReader(f)
	var out []ptrace.Traces
	var u ptrace.ProtoUnmarshaler
	for {
		var n [4]byte
		if _, err := io.ReadFull(r, n[:]); errors.Is(err, io.EOF) {
			return out
		} else if err != nil {
			t.Fatalf("message %d: length prefix: %v", len(out), err)
		}
		msg := make([]byte, binary.BigEndian.Uint32(n[:]))
		if _, err := io.ReadFull(r, msg); err != nil {
			t.Fatalf("message %d: %d bytes announced: %v", len(out), len(msg), err)
		}
		td, err := u.UnmarshalTraces(msg)
		if err != nil {
			t.Fatalf("message %d: %v", len(out), err)
		}
		out = append(out, td)
	}
}

func readJSONFile(t *testing.T, path string) []ptrace.Traces {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []ptrace.Traces
	var u ptrace.JSONUnmarshaler
	for i, line := range bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) {
		td, err := u.UnmarshalTraces(line)
		if err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		out = append(out, td)
	}
	return out
}

// spanLines renders every span as one sorted line: ids, name, times, attributes, status.
func spanLines(tds []ptrace.Traces) []string {
	var lines []string
	for _, td := range tds {
		for i := 0; i < td.ResourceSpans().Len(); i++ {
			rs := td.ResourceSpans().At(i)
			res := fmt.Sprint(rs.Resource().Attributes().AsRaw())
			for j := 0; j < rs.ScopeSpans().Len(); j++ {
				spans := rs.ScopeSpans().At(j).Spans()
				for k := 0; k < spans.Len(); k++ {
					s := spans.At(k)
					lines = append(lines, fmt.Sprint(s.TraceID(), s.SpanID(), s.ParentSpanID(), s.Name(), s.StartTimestamp(),
						s.EndTimestamp(), s.Attributes().AsRaw(), s.Links().Len(), s.Status().Code(), s.Status().Message(), res))
				}
			}
		}
	}
	sort.Strings(lines)
	return lines
}

func TestReplayProtoAndJSONFiles(t *testing.T) {
	const jobs = 3000
	dir := t.TempDir()
	in := filepath.Join(dir, "capture.txt")
	f, err := os.Create(in)
	if err != nil {
		t.Fatal(err)
	}
	if err := testcapture.Write(f, testcapture.Options{Style: "6.17", Jobs: jobs, Rings: 4, Procs: 8}); err != nil {
		t.Fatal(err)
	}
	f.Close()
	got := map[string][]ptrace.Traces{}
	for _, format := range []string{formatJSON, formatProto} {
		out := filepath.Join(dir, "spans."+format)
		var stdout, stderr bytes.Buffer
		if rc := cmdReplay([]string{in, "--quiet", "--epoch", "1700000000000000000", "--output", out, "--output-format", format},
			&stdout, &stderr); rc != 0 {
			t.Fatalf("%s: exit %d: %s", format, rc, stderr.String())
		}
		if format == formatProto {
			got[format] = readProtoFile(t, out)
		} else {
			got[format] = readJSONFile(t, out)
		}
		n := 0
		for _, td := range got[format] {
			for i := 0; i < td.ResourceSpans().Len(); i++ {
				ss := td.ResourceSpans().At(i).ScopeSpans()
				for j := 0; j < ss.Len(); j++ {
					for k := 0; k < ss.At(j).Spans().Len(); k++ {
						if ss.At(j).Spans().At(k).Name() == "gpu.job" {
							n++
						}
					}
				}
			}
		}
		if n != jobs {
			t.Errorf("%s: %d gpu.job spans, want %d", format, n, jobs)
		}
	}
	j, p := spanLines(got[formatJSON]), spanLines(got[formatProto])
	if len(j) != len(p) || len(j) < jobs {
		t.Fatalf("%d spans in JSON, %d in protobuf (%d jobs)", len(j), len(p), jobs)
	}
	for i := range j {
		if j[i] != p[i] {
			t.Fatalf("span %d differs between the formats:\njson  %s\nproto %s", i, j[i], p[i])
		}
	}
}

func TestReplayRefusesUnknownOutputFormat(t *testing.T) {
	var stdout, stderr bytes.Buffer
	rc := cmdReplay([]string{"x.txt", "--output", filepath.Join(t.TempDir(), "o"), "--output-format", "yaml"}, &stdout, &stderr)
	if rc != 2 || !strings.Contains(stderr.String(), `--output-format "yaml"`) {
		t.Fatalf("exit %d, stderr %q: want a usage error naming the format", rc, stderr.String())
	}
}

func TestReplayStopsOnWriteError(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		testreq.Skip(t, testreq.DevFull, "no /dev/full to fail the writes")
	}
	in := filepath.Join(t.TempDir(), "capture.txt")
	f, err := os.Create(in)
	if err != nil {
		t.Fatal(err)
	}
	if err := testcapture.Write(f, testcapture.Options{Style: "6.17", Jobs: 20_000, Rings: 4, Procs: 8}); err != nil {
		t.Fatal(err)
	}
	f.Close()
	var stdout, stderr bytes.Buffer
	start := time.Now()
	rc := cmdReplay([]string{in, "--quiet", "--output", "/dev/full"}, &stdout, &stderr)
	// One failed write ends the run: not retried, not repeated batch after batch.
	if rc != 1 || !strings.Contains(stderr.String(), "--output /dev/full: write /dev/full: no space left on device (the run stopped there)") {
		t.Fatalf("exit %d, stderr:\n%s", rc, stderr.String())
	}
	if n := strings.Count(stderr.String(), "WARN"); n > 2 {
		t.Errorf("%d warnings for one dead file:\n%s", n, stderr.String())
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("took %v to give up on a dead file", d)
	}
}

// TestReplayFilesAreWhatPdataWrites replays the bundled real captures (amdgpu on 4.11, the
// only real ftrace text bundled) and a generated 6.17-style capture to both formats, and
// checks every request in the files against pdata, independently of the CLI's encoders:
// each request is decoded by pdata's unmarshaller and encoded again by pdata's marshaller,
// and the bytes must be those of the file (the same spans, and the marshaller's layout).
func TestReplayFilesAreWhatPdataWrites(t *testing.T) {
	gen := filepath.Join(t.TempDir(), "capture-6.17.txt")
	f, err := os.Create(gen)
	if err != nil {
		t.Fatal(err)
	}
	if err := testcapture.Write(f, testcapture.Options{Style: "6.17", Jobs: 2000, Rings: 4, Procs: 8}); err != nil {
		t.Fatal(err)
	}
	f.Close()
	for _, in := range []string{
		filepath.Join("..", "..", "testdata", "captures", "gpuvis_amdgpu_4.11_full.trace-cmd-report.txt.gz"),
		filepath.Join("..", "..", "testdata", "captures", "gpuvis_amdgpu_4.11_gpu_only.trace-cmd-report.txt"),
		gen,
	} {
		name := filepath.Base(in)
		for _, format := range []string{formatJSON, formatProto} {
			out := filepath.Join(t.TempDir(), "spans."+format)
			var stdout, stderr bytes.Buffer
			// a short flush interval: several requests a file
			if rc := cmdReplay([]string{in, "--quiet", "--flush-interval", "1ms", "--output", out, "--output-format", format}, &stdout, &stderr); rc != 0 {
				t.Fatalf("%s %s: exit %d: %s", name, format, rc, stderr.String())
			}
			msgs := fileRequests(t, out, format)
			spans := 0
			for i, msg := range msgs {
				var again []byte
				var td ptrace.Traces
				var err error
				if format == formatProto {
					var u ptrace.ProtoUnmarshaler
					if td, err = u.UnmarshalTraces(msg); err == nil {
						var m ptrace.ProtoMarshaler
						again, err = m.MarshalTraces(td)
					}
				} else {
					var u ptrace.JSONUnmarshaler
					if td, err = u.UnmarshalTraces(msg); err == nil {
						var m ptrace.JSONMarshaler
						again, err = m.MarshalTraces(td)
					}
				}
				if err != nil {
					t.Fatalf("%s %s: request %d: %v", name, format, i, err)
				}
				if !bytes.Equal(again, msg) {
					t.Fatalf("%s %s: request %d (%d bytes) is not what pdata writes for its spans (%d bytes)", name, format, i, len(msg), len(again))
				}
				spans += td.SpanCount()
			}
			if spans == 0 {
				t.Fatalf("%s %s: no spans in %d requests", name, format, len(msgs))
			}
			t.Logf("%s %s: %d requests, %d spans", name, format, len(msgs), spans)
		}
	}
}

// fileRequests splits an output file into its requests' bytes (JSON lines, or the proto
// framing's length-prefixed messages).
func fileRequests(t *testing.T, path, format string) [][]byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	if format == formatJSON {
		return bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
	}
	for len(data) > 0 {
		if len(data) < 4 {
			t.Fatalf("%d bytes left after %d requests: a cut length prefix", len(data), len(out))
		}
		n := binary.BigEndian.Uint32(data)
		if uint64(len(data)-4) < uint64(n) {
			t.Fatalf("request %d announces %d bytes, %d left", len(out), n, len(data)-4)
		}
		out = append(out, data[4:4+n])
		data = data[4+n:]
	}
	return out
}

// TestReplayFilesFromJobsAreTheBuilders: the span files encoded from the jobs
// (emit.JobEncoder, the default) are byte for byte the files of the earlier path, the
// builder's pdata spans encoded (spanFilesFromPdata, which TestReplayFilesAreWhatPdataWrites
// holds to pdata's marshallers), for the bundled real captures (amdgpu 4.11
// trace-cmd report text, the only real ftrace text bundled) and generated captures of
// both styles, in both
// formats, with stage spans on and off; and pdata's decoding of both files gives the same
// spans. The batches are cut by job count only (a flush interval of an hour), so that
// both runs cut them at the same jobs.
func TestReplayFilesFromJobsAreTheBuilders(t *testing.T) {
	dir := t.TempDir()
	var ins []string
	for _, style := range []string{"6.17", "4.11"} {
		gen := filepath.Join(dir, "capture-"+style+".txt")
		f, err := os.Create(gen)
		if err != nil {
			t.Fatal(err)
		}
		if err := testcapture.Write(f, testcapture.Options{Style: style, Jobs: 2500, Rings: 4, Procs: 8}); err != nil {
			t.Fatal(err)
		}
		f.Close()
		ins = append(ins, gen)
	}
	ins = append(ins,
		filepath.Join("..", "..", "testdata", "captures", "gpuvis_amdgpu_4.11_full.trace-cmd-report.txt.gz"),
		filepath.Join("..", "..", "testdata", "captures", "gpuvis_amdgpu_4.11_gpu_only.trace-cmd-report.txt"),
	)
	defer func() { spanFilesFromPdata = false }()
	for _, in := range ins {
		name := filepath.Base(in)
		for _, format := range []string{formatJSON, formatProto} {
			for _, stages := range []bool{true, false} {
				files := map[bool]string{}
				for _, fromPdata := range []bool{true, false} {
					spanFilesFromPdata = fromPdata
					out := filepath.Join(dir, fmt.Sprintf("%s.%v.%v.%s", name, stages, fromPdata, format))
					args := []string{in, "--quiet", "--epoch", "1700000000000000000", "--flush-interval", "1h",
						"--output", out, "--output-format", format}
					if !stages {
						args = append(args, "--no-stage-spans")
					}
					var stdout, stderr bytes.Buffer
					if rc := cmdReplay(args, &stdout, &stderr); rc != 0 {
						t.Fatalf("%s %s (from pdata: %v): exit %d: %s", name, format, fromPdata, rc, stderr.String())
					}
					files[fromPdata] = out
				}
				what := fmt.Sprintf("%s %s, stage spans %v", name, format, stages)
				old, err := os.ReadFile(files[true])
				if err != nil {
					t.Fatal(err)
				}
				got, err := os.ReadFile(files[false])
				if err != nil {
					t.Fatal(err)
				}
				var decode func(*testing.T, string) []ptrace.Traces = readJSONFile
				if format == formatProto {
					decode = readProtoFile
				}
				oldSpans, gotSpans := spanLines(decode(t, files[true])), spanLines(decode(t, files[false]))
				if len(oldSpans) == 0 {
					t.Fatalf("%s: no spans", what)
				}
				if len(gotSpans) != len(oldSpans) {
					t.Fatalf("%s: %d spans decoded from the jobs' file, %d from the builder's", what, len(gotSpans), len(oldSpans))
				}
				for i := range oldSpans {
					if gotSpans[i] != oldSpans[i] {
						t.Fatalf("%s: span %d decodes differently:\nfrom the jobs   %s\nfrom pdata      %s", what, i, gotSpans[i], oldSpans[i])
					}
				}
				if !bytes.Equal(got, old) {
					i := 0
					for i < len(got) && i < len(old) && got[i] == old[i] {
						i++
					}
					t.Fatalf("%s: the file from the jobs (%d bytes) differs from the builder's (%d bytes) at byte %d", what, len(got), len(old), i)
				}
				t.Logf("%s: %d bytes, %d spans, the same", what, len(got), len(gotSpans))
			}
		}
	}
}
