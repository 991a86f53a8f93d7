// Metrics before sampling, end to end through the CLI: a capture of a million jobs replayed
// once without spans and once with a sampler that keeps 1 % gives the same metric values,
// and the span file of the sampled run holds only the jobs the sampler kept, each whole,
// each kept for a reason the file itself shows (checked by hand, not by the sampler's
// code: the threshold read from the tracestate against the trace id's low 56 bits).
package main

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/ghostdriver/ghostdriver/internal/metadata"
	"github.com/ghostdriver/ghostdriver/internal/testcapture"
)

const samplingJobs = 1_000_000

func TestSampledReplayKeepsEveryJobInTheMetrics(t *testing.T) {
	dir := t.TempDir()
	capture := filepath.Join(dir, "million.txt")
	f, err := os.Create(capture)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	if err := testcapture.Write(w, testcapture.Options{Style: "6.17", Jobs: samplingJobs, Rings: 4, Procs: 8, Seed: 3}); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()

	mAll, mSampled, spans := filepath.Join(dir, "all.metrics"), filepath.Join(dir, "sampled.metrics"), filepath.Join(dir, "sampled.spans")
	if code, _, e := runCLI("replay", "--quiet", "--epoch", goldenEpoch, "--metrics-output", mAll, capture); code != 0 {
		t.Fatalf("unsampled replay: exit %d: %s", code, e)
	}
	code, out, e := runCLI("replay", "--epoch", goldenEpoch, "--sample", "--sample-probability", "0.01", "--sample-budget", "1e9",
		"--output", spans, "--metrics-output", mSampled, capture)
	if code != 0 {
		t.Fatalf("sampled replay: exit %d: %s", code, e)
	}
	if !strings.Contains(out, "sampling gpu.job:") {
		t.Errorf("the summary does not report the sampler:\n%s", out)
	}

	// the same metric values, the sampler's own metrics aside
	all, sampled := lastMetrics(t, mAll), lastMetrics(t, mSampled)
	samplerSpans := map[string]int64{}
	for k, v := range sampled {
		if strings.HasPrefix(k, metadata.MetricSamplingSpans+"|") {
			samplerSpans[k] = int64(v)
			delete(sampled, k)
		}
		if strings.HasPrefix(k, metadata.MetricSamplingProbability+"|") {
			delete(sampled, k)
		}
	}
	if len(all) == 0 || all[metadata.MetricJobs+"|"+jobsKey] != samplingJobs {
		t.Fatalf("the unsampled run's %s: %v (want %d jobs)", metadata.MetricJobs, all[metadata.MetricJobs+"|"+jobsKey], samplingJobs)
	}
	// busy_ratio is a gauge of the last collection window, whose start is the collection
	// before it: collections are paced by the wall clock (collection_interval), so a
	// slower run (a loaded host) has windows elsewhere. busy_time, cumulative, must agree.
	for _, m := range []map[string]float64{all, sampled} {
		for k := range m {
			if strings.HasPrefix(k, metadata.MetricRingBusyRatio+"|") {
				delete(m, k)
			}
		}
	}
	if !slices.ContainsFunc(slices.Collect(maps.Keys(all)), func(k string) bool { return strings.HasPrefix(k, metadata.MetricRingBusyTime+"|") }) {
		t.Errorf("the unsampled run has no %s", metadata.MetricRingBusyTime)
	}
	for k, v := range all {
		if sv, ok := sampled[k]; !ok || sv != v {
			t.Errorf("metric %s: %v unsampled, %v (present %v) sampled", k, v, sv, ok)
		}
	}
	for k := range sampled {
		if _, ok := all[k]; !ok {
			t.Errorf("metric %s only in the sampled run", k)
		}
	}

	// the span file: only kept jobs, each whole, each for a reason it shows
	jobs, stageSpans, byThreshold, keptSpans := readSampledSpans(t, spans)
	t.Logf("%d job spans (%d by the threshold), %d stage spans, %d spans; sampler's counts %v", jobs, byThreshold, stageSpans, keptSpans, samplerSpans)
	const p = 0.01
	want := float64(samplingJobs) * p
	sigma := math.Sqrt(float64(samplingJobs) * p * (1 - p))
	if n := float64(byThreshold); math.Abs(n-want) > 5*sigma {
		t.Errorf("%d jobs kept by the threshold, want %.0f ± %.0f", byThreshold, want, 5*sigma)
	}
	// certain ones: the slowest of each ring so far in each 10 s window (≈ ln n each)
	if certain := jobs - byThreshold; certain > 4*40*30 {
		t.Errorf("%d jobs kept with certainty (th:0) of %d", certain, jobs)
	}
	if stageSpans < 6*jobs {
		t.Errorf("%d stage spans for %d kept jobs: jobs are not whole", stageSpans, jobs)
	}
	var kept, out2 int64
	for k, v := range samplerSpans {
		if strings.Contains(k, metadata.AttrSamplingDecision+"="+metadata.SamplingKept) {
			kept += v
		} else {
			out2 += v
		}
	}
	if kept != int64(keptSpans) {
		t.Errorf("ghostdriver.sampling.spans says %d spans kept, the file has %d", kept, keptSpans)
	}
	if out2 < 90*int64(keptSpans) {
		t.Errorf("ghostdriver.sampling.spans says %d spans sampled out beside %d kept", out2, keptSpans)
	}
}

