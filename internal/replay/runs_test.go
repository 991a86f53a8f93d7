// Per-CPU files concatenated (each in time order, the whole not): the replay delivers the
// events of the sorted capture, in time order, plain and gzipped; the runs are found where
// time goes back; too many runs is a clear error.
package replay

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/ghostdriver/ghostdriver/internal/event"
)

const fullCapture = "../../testdata/captures/gpuvis_amdgpu_4.11_full.trace-cmd-report.txt.gz"

// cpuColumn is the CPU column of a trace-cmd report line, read independently of the
// decoder: "comm-pid [00N] ".
var cpuColumn = regexp.MustCompile(`^.*?-\d+ +\[(\d{3})\] `)

// perCPUConcatenation splits a sorted capture by its CPU column into one file per CPU (the
// lines without a CPU, its header, start CPU 0's) and returns them concatenated in CPU
// order, as `cat per_cpu/cpu*/trace` would.
func perCPUConcatenation(t testing.TB, sorted []byte) []byte {
	t.Helper()
	perCPU := map[string]*bytes.Buffer{}
	var cpus []string
	for _, line := range bytes.SplitAfter(sorted, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		cpu := ""
		if m := cpuColumn.FindSubmatch(line); m != nil {
			cpu = string(m[1])
		} else {
			cpu = "000"
		}
		b, ok := perCPU[cpu]
		if !ok {
			b = &bytes.Buffer{}
			perCPU[cpu] = b
			cpus = append(cpus, cpu)
		}
		b.Write(line)
	}
	sort.Strings(cpus)
	if len(cpus) < 2 {
		t.Fatalf("capture has %d CPUs", len(cpus))
	}
	var out bytes.Buffer
	for _, c := range cpus {
		out.Write(perCPU[c].Bytes())
	}
	return out.Bytes()
}

func readGzip(t testing.TB, path string) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func replayEvents(t *testing.T, path string) ([]event.Event, event.SourceStats, int) {
	t.Helper()
	s := mustNew(t, Config{Path: path, HasEpoch: true})
	var rec recorder
	if err := s.Run(context.Background(), &rec); err != nil {
		t.Fatal(err)
	}
	return rec.events, s.Stats(), s.runs
}

func TestReplayConcatenatedPerCPU(t *testing.T) {
	sorted := readGzip(t, fullCapture)
	cat := perCPUConcatenation(t, sorted)
	if bytes.Equal(cat, sorted) {
		t.Fatal("the concatenation is the sorted capture")
	}
	dir := t.TempDir()
	sortedPath := filepath.Join(dir, "sorted.txt")
	os.WriteFile(sortedPath, sorted, 0o644)
	want, wantStats, runs := replayEvents(t, sortedPath)
	if runs != 0 {
		t.Fatalf("the sorted capture was merged from %d runs", runs)
	}
	catPath := filepath.Join(dir, "cat.txt")
	os.WriteFile(catPath, cat, 0o644)
	gzPath, _ := gzipFile(t, cat)
	for name, path := range map[string]string{"plain": catPath, "gzip": gzPath} {
		t.Run(name, func(t *testing.T) {
			got, st, runs := replayEvents(t, path)
			if runs != 4 {
				t.Errorf("%d runs merged, want 4 (one a CPU)", runs)
			}
			if len(got) != len(want) {
				t.Fatalf("%d events, the sorted capture gives %d", len(got), len(want))
			}
			for i := 1; i < len(got); i++ {
				if got[i].Time < got[i-1].Time {
					t.Fatalf("event %d at %d before event %d at %d", i, got[i].Time, i-1, got[i-1].Time)
				}
			}
			// the same events: equal timestamps may come in another CPU order
			key := func(e event.Event) string { return fmt.Sprintf("%d %d %+v", e.Time, e.CPU, e) }
			a, b := make([]string, len(got)), make([]string, len(want))
			for i := range got {
				a[i], b[i] = key(got[i]), key(want[i])
			}
			sort.Strings(a)
			sort.Strings(b)
			for i := range a {
				if a[i] != b[i] {
					t.Fatalf("event differs:\n%s\n%s", a[i], b[i])
				}
			}
			if st.Malformed != wantStats.Malformed || st.Lost != wantStats.Lost || fmt.Sprint(st.Unknown) != fmt.Sprint(wantStats.Unknown) {
				t.Errorf("stats %+v, sorted %+v", st, wantStats)
			}
		})
	}
}

// Where time goes back, a run starts, together with the lines without time just before
// it (the next file's header, a loss note at its start).
func TestScanRuns(t *testing.T) {
	line := func(cpu int, ts string) string {
		return fmt.Sprintf("  x-1 [%03d] %s: dma_fence_signaled: driver=a timeline=b context=1 seqno=2\n", cpu, ts)
	}
	text := "# tracer: nop\n" + line(0, "1.000001") + line(0, "2.000001") + "CPU:0 [LOST 3 EVENTS]\n" + line(0, "3.000000") +
		"# tracer: nop\nCPU:1 [LOST 2 EVENTS]\n" + line(1, "1.500000") + line(1, "2.500000") +
		line(2, "0.500000")
	path := filepath.Join(t.TempDir(), "runs.txt")
	os.WriteFile(path, []byte(text), 0o644)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	runs, gz, err := scanRuns(f)
	if err != nil || gz {
		t.Fatal(err, gz)
	}
	second := int64(strings.Index(text, "# tracer: nop\nCPU:1"))
	third := int64(strings.Index(text, line(2, "0.500000")))
	want := []segment{{0, second, 1}, {second, third, 6}, {third, int64(len(text)), 10}}
	if fmt.Sprint(runs) != fmt.Sprint(want) {
		t.Fatalf("runs %v, want %v", runs, want)
	}
	got, _, n := replayEvents(t, path)
	if n != 3 {
		t.Fatalf("%d runs", n)
	}
	var order []string
	for _, e := range got {
		order = append(order, fmt.Sprintf("%v@%d/%d", e.Kind, e.CPU, e.Time/1e6))
	}
	// CPU 1's note goes out first (its run's time before any is the earliest) at the
	// time of the first event; CPU 0's after CPU 0's event before it.
	wantOrder := "events_lost@1/500 fence_signaled@2/500 fence_signaled@0/1000 fence_signaled@1/1500 " +
		"fence_signaled@0/2000 events_lost@0/2000 fence_signaled@1/2500 fence_signaled@0/3000"
	if strings.Join(order, " ") != wantOrder {
		t.Errorf("order\n%s\nwant\n%s", strings.Join(order, " "), wantOrder)
	}
}

func TestTooManyRuns(t *testing.T) {
	var b strings.Builder
	for i := 0; i <= 2*MaxRuns+1; i++ { // 2, 1, 2, 1, …: a run every second line
		fmt.Fprintf(&b, "  x-1 [000] %d.000000: dma_fence_signaled: driver=a timeline=b context=1 seqno=2\n", 2-i%2)
	}
	path := filepath.Join(t.TempDir(), "zigzag.txt")
	os.WriteFile(path, []byte(b.String()), 0o644)
	s := mustNew(t, Config{Path: path})
	var rec recorder
	err := s.Run(context.Background(), &rec)
	if err == nil || !strings.Contains(err.Error(), "not in time order") || len(rec.events) != 0 {
		t.Fatalf("err %v, %d events", err, len(rec.events))
	}
}
