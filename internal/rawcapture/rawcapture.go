// Package rawcapture reads the bundled amdgpu 4.11 trace-cmd capture and OTLP/JSON span
// files a second way, for the tests' oracles: regular expressions and encoding/json, none
// of the decoder, assembler or emitter code. Tests compare what the code produced with
// this reading, so an oracle never takes its expectation from the code it checks.
//
// From the capture: a job is a finished fence (context, seqno) named by an
// amdgpu_cs_ioctl or amdgpu_sched_run_job line, its ring the line's timeline; it is
// complete when it was queued (cs_ioctl), run (sched_run_job) and its finished fence was
// signalled (a dma_fence_signaled line with that context and seqno).
package rawcapture

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
)

var (
	jobLine    = regexp.MustCompile(`\s(amdgpu_cs_ioctl|amdgpu_sched_run_job):\s+sched_job=\d+, timeline=([^,]+), context=(\d+), seqno=(\d+)`)
	signalLine = regexp.MustCompile(`\sdma_fence_signaled:\s+driver=\S+ timeline=\S+ context=(\d+) seqno=(\d+)`)
)

// CompleteJobStages are the stage spans every complete job of the amdgpu 4.11 capture
// has, one each: queued, run and signalled, its fence dependency and signal points
// included (docs/stages.md).
var CompleteJobStages = []string{"fence_dependency", "scheduler_queue", "ring_emission", "dma_scheduling", "execution", "fence_signal"}

// Fence is a job's finished fence.
type Fence struct{ Context, Seqno uint64 }

// Capture is the capture read on its own.
type Capture struct {
	QueueLines, RunLines int
	Ring                 map[Fence]string
	Queued, Ran, Signal  map[Fence]bool
}

// Read reads the capture at path (gzipped when it ends in .gz).
func Read(path string) (Capture, error) {
	f, err := os.Open(path)
	if err != nil {
		return Capture{}, err
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		if r, err = gzip.NewReader(f); err != nil {
			return Capture{}, err
		}
	}
	c := Capture{Ring: map[Fence]string{}, Queued: map[Fence]bool{}, Ran: map[Fence]bool{}, Signal: map[Fence]bool{}}
	num := func(s string) uint64 { v, _ := strconv.ParseUint(s, 10, 64); return v }
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if m := jobLine.FindStringSubmatch(line); m != nil {
			k := Fence{num(m[3]), num(m[4])}
			c.Ring[k] = m[2]
			if m[1] == "amdgpu_cs_ioctl" {
				c.QueueLines++
				c.Queued[k] = true
			} else {
				c.RunLines++
				c.Ran[k] = true
			}
		} else if m := signalLine.FindStringSubmatch(line); m != nil {
			c.Signal[Fence{num(m[1]), num(m[2])}] = true
		}
	}
	return c, sc.Err()
}

// Complete reports whether the job of fence k was queued, run and signalled.
func (c Capture) Complete(k Fence) bool { return c.Queued[k] && c.Ran[k] && c.Signal[k] }

// CompletedByRing counts the complete jobs of each ring.
func (c Capture) CompletedByRing() map[string]int {
	n := map[string]int{}
	for k, ring := range c.Ring {
		if c.Complete(k) {
			n[ring]++
		}
	}
	return n
}

// JobsByRing counts the jobs of each ring, complete or not.
func (c Capture) JobsByRing() map[string]int {
	n := map[string]int{}
	for _, ring := range c.Ring {
		n[ring]++
	}
	return n
}

// Driver is the driver of the capture's jobs: every job line is an amdgpu_* event.
const Driver = "amdgpu"

// Completed counts the complete jobs.
func (c Capture) Completed() int {
	n := 0
	for k := range c.Ring {
		if c.Complete(k) {
			n++
		}
	}
	return n
}

// Span is what an oracle reads of one span of an OTLP/JSON file.
type Span struct {
	ID, Parent, Name string
	Attrs            map[string]string // string attributes
}

// otlpLine is the part of an OTLP/JSON traces line read.
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

// ReadSpans reads every span of an OTLP/JSON lines file (the CLI's --output, the
// collector's file exporter). A last line cut short (a file still being written) is
// left out.
func ReadSpans(path string) ([]Span, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Span
	r := bufio.NewReaderSize(f, 1<<20)
	for n := 1; ; n++ {
		line, err := r.ReadBytes('\n')
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if len(line) <= 1 {
			continue
		}
		var l otlpLine
		if err := json.Unmarshal(line, &l); err != nil {
			return nil, fmt.Errorf("%s line %d: %w", path, n, err)
		}
		for _, rs := range l.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				for _, sp := range ss.Spans {
					s := Span{ID: sp.SpanID, Parent: sp.Parent, Name: sp.Name, Attrs: map[string]string{}}
					for _, a := range sp.Attributes {
						s.Attrs[a.Key] = a.Value.Str
					}
					out = append(out, s)
				}
			}
		}
	}
}

// Jobs is the job tree of spans: the gpu.job spans, and the names of each job's children.
type Jobs struct {
	Jobs     []Span
	Children map[string]map[string]int // job span id → child name → count
}

// JobTree groups spans into their jobs.
func JobTree(spans []Span) Jobs {
	j := Jobs{Children: map[string]map[string]int{}}
	isJob := map[string]bool{}
	for _, s := range spans {
		if s.Name == "gpu.job" {
			j.Jobs = append(j.Jobs, s)
			isJob[s.ID] = true
		}
	}
	for _, s := range spans {
		if s.Name != "gpu.job" && isJob[s.Parent] {
			if j.Children[s.Parent] == nil {
				j.Children[s.Parent] = map[string]int{}
			}
			j.Children[s.Parent][s.Name]++
		}
	}
	return j
}

// CheckCompleteJobs compares a job tree with the capture: as many gpu.job spans as the
// capture has jobs, as many completed ones as it has complete jobs, and every completed
// one with exactly one child of each of CompleteJobStages (withStages; none without).
// It returns what disagrees, one line each.
func (c Capture) CheckCompleteJobs(j Jobs, withStages bool) []string {
	var bad []string
	if len(c.Ring) == 0 || c.Completed() == 0 {
		return []string{fmt.Sprintf("the capture reads as %d jobs, %d complete: the check would prove nothing", len(c.Ring), c.Completed())}
	}
	if len(j.Jobs) != len(c.Ring) {
		bad = append(bad, fmt.Sprintf("%d gpu.job spans; the capture has %d jobs", len(j.Jobs), len(c.Ring)))
	}
	done := 0
	wrong := map[string]int{}
	for _, job := range j.Jobs {
		if job.Attrs["ghostdriver.job.outcome"] != "completed" {
			if !withStages && len(j.Children[job.ID]) != 0 {
				wrong["children with stage spans off"]++
			}
			continue
		}
		done++
		kids := j.Children[job.ID]
		if !withStages {
			if len(kids) != 0 {
				wrong["children with stage spans off"]++
			}
			continue
		}
		for _, st := range CompleteJobStages {
			if kids[st] != 1 {
				wrong[fmt.Sprintf("%d %s", kids[st], st)]++
			}
		}
		if len(kids) != len(CompleteJobStages) {
			wrong[fmt.Sprintf("%d kinds of child", len(kids))]++
		}
	}
	if done != c.Completed() {
		bad = append(bad, fmt.Sprintf("%d completed gpu.job spans; the capture has %d complete jobs", done, c.Completed()))
	}
	for what, n := range wrong {
		bad = append(bad, fmt.Sprintf("%d completed jobs with %s", n, what))
	}
	return bad
}
