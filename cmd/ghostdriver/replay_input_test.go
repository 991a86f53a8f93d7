// `ghostdriver replay` on captures as users hand them: per-CPU files concatenated give the
// sorted capture's jobs, spans and stage bounds with no repeated span id; input without a
// GPU event exits 1 and says what to record and how.
package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

// spanRecord is one span of an OTLP/JSON output file: what identifies and bounds it.
type spanRecord struct {
	trace, id, parent, name string
	start, end              uint64
	status                  string
	attrs                   string
}

func readSpans(t *testing.T, path string) []spanRecord {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var um ptrace.JSONUnmarshaler
	var out []spanRecord
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<28)
	for sc.Scan() {
		td, err := um.UnmarshalTraces(sc.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < td.ResourceSpans().Len(); i++ {
			ss := td.ResourceSpans().At(i).ScopeSpans()
			for k := 0; k < ss.Len(); k++ {
				spans := ss.At(k).Spans()
				for n := 0; n < spans.Len(); n++ {
					s := spans.At(n)
					out = append(out, spanRecord{s.TraceID().String(), s.SpanID().String(), s.ParentSpanID().String(), s.Name(),
						uint64(s.StartTimestamp()), uint64(s.EndTimestamp()), s.Status().Message(), attrString(s.Attributes().AsRaw())})
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

// attrString renders attributes in key order.
func attrString(m map[string]any) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%v;", k, m[k])
	}
	return b.String()
}

var cpuColumn = regexp.MustCompile(`^.*?-\d+ +\[(\d{3})\] `)

// concatenatePerCPU splits a sorted capture by its CPU column (the lines without one, its
// header, start CPU 0's file) and concatenates the files in CPU order.
func concatenatePerCPU(t *testing.T, sorted []byte) []byte {
	t.Helper()
	files := map[string]*bytes.Buffer{}
	for _, line := range bytes.SplitAfter(sorted, []byte("\n")) {
		cpu := "000"
		if m := cpuColumn.FindSubmatch(line); m != nil {
			cpu = string(m[1])
		}
		if files[cpu] == nil {
			files[cpu] = &bytes.Buffer{}
		}
		files[cpu].Write(line)
	}
	cpus := make([]string, 0, len(files))
	for c := range files {
		cpus = append(cpus, c)
	}
	sort.Strings(cpus)
	var out bytes.Buffer
	for _, c := range cpus {
		out.Write(files[c].Bytes())
	}
	return out.Bytes()
}

func replayToSpans(t *testing.T, capture string) []spanRecord {
	t.Helper()
	out := filepath.Join(t.TempDir(), "spans.json")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"replay", "--epoch", goldenEpoch, "--quiet", "--output", out, capture}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	return readSpans(t, out)
}

func TestReplayConcatenatedPerCPUFiles(t *testing.T) {
	f, err := os.Open(filepath.Join("..", "..", "testdata", "captures", "gpuvis_amdgpu_4.11_full.trace-cmd-report.txt.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	sorted, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	sortedPath, catPath := filepath.Join(dir, "sorted.txt"), filepath.Join(dir, "cat.txt")
	os.WriteFile(sortedPath, sorted, 0o644)
	os.WriteFile(catPath, concatenatePerCPU(t, sorted), 0o644)
	want, got := replayToSpans(t, sortedPath), replayToSpans(t, catPath)
	jobs, ids := 0, map[string]bool{}
	for _, s := range got {
		if ids[s.id] {
			t.Fatalf("span id %s twice", s.id)
		}
		ids[s.id] = true
		if s.name == "gpu.job" {
			jobs++
		}
	}
	if jobs != 783 {
		t.Errorf("%d gpu.job spans, the capture has 783 jobs", jobs)
	}
	if len(got) != len(want) {
		t.Fatalf("%d spans, the sorted capture gives %d", len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("span differs:\n got %+v\nwant %+v", got[i], want[i])
		}
	}
}

func TestReplayNoGPUEvents(t *testing.T) {
	dir := t.TempDir()
	inputs := map[string][]byte{
		"readme.md":          []byte("# A project\n\nSome text: with colons, 1.5: and numbers.\n"),
		"trace.dat":          append([]byte("\x17\x08\x44tracing6\x00"), bytes.Repeat([]byte{0, 1, 2, 0xff}, 300)...),
		"sched_only.txt":     []byte("          <idle>-0     [003] 630659.116054: sched_switch:         swapper/3:0 [120] R ==> x:1 [120]\n"),
		"perfetto.textproto": nil,
	}
	// A Perfetto textproto whose only ftrace event is not a GPU one (the bundled ones replay).
	inputs["perfetto.textproto"] = []byte("packet {\n  ftrace_events {\n    cpu: 3\n    event {\n      timestamp: 630659116054000\n" +
		"      pid: 0\n      sched_switch {\n        prev_pid: 0\n        next_pid: 1\n      }\n    }\n  }\n}\n")
	for name, data := range inputs {
		path := filepath.Join(dir, name)
		os.WriteFile(path, data, 0o644)
		var stdout, stderr bytes.Buffer
		code := run([]string{"replay", "--quiet", path}, &stdout, &stderr)
		msg := stderr.String()
		if code != 1 || !strings.Contains(msg, "no GPU event recognised") || !strings.Contains(msg, "trace-cmd record -e gpu_scheduler") ||
			!strings.Contains(msg, "trace-cmd report") {
			t.Errorf("%s: exit %d, stderr %q", name, code, msg)
		}
		switch name {
		case "trace.dat":
			if !strings.Contains(msg, "binary trace-cmd file") {
				t.Errorf("%s: %q does not say it is a trace.dat", name, msg)
			}
		case "perfetto.textproto":
			if !strings.Contains(msg, "Perfetto") || !strings.Contains(msg, "sched_switch=1") {
				t.Errorf("%s: %q does not say it is Perfetto and what it found", name, msg)
			}
		case "sched_only.txt":
			if !strings.Contains(msg, "sched_switch=1") {
				t.Errorf("%s: %q does not name what it found", name, msg)
			}
		}
	}
}

// A capture with a driver's events of which none bounds a job (v3d's ioctl and reset
// events: no seqno): the error names the driver's job events and how to record them.
func TestReplayNamesTheDriversJobEvents(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v3d_ioctl_only.txt")
	os.WriteFile(path, []byte("       glmark2-9001  [001] .....  1203.099000: v3d_submit_cl_ioctl: dev=0, RCL 0x00b00000..0x00b00c80\n"+
		" kworker/0:2-40      [000] .....  1210.000000: v3d_reset_begin: dev=0\n"), 0o644)
	var stdout, stderr bytes.Buffer
	code := run([]string{"replay", "--quiet", path}, &stdout, &stderr)
	msg := stderr.String()
	for _, want := range []string{"no GPU event recognised", "v3d's events (v3d_reset_begin, v3d_submit_cl_ioctl)",
		"v3d_submit_cl, v3d_submit_tfu", "v3d_bcl_irq", "-e gpu_scheduler -e dma_fence -e v3d"} {
		if code != 1 || !strings.Contains(msg, want) {
			t.Errorf("exit %d, stderr lacks %q: %s", code, want, msg)
		}
	}
}