// jobsKey is the attribute key of the generated capture's completed jobs on one counter
// data point... the counter's points are summed over rings by lastMetrics' "|" + jobsKey entry.
const jobsKey = "total"

// lastMetrics is the last collection of a metrics file (cumulative: it holds everything),
// as "metric|attr=value,…|field" → value, timestamps left out; jobs summed under jobsKey.
func lastMetrics(t *testing.T, path string) map[string]float64 {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	md, err := (&pmetric.JSONUnmarshaler{}).UnmarshalMetrics([]byte(lines[len(lines)-1]))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	out := map[string]float64{}
	for _, rm := range md.ResourceMetrics().All() {
		for _, sm := range rm.ScopeMetrics().All() {
			for _, m := range sm.Metrics().All() {
				put := func(attrs string, field string, v float64) { out[m.Name()+"|"+attrs+"|"+field] += v }
				switch m.Type() {
				case pmetric.MetricTypeSum:
					for _, dp := range m.Sum().DataPoints().All() {
						v := dp.DoubleValue() + float64(dp.IntValue())
						put(attrsKey(dp.Attributes().AsRaw()), "", v)
						if m.Name() == metadata.MetricJobs {
							out[m.Name()+"|"+jobsKey] += v
						}
					}
				case pmetric.MetricTypeGauge:
					for _, dp := range m.Gauge().DataPoints().All() {
						put(attrsKey(dp.Attributes().AsRaw()), "", dp.DoubleValue()+float64(dp.IntValue()))
					}
				case pmetric.MetricTypeHistogram:
					for _, dp := range m.Histogram().DataPoints().All() {
						a := attrsKey(dp.Attributes().AsRaw())
						put(a, "count", float64(dp.Count()))
						put(a, "sum", dp.Sum())
						for i, c := range dp.BucketCounts().All() {
							put(a, "bucket"+strconv.Itoa(i), float64(c))
						}
					}
				}
			}
		}
	}
	return out
}

func attrsKey(m map[string]any) string {
	var kv []string
	for k, v := range m {
		kv = append(kv, fmt.Sprintf("%s=%v", k, v))
	}
	sort.Strings(kv)
	return strings.Join(kv, ",")
}

// readSampledSpans reads a span file: job spans, stage spans, the jobs kept by a
// threshold (checked by hand against their trace id), and all spans.
func readSampledSpans(t *testing.T, path string) (jobs, stages, byThreshold, spans int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<30)
	for sc.Scan() {
		td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(sc.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		for _, rs := range td.ResourceSpans().All() {
			for _, ss := range rs.ScopeSpans().All() {
				for _, sp := range ss.Spans().All() {
					spans++
					ts := sp.TraceState().AsRaw()
					th, ok := strings.CutPrefix(ts, "ot=th:")
					if !ok || strings.Contains(th, ";") {
						t.Fatalf("span %s %s: tracestate %q", sp.Name(), sp.SpanID(), ts)
					}
					if sp.Name() != "gpu.job" {
						stages++
						continue
					}
					jobs++
					if th == "0" {
						continue
					}
					threshold, err := strconv.ParseUint(th+strings.Repeat("0", 14-len(th)), 16, 64)
					if err != nil {
						t.Fatal(err)
					}
					id := sp.TraceID()
					if r := binary.BigEndian.Uint64(id[8:]) & (1<<56 - 1); r < threshold {
						t.Fatalf("job %s kept at th:%s with randomness %014x", sp.SpanID(), th, r)
					}
					// 1 % kept: the threshold is 99 % of 2^56
					if p := 1 - float64(threshold)/(1<<56); math.Abs(p-0.01) > 0.0005 {
						t.Fatalf("job %s: th:%s is probability %v, want 0.01", sp.SpanID(), th, p)
					}
					byThreshold++
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return jobs, stages, byThreshold, spans
}
