// `make run`'s "where the time went" (scripts/run-summary.awk over the collector's Prometheus
// scrape) against two independent readings: the capture itself, read a second way
// (internal/rawcapture: its jobs, complete ones and stages per ring, none of the decoder's or
// assembler's code), and the file exporter's spans of the same run, summed per ring here
// (the durations). The collector is the ocb-built one replaying the bundled capture;
// `make test-dist` runs it (GHOSTDRIVER_DIST).
package e2e

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/ghostdriver/ghostdriver/internal/rawcapture"
)

// ringTotals is what the spans file says about one ring.
type ringTotals struct {
	jobs     int
	complete int                // gpu.job spans with ghostdriver.job.outcome = completed
	jobSum   float64            // seconds, gpu.job spans
	stageSum map[string]float64 // seconds per stage span name
	stageN   map[string]int
	measured map[string]int // stage spans with ghostdriver.stage.source = measured
}

// spanTotals sums the gpu.job spans of an OTLP/JSON lines file and their stage children
// per ring ("driver/ring").
func spanTotals(t *testing.T, path string) map[string]*ringTotals {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]*ringTotals{}
	ringOf := map[string]string{} // job span id → ring
	type child struct {
		parent, name, source string
		dur                  float64
	}
	var kids []child
	var um ptrace.JSONUnmarshaler
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 256<<20)
	for sc.Scan() {
		td, err := um.UnmarshalTraces(sc.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < td.ResourceSpans().Len(); i++ {
			ss := td.ResourceSpans().At(i).ScopeSpans()
			for j := 0; j < ss.Len(); j++ {
				for k := 0; k < ss.At(j).Spans().Len(); k++ {
					s := ss.At(j).Spans().At(k)
					dur := float64(s.EndTimestamp()-s.StartTimestamp()) / 1e9
					attr := func(key string) string {
						v, _ := s.Attributes().Get(key)
						return v.AsString()
					}
					if s.Name() == "gpu.job" {
						r := attr("ghostdriver.driver") + "/" + attr("ghostdriver.ring")
						rt := out[r]
						if rt == nil {
							rt = &ringTotals{stageSum: map[string]float64{}, stageN: map[string]int{}, measured: map[string]int{}}
							out[r] = rt
						}
						rt.jobs++
						if attr("ghostdriver.job.outcome") == "completed" {
							rt.complete++
						}
						rt.jobSum += dur
						ringOf[s.SpanID().String()] = r
						continue
					}
					kids = append(kids, child{s.ParentSpanID().String(), s.Name(), attr("ghostdriver.stage.source"), dur})
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	for _, c := range kids {
		r, ok := ringOf[c.parent]
		if !ok {
			t.Fatalf("stage span %s without its gpu.job parent in the file", c.name)
		}
		rt := out[r]
		rt.stageSum[c.name] += c.dur
		rt.stageN[c.name]++
		if c.source == "measured" {
			rt.measured[c.name]++
		}
	}
	return out
}

func TestDistributionRunSummary(t *testing.T) {
	bin := distBinary(t)
	raw, err := rawcapture.Read(capture)
	if err != nil {
		t.Fatal(err)
	}
	want := len(raw.Ring)
	if want == 0 || raw.Completed() == 0 {
		t.Fatalf("the bundled capture reads as %d jobs, %d complete: the test would prove nothing", want, raw.Completed())
	}
	dir := t.TempDir()
	spans := filepath.Join(dir, "spans.json")
	port := freePort(t)
	cfg := fmt.Sprintf(`
receivers:
  ghostdriver:
    source: replay
    replay: {path: %q, epoch: "%d"}
    flush_interval: 50ms
    collection_interval: 200ms
exporters:
  file: {path: %q}
  prometheus: {endpoint: "127.0.0.1:%d"}
service:
  telemetry: {metrics: {level: none}}
  pipelines:
    traces: {receivers: [ghostdriver], exporters: [file]}
    metrics: {receivers: [ghostdriver], exporters: [prometheus]}
`, capture, epoch, spans, port)
	cfgPath := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	var logs strings.Builder
	cmd := exec.Command(bin, "--config", cfgPath)
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("collector log:\n%s", logs.String())
		}
	}()

	// Every job in the file and in the scrape's job counter.
	var text string
	deadline := time.Now().Add(90 * time.Second)
	for {
		jobs, _ := countSpans(t, spans)
		text = scrapeText(port)
		if jobs == want && jobsInScrape(text) == want {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 90s: %d gpu.job spans in the file, %d jobs in the scrape, want %d", jobs, jobsInScrape(text), want)
		}
		time.Sleep(250 * time.Millisecond)
	}
	scrapePath := filepath.Join(dir, "scrape.txt")
	if err := os.WriteFile(scrapePath, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("awk", "-f", filepath.Join("..", "scripts", "run-summary.awk"), scrapePath).CombinedOutput()
	if err != nil {
		t.Fatalf("run-summary.awk: %v\n%s", err, out)
	}
	t.Logf("run-summary.awk:\n%s", out)

	totals := spanTotals(t, spans)
	got := parseSummary(t, string(out))

	// The capture read on its own: every ring with its jobs, a breakdown exactly where a
	// job completed, with a row for each stage a complete job has.
	completed := raw.CompletedByRing()
	for r, n := range raw.JobsByRing() {
		ring := rawcapture.Driver + "/" + r
		g, ok := got[ring]
		switch {
		case !ok:
			t.Errorf("%s (%d jobs in the capture) is not in the summary", ring, n)
			continue
		case g.jobs != n || g.completed != completed[r]:
			t.Errorf("%s: the summary says %d jobs, %d completed; the capture has %d, %d complete", ring, g.jobs, g.completed, n, completed[r])
		case g.breakdown != (completed[r] > 0):
			t.Errorf("%s: a stage breakdown %v, with %d complete jobs in the capture", ring, g.breakdown, completed[r])
		}
		if rt := totals[ring]; rt == nil || rt.complete != completed[r] {
			t.Errorf("%s: completed gpu.job spans %v, the capture has %d complete jobs", ring, rt, completed[r])
		}
		if completed[r] == 0 {
			continue
		}
		for _, stage := range rawcapture.CompleteJobStages {
			if _, ok := g.stages[stage]; !ok {
				t.Errorf("%s: no %s row, a stage of each of its %d complete jobs", ring, stage, completed[r])
			}
		}
	}
	if len(got) != len(raw.JobsByRing()) {
		t.Errorf("the summary has %d rings, the capture %d", len(got), len(raw.JobsByRing()))
	}

	// The spans file of the same run: the durations.
	checked := 0
	for ring, rt := range totals {
		g, ok := got[ring]
		if !ok {
			t.Errorf("%s (%d jobs in the spans file) is not in the summary", ring, rt.jobs)
			continue
		}
		if g.jobs != rt.jobs {
			t.Errorf("%s: summary says %d jobs, the spans file has %d", ring, g.jobs, rt.jobs)
		}
		if !g.breakdown {
			continue // no completed job on the ring: the summary gives no breakdown
		}
		if math.Abs(g.jobSum-rt.jobSum) > 0.0015 {
			t.Errorf("%s: job span total %.3fs in the summary, %.6fs in the spans file", ring, g.jobSum, rt.jobSum)
		}
		for stage, sum := range rt.stageSum {
			row, ok := g.stages[stage]
			if !ok {
				t.Errorf("%s: stage %s (%d spans) missing from the summary", ring, stage, rt.stageN[stage])
				continue
			}
			checked++
			if math.Abs(row[1]-sum) > 0.0015 {
				t.Errorf("%s %s: total %.3fs in the summary, %.6fs in the spans file", ring, stage, row[1], sum)
			}
			if share := 100 * sum / rt.jobSum; math.Abs(row[0]-share) > 0.051 {
				t.Errorf("%s %s: share %.1f%% in the summary, %.3f%% from the spans file", ring, stage, row[0], share)
			}
			if m := 100 * float64(rt.measured[stage]) / float64(rt.stageN[stage]); math.Abs(row[2]-m) > 0.51 {
				t.Errorf("%s %s: measured %.0f%% in the summary, %.2f%% of the spans in the file", ring, stage, row[2], m)
			}
		}
		for stage := range g.stages {
			if _, ok := rt.stageSum[stage]; !ok {
				t.Errorf("%s: the summary has a %s row the spans file has no span for", ring, stage)
			}
		}
	}
	if checked < 5 {
		t.Errorf("only %d stage rows compared: the capture's gfx ring has at least 5 stages", checked)
	}
}

// ringSummary is one ring of run-summary.awk's output.
type ringSummary struct {
	jobs      int
	completed int // "(N completed, …)"
	breakdown bool
	jobSum    float64
	stages    map[string][3]float64 // share %, total s, measured %
}

// parseSummary reads run-summary.awk's output: a "<ring>: N jobs (…)" line per ring, then
// its stage rows "<stage> <share>% <total>s <measured>%" and "(job span) 100.0% <total>s".
func parseSummary(t *testing.T, text string) map[string]*ringSummary {
	out := map[string]*ringSummary{}
	var cur *ringSummary
	num := func(s, suffix string) float64 {
		v, err := strconv.ParseFloat(strings.TrimSuffix(s, suffix), 64)
		if err != nil {
			t.Fatalf("summary: %q is not a number: %v\n%s", s, err, text)
		}
		return v
	}
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) == 0:
		case !strings.HasPrefix(line, " ") && len(f) >= 3 && f[2] == "jobs":
			n, err := strconv.Atoi(f[1])
			if err != nil {
				t.Fatalf("summary ring line %q: %v", line, err)
			}
			cur = &ringSummary{jobs: n, stages: map[string][3]float64{}}
			if len(f) >= 5 && f[4] == "completed," {
				cur.completed, _ = strconv.Atoi(strings.TrimPrefix(f[3], "("))
			}
			out[strings.TrimSuffix(f[0], ":")] = cur
		case cur == nil:
			t.Fatalf("summary: %q before any ring line", line)
		case f[0] == "stage":
			cur.breakdown = true
		case f[0] == "(job":
			cur.jobSum = num(f[len(f)-1], "s")
		case len(f) == 4 && strings.HasSuffix(f[1], "%"):
			cur.stages[f[0]] = [3]float64{num(f[1], "%"), num(f[2], "s"), num(f[3], "%")}
		}
	}
	return out
}

// scrapeText returns the Prometheus exporter's page, "" while it is not up.
func scrapeText(port int) string {
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", port))
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// jobsInScrape sums ghostdriver_jobs_total over its series.
func jobsInScrape(text string) int {
	n := 0.0
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "ghostdriver_jobs_total") {
			f := strings.Fields(l)
			v, _ := strconv.ParseFloat(f[len(f)-1], 64)
			n += v
		}
	}
	return int(n)
}
