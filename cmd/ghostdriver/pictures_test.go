// The picture commands end to end: replay --trace-json, export from the spans file and
// export straight from the capture write the same bytes; report shows the job count of
// the spans file (counted here with encoding/json); bad inputs fail with the reason.
package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

const picturesCapture = "../../testdata/captures/gpuvis_amdgpu_4.11_full.trace-cmd-report.txt.gz"

// jobSpansIn counts gpu.job spans of an OTLP/JSON lines file.
func jobSpansIn(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		var req struct {
			ResourceSpans []struct {
				ScopeSpans []struct {
					Spans []struct{ Name string } `json:"spans"`
				} `json:"scopeSpans"`
			} `json:"resourceSpans"`
		}
		if err := json.Unmarshal(line, &req); err != nil {
			t.Fatal(err)
		}
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					if s.Name == "gpu.job" {
						n++
					}
				}
			}
		}
	}
	return n
}

func TestPictureCommands(t *testing.T) {
	dir := t.TempDir()
	spans, fromReplay := filepath.Join(dir, "spans.json"), filepath.Join(dir, "replay.trace.json")
	if code, _, errs := runCLI("replay", "--epoch", "0", "--quiet", "--output", spans, "--trace-json", fromReplay, picturesCapture); code != 0 {
		t.Fatalf("replay: exit %d: %s", code, errs)
	}
	fromSpans, fromCapture := filepath.Join(dir, "spans.trace.json"), filepath.Join(dir, "capture.trace.json")
	if code, out, errs := runCLI("export", "--format", "trace-json", spans, "--output", fromSpans); code != 0 || !strings.Contains(out, "jobs") {
		t.Fatalf("export spans: exit %d: %s%s", code, out, errs)
	}
	if code, _, errs := runCLI("export", picturesCapture, "--output", fromCapture); code != 0 {
		t.Fatalf("export capture: exit %d: %s", code, errs)
	}
	a, _ := os.ReadFile(fromReplay)
	b, _ := os.ReadFile(fromSpans)
	c, _ := os.ReadFile(fromCapture)
	if len(a) == 0 || !bytes.Equal(a, b) || !bytes.Equal(a, c) {
		t.Fatalf("replay --trace-json (%d bytes), export of its spans (%d) and export of the capture (%d) differ", len(a), len(b), len(c))
	}
	want := jobSpansIn(t, spans)
	var tf struct {
		TraceEvents []struct {
			Cat string `json:"cat"`
		} `json:"traceEvents"`
	}
	if err := json.Unmarshal(a, &tf); err != nil {
		t.Fatal(err)
	}
	jobs := 0
	for _, e := range tf.TraceEvents {
		if e.Cat == "job" {
			jobs++
		}
	}
	if want < 700 || jobs != want {
		t.Errorf("trace JSON has %d job slices, the spans file %d gpu.job spans", jobs, want)
	}

	page := filepath.Join(dir, "r.html")
	code, out, errs := runCLI("report", "--output", page, spans)
	if code != 0 {
		t.Fatalf("report: exit %d: %s", code, errs)
	}
	html, _ := os.ReadFile(page)
	m := regexp.MustCompile(`id="job-count">(\d+)<`).FindSubmatch(html)
	if m == nil || string(m[1]) != strings.TrimSpace(strings.Fields(strings.SplitN(out, ": ", 2)[1])[0]) || string(m[1]) != itoa(want) {
		t.Errorf("report: page count %q, printed %q, spans %d", m, out, want)
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

func TestPictureCommandErrors(t *testing.T) {
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk.txt")
	os.WriteFile(junk, []byte("hello\n"), 0o644)
	broken := filepath.Join(dir, "broken.json")
	os.WriteFile(broken, []byte("{\"resourceSpans\":[]}\n{not json\n"), 0o644)
	empty := filepath.Join(dir, "empty.json")
	os.WriteFile(empty, []byte("{\"resourceSpans\":[]}\n"), 0o644)
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"export", "--format", "svg", junk}, 2, `--format "svg"`},
		{[]string{"export"}, 2, "exactly one"},
		{[]string{"report", filepath.Join(dir, "missing.json")}, 1, "missing.json"},
		{[]string{"report", "--output", filepath.Join(dir, "x.html"), junk}, 1, "no GPU event recognised"},
		{[]string{"export", broken}, 1, "line 2"},
		{[]string{"report", "--output", filepath.Join(dir, "y.html"), empty}, 1, "no gpu.job spans"},
		{[]string{"replay", "--trace-json", filepath.Join(dir, "no", "such", "dir.json"), picturesCapture}, 1, "--trace-json"},
	} {
		code, _, errs := runCLI(c.args...)
		if code != c.code || !strings.Contains(errs, c.msg) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", c.args, code, errs, c.code, c.msg)
		}
	}
}
