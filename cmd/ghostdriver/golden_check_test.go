// The golden files' independent check: what `ghostdriver replay` prints and writes is
// compared with a second reading of the raw capture, made here with regular expressions
// and encoding/json and none of the decoder, assembler or emitter code. It runs with and
// without -update, so a regenerated golden file that lost or invented jobs fails even
// when it is byte-identical to what the code now produces.
//
// From the capture (amdgpu 4.11 trace-cmd text): a job is a finished fence (context,
// seqno) named by an amdgpu_cs_ioctl or amdgpu_sched_run_job line, its ring the line's
// timeline; it is complete when it was queued (cs_ioctl), run (sched_run_job) and its
// finished fence was signalled (a dma_fence_signaled line with that context and seqno).
package main

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

var (
	rawJobLine    = regexp.MustCompile(`\s(amdgpu_cs_ioctl|amdgpu_sched_run_job):\s+sched_job=\d+, timeline=([^,]+), context=(\d+), seqno=(\d+)`)
	rawSignalLine = regexp.MustCompile(`\sdma_fence_signaled:\s+driver=\S+ timeline=\S+ context=(\d+) seqno=(\d+)`)
	summaryStage  = regexp.MustCompile(`^(\S+)\s+(\S+)\s+(\S+)\s+(\d+)\s`)
	summaryJobs   = regexp.MustCompile(`(?m)^jobs: (\d+) completed, (\d+) incomplete`)
	summaryEvents = regexp.MustCompile(`(?m)^events decoded: job_queue=(\d+) job_run=(\d+) `)
)

type rawFence struct{ context, seqno uint64 }

// rawCapture is the capture read on its own.
type rawCapture struct {
	queueLines, runLines int
	ring                 map[rawFence]string
	queued, ran, signal  map[rawFence]bool
}

func readRawCapture(t *testing.T, path string) rawCapture {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		if r, err = gzip.NewReader(f); err != nil {
			t.Fatal(err)
		}
	}
	c := rawCapture{ring: map[rawFence]string{}, queued: map[rawFence]bool{}, ran: map[rawFence]bool{}, signal: map[rawFence]bool{}}
	num := func(s string) uint64 { v, _ := strconv.ParseUint(s, 10, 64); return v }
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if m := rawJobLine.FindStringSubmatch(line); m != nil {
			k := rawFence{num(m[3]), num(m[4])}
			c.ring[k] = m[2]
			if m[1] == "amdgpu_cs_ioctl" {
				c.queueLines++
				c.queued[k] = true
			} else {
				c.runLines++
				c.ran[k] = true
			}
		} else if m := rawSignalLine.FindStringSubmatch(line); m != nil {
			c.signal[rawFence{num(m[1]), num(m[2])}] = true
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return c
}

// completedByRing counts the complete jobs of each ring.
func (c rawCapture) completedByRing() map[string]int {
	n := map[string]int{}
	for k, ring := range c.ring {
		if c.queued[k] && c.ran[k] && c.signal[k] {
			n[ring]++
		}
	}
	return n
}

// otlpLine is the part of an OTLP/JSON traces line the check reads.
type otlpLine struct {
	ResourceSpans []struct {
		ScopeSpans []struct {
			Spans []struct {
				SpanID     string `json:"spanId"`
				Parent     string `json:"parentSpanId"`
				Name       string `json:"name"`
				Attributes []struct {
					Key   string `json:"key"`
					Value struct {
						Str string `json:"stringValue"`
					} `json:"value"`
				} `json:"attributes"`
			} `json:"spans"`
		} `json:"scopeSpans"`
	} `json:"resourceSpans"`
}

// checkAgainstCapture compares the summary and the spans file with the raw capture.
func checkAgainstCapture(t *testing.T, capture string, summary []byte, spansPath string) {
	t.Helper()
	raw := readRawCapture(t, capture)
	completed := raw.completedByRing()
	total := 0
	for _, n := range completed {
		total += n
	}
	if len(raw.ring) == 0 || total == 0 {
		t.Fatalf("the capture reads as %d jobs, %d complete: the check would prove nothing", len(raw.ring), total)
	}

	// The summary.
	text := string(summary)
	m := summaryJobs.FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("summary has no jobs line:\n%s", text)
	}
	if c, i := atoi(m[1]), atoi(m[2]); c != total || c+i != len(raw.ring) {
		t.Errorf("summary: %d completed + %d incomplete; the capture has %d jobs, %d complete", c, i, len(raw.ring), total)
	}
	if m := summaryEvents.FindStringSubmatch(text); m == nil || atoi(m[1]) != raw.queueLines || atoi(m[2]) != raw.runLines {
		t.Errorf("summary events %v; the capture has %d amdgpu_cs_ioctl and %d amdgpu_sched_run_job lines", m, raw.queueLines, raw.runLines)
	}
	stageRows := map[string]map[string]int{} // ring → stage → count
	table := text
	if i := strings.Index(table, "\n\n"); i >= 0 {
		table = table[:i] // the table ends at the first empty line
	}
	for _, line := range strings.Split(table, "\n") {
		m := summaryStage.FindStringSubmatch(line)
		if m == nil || m[1] == "DRIVER" || m[3] == "job" {
			continue
		}
		if stageRows[m[2]] == nil {
			stageRows[m[2]] = map[string]int{}
		}
		stageRows[m[2]][m[3]] = atoi(m[4])
		// every complete job has one span of every stage
		if n := atoi(m[4]); n != completed[m[2]] {
			t.Errorf("summary: %s %s %s count %d; the capture has %d complete jobs on %s", m[1], m[2], m[3], n, completed[m[2]], m[2])
		}
	}
	for ring, n := range completed {
		if len(stageRows[ring]) == 0 {
			t.Errorf("summary has no stage rows for ring %s (%d complete jobs in the capture)", ring, n)
		}
	}

	// The spans file.
	f, err := os.Open(spansPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	jobs, done := 0, map[string]int{}
	jobRing := map[string]string{} // completed job span id → ring
	children := map[string]map[string]int{}
	type child struct{ parent, name string }
	var kids []child
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var l otlpLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("spans file: %v", err)
		}
		for _, rs := range l.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				for _, sp := range ss.Spans {
					attr := map[string]string{}
					for _, a := range sp.Attributes {
						attr[a.Key] = a.Value.Str
					}
					if sp.Name != "gpu.job" {
						kids = append(kids, child{sp.Parent, sp.Name})
						continue
					}
					jobs++
					if attr["ghostdriver.job.outcome"] == "completed" {
						done[attr["ghostdriver.ring"]]++
						jobRing[sp.SpanID] = attr["ghostdriver.ring"]
					}
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if jobs != len(raw.ring) {
		t.Errorf("spans file: %d gpu.job spans; the capture has %d jobs", jobs, len(raw.ring))
	}
	for ring, n := range completed {
		if done[ring] != n {
			t.Errorf("spans file: %d completed jobs on %s; the capture has %d", done[ring], ring, n)
		}
	}
	for _, k := range kids {
		if ring, ok := jobRing[k.parent]; ok {
			if children[ring] == nil {
				children[ring] = map[string]int{}
			}
			children[ring][k.name]++
		}
	}
	for ring, stages := range stageRows {
		for stage, n := range stages {
			if children[ring][stage] != n {
				t.Errorf("spans file: %d %s spans under completed %s jobs; the capture has %d complete jobs", children[ring][stage], stage, ring, n)
			}
		}
	}
	t.Logf("independent check: %d jobs, %d complete %v, stages per ring %v", len(raw.ring), total, completed, stageRows)
}

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }
