// The golden files' independent check: what `ghostdriver replay` prints and writes is
// compared with a second reading of the raw capture (internal/rawcapture: regular
// expressions and encoding/json, none of the decoder, assembler or emitter code). It runs
// with and without -update, so a regenerated golden file that lost or invented jobs fails
// even when it is byte-identical to what the code now produces.
package main

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ghostdriver/ghostdriver/internal/rawcapture"
)

var (
	summaryStage  = regexp.MustCompile(`^(\S+)\s+(\S+)\s+(\S+)\s+(\d+)\s`)
	summaryJobs   = regexp.MustCompile(`(?m)^jobs: (\d+) completed, (\d+) incomplete`)
	summaryEvents = regexp.MustCompile(`(?m)^events decoded: job_queue=(\d+) job_run=(\d+) `)
)

// checkAgainstCapture compares the summary and the spans file with the raw capture.
func checkAgainstCapture(t *testing.T, capture string, summary []byte, spansPath string) {
	t.Helper()
	raw, err := rawcapture.Read(capture)
	if err != nil {
		t.Fatal(err)
	}
	completed := raw.CompletedByRing()
	total := raw.Completed()
	if len(raw.Ring) == 0 || total == 0 {
		t.Fatalf("the capture reads as %d jobs, %d complete: the check would prove nothing", len(raw.Ring), total)
	}

	// The summary.
	text := string(summary)
	m := summaryJobs.FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("summary has no jobs line:\n%s", text)
	}
	if c, i := atoi(m[1]), atoi(m[2]); c != total || c+i != len(raw.Ring) {
		t.Errorf("summary: %d completed + %d incomplete; the capture has %d jobs, %d complete", c, i, len(raw.Ring), total)
	}
	if m := summaryEvents.FindStringSubmatch(text); m == nil || atoi(m[1]) != raw.QueueLines || atoi(m[2]) != raw.RunLines {
		t.Errorf("summary events %v; the capture has %d amdgpu_cs_ioctl and %d amdgpu_sched_run_job lines", m, raw.QueueLines, raw.RunLines)
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
	spans, err := rawcapture.ReadSpans(spansPath)
	if err != nil {
		t.Fatalf("spans file: %v", err)
	}
	tree := rawcapture.JobTree(spans)
	done := map[string]int{}
	children := map[string]map[string]int{} // ring → stage → spans under its completed jobs
	for _, job := range tree.Jobs {
		if job.Attrs["ghostdriver.job.outcome"] != "completed" {
			continue
		}
		ring := job.Attrs["ghostdriver.ring"]
		done[ring]++
		if children[ring] == nil {
			children[ring] = map[string]int{}
		}
		for name, n := range tree.Children[job.ID] {
			children[ring][name] += n
		}
	}
	if len(tree.Jobs) != len(raw.Ring) {
		t.Errorf("spans file: %d gpu.job spans; the capture has %d jobs", len(tree.Jobs), len(raw.Ring))
	}
	for ring, n := range completed {
		if done[ring] != n {
			t.Errorf("spans file: %d completed jobs on %s; the capture has %d", done[ring], ring, n)
		}
	}
	for ring, stages := range stageRows {
		for stage, n := range stages {
			if children[ring][stage] != n {
				t.Errorf("spans file: %d %s spans under completed %s jobs; the capture has %d complete jobs", children[ring][stage], stage, ring, n)
			}
		}
	}
	t.Logf("independent check: %d jobs, %d complete %v, stages per ring %v", len(raw.Ring), total, completed, stageRows)
}

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }
