// Golden tests: `ghostdriver replay` on the bundled real captures must reproduce the
// committed summary table and span sample byte for byte. Regenerate deliberately with
// `go test ./cmd/ghostdriver -run Golden -update` and review the diff; the job, outcome
// and per-stage counts are checked against the raw capture either way (golden_check_test.go).
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

var update = flag.Bool("update", false, "rewrite the golden files")

const goldenEpoch = "1500458400000000000" // 2017-07-19T10:00:00Z

var goldenCases = []struct {
	name, capture string
}{
	{"amdgpu_4.11_full", "gpuvis_amdgpu_4.11_full.trace-cmd-report.txt.gz"},
	{"amdgpu_4.11_gpu_only", "gpuvis_amdgpu_4.11_gpu_only.trace-cmd-report.txt"},
}

func TestReplayGolden(t *testing.T) {
	for _, tc := range goldenCases {
		t.Run(tc.name, func(t *testing.T) {
			capture := filepath.Join("..", "..", "testdata", "captures", tc.capture)
			out := filepath.Join(t.TempDir(), "spans.json")
			var stdout, stderr bytes.Buffer
			code := run([]string{"replay", "--epoch", goldenEpoch, "--output", out, capture}, &stdout, &stderr)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr.String())
			}
			checkAgainstCapture(t, capture, stdout.Bytes(), out) // also under -update
			compareGolden(t, filepath.Join("testdata", tc.name+".summary.txt"), stdout.Bytes())
			compareGolden(t, filepath.Join("testdata", tc.name+".spans-sample.json"), spanSample(t, out))
		})
	}
}

// spanSample keeps every 50th gpu.job span with its children, as indented JSON, so the
// golden file is reviewable while covering the whole capture.
func spanSample(t *testing.T, path string) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var um ptrace.JSONUnmarshaler
	type span struct {
		Name   string         `json:"name"`
		Start  uint64         `json:"start_unix_nano"`
		End    uint64         `json:"end_unix_nano"`
		Status string         `json:"status,omitempty"`
		Attrs  map[string]any `json:"attributes"`
		Kids   []span         `json:"children,omitempty"`
	}
	var jobs []span
	kids := map[string][]span{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	lines := 0
	for sc.Scan() {
		lines++
		td, err := um.UnmarshalTraces(sc.Bytes())
		if err != nil {
			t.Fatalf("output line %d is not OTLP/JSON: %v", lines, err)
		}
		rs := td.ResourceSpans()
		for i := 0; i < rs.Len(); i++ {
			ss := rs.At(i).ScopeSpans()
			for j := 0; j < ss.Len(); j++ {
				sp := ss.At(j).Spans()
				for k := 0; k < sp.Len(); k++ {
					s := sp.At(k)
					v := span{Name: s.Name(), Start: uint64(s.StartTimestamp()), End: uint64(s.EndTimestamp()), Attrs: s.Attributes().AsRaw()}
					if s.Status().Code() == ptrace.StatusCodeError {
						v.Status = "error: " + s.Status().Message()
					}
					if s.Name() == "gpu.job" {
						jobs = append(jobs, v)
						jobs[len(jobs)-1].Attrs["span_id"] = s.SpanID().String()
					} else {
						kids[s.ParentSpanID().String()] = append(kids[s.ParentSpanID().String()], v)
					}
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if lines == 0 || len(jobs) == 0 {
		t.Fatal("replay wrote no spans")
	}
	var sample []span
	for i := range jobs {
		if i%50 != 0 {
			continue
		}
		j := jobs[i]
		id := j.Attrs["span_id"].(string)
		delete(j.Attrs, "span_id")
		j.Kids = kids[id]
		sample = append(sample, j)
	}
	b, err := json.MarshalIndent(map[string]any{"gpu_job_spans": len(jobs), "sample_every": 50, "sample": sample}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

func compareGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("golden file missing (create with -update): %v", err)
	}
	if !bytes.Equal(got, want) {
		gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
		for i := 0; i < len(gl) || i < len(wl); i++ {
			var g, w string
			if i < len(gl) {
				g = gl[i]
			}
			if i < len(wl) {
				w = wl[i]
			}
			if g != w {
				t.Fatalf("%s differs at line %d:\n got: %s\nwant: %s", path, i+1, g, w)
			}
		}
	}
}

func TestReplayUsageErrors(t *testing.T) {
	cases := map[string][]string{
		"no capture":  {"replay"},
		"bad epoch":   {"replay", "--epoch", "soon", "x"},
		"two files":   {"replay", "a", "b"},
		"bad command": {"frobnicate"},
	}
	for name, args := range cases {
		var o, e bytes.Buffer
		if code := run(args, &o, &e); code != 2 {
			t.Errorf("%s: exit %d, want 2 (stderr %q)", name, code, e.String())
		}
		if e.Len() == 0 {
			t.Errorf("%s: no message on stderr", name)
		}
	}
	var o, e bytes.Buffer
	if code := run([]string{"replay", filepath.Join(t.TempDir(), "missing")}, &o, &e); code != 1 || !strings.Contains(e.String(), "missing") {
		t.Errorf("missing capture: exit %d, stderr %q", code, e.String())
	}
}
