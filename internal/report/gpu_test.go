//go:build linux && (386 || amd64)

// The report's GPU coverage rows from spans the CUDA span builder makes: submissions whose
// GPU work is written out by hand, expected numbers worked out in the comments.
package report

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/ghostdriver/ghostdriver/internal/cuda"
	"github.com/ghostdriver/ghostdriver/internal/emit/cudaspans"
	"github.com/ghostdriver/ghostdriver/internal/event"
	"github.com/ghostdriver/ghostdriver/internal/timeline"
)

const us = int64(1000)

var gpuClock = event.OffsetClock{Offset: 1_700_000_000_000_000_000}

func gpuSubmission(pid uint32, start int64, w cuda.GPUWork) *cuda.Submission {
	var launch, sync cuda.Op
	for i, a := range cuda.APIs() {
		switch a.Name {
		case "cudaLaunchKernel":
			launch = cuda.Op{Call: cuda.Call{API: i, PID: pid, TID: pid, Start: start, End: start + 5*us}}
		case "cudaStreamSynchronize":
			sync = cuda.Op{Call: cuda.Call{API: i, PID: pid, TID: pid, Start: start + 10*us}}
		}
	}
	sync.End = w.LastEnd + 3*us + (start/(1000*us))*4*us // completion: 7 µs at start 1 ms, 11 µs at 2 ms
	w.QueueFrom = launch.End
	return &cuda.Submission{PID: pid, Comm: "python3", Stream: 0x10, Scope: cuda.ScopeStream, Outcome: cuda.Synced,
		Ops: []cuda.Op{launch}, Launches: 1, Sync: &sync, Start: start, End: sync.End, GPU: &w}
}

func TestGPURowsCoverageAgainstNvidiaSMI(t *testing.T) {
	b := cudaspans.NewBuilder(gpuClock)
	// Process 100 on device 0: executions [1010, 1100] µs (busy 80, SM-weighted 20, queue
	// from the launch's return at 1005: 5 µs) and [2020, 2100] µs (busy 70, SM-weighted 70,
	// queue 2005 → 2020: 15 µs). Window 1010 → 2100 = 1090 µs; coverage 150/1090,
	// SM-weighted 90/1090.
	b.Append(gpuSubmission(100, 1000*us, cuda.GPUWork{KernelCount: 4, FirstStart: 1010 * us, LastEnd: 1100 * us,
		Busy: 80 * us, SMWeightedBusy: 20 * us, SMKnown: true, Devices: []uint32{0}, Complete: true}))
	b.Append(gpuSubmission(100, 2000*us, cuda.GPUWork{KernelCount: 6, FirstStart: 2020 * us, LastEnd: 2100 * us,
		Busy: 70 * us, SMWeightedBusy: 70 * us, SMKnown: true, Devices: []uint32{0}, Complete: true}))
	// Process 200 on device 1, whose SM count was not reported: no SM-weighted coverage.
	b.Append(gpuSubmission(200, 1000*us, cuda.GPUWork{KernelCount: 1, FirstStart: 1010 * us, LastEnd: 1030 * us,
		Busy: 20 * us, Devices: []uint32{1}, Complete: true}))
	set := timeline.FromTraces(b.Take())
	if len(set.GPU) != 3 {
		t.Fatalf("%d GPU works read back, want 3", len(set.GPU))
	}
	wall := func(t int64) int64 { return gpuClock.WallNanos(t) }
	smi := []SMISample{
		{At: wall(1050 * us), Device: "0", Utilization: 0.9},
		{At: wall(2050 * us), Device: "0", Utilization: 1.0},
		{At: wall(1020 * us), Device: "1", Utilization: 0.5}, // device 1: process 200's, not 100's
		{At: wall(3000 * us), Device: "0", Utilization: 0},   // after the window
	}
	rows := summarize(set, smi).GPU
	if len(rows) != 2 {
		t.Fatalf("rows %+v, want one per process and device", rows)
	}
	a := rows[0]
	if a.Devices != "0" || a.Submissions != 2 || a.Kernels != 10 || a.Window != 1090*us || a.Busy != 150*us || !a.SMKnown || a.SMWeighted != 90*us {
		t.Errorf("process 100: %+v", a)
	}
	if math.Abs(a.Coverage()-150.0/1090) > 1e-9 || math.Abs(a.SMCoverage()-90.0/1090) > 1e-9 {
		t.Errorf("process 100: coverage %v, SM-weighted %v", a.Coverage(), a.SMCoverage())
	}
	if a.SMISamples != 2 || math.Abs(a.SMI-0.95) > 1e-9 {
		t.Errorf("process 100: nvidia-smi %v over %d samples, want 0.95 over 2", a.SMI, a.SMISamples)
	}
	// Queues 5 and 15 µs; completions 7 and 11 µs (gpuSubmission's sync returns).
	if a.Queues != 2 || a.QueueP50 != 5*us || a.QueueP99 != 15*us || a.Completions != 2 || a.CompletionP50 != 7*us || a.CompletionP99 != 11*us {
		t.Errorf("process 100: queue %d p50 %d p99 %d, completion %d p50 %d p99 %d", a.Queues, a.QueueP50, a.QueueP99, a.Completions, a.CompletionP50, a.CompletionP99)
	}
	if c := rows[1]; c.Devices != "1" || c.SMKnown || c.SMWeighted != 0 || c.Window != 20*us || c.Busy != 20*us || c.SMISamples != 1 || c.SMI != 0.5 {
		t.Errorf("process 200: %+v", c)
	}
	if !strings.Contains(a.Process, "pid 100") {
		t.Errorf("process name %q", a.Process)
	}
}

func TestReadSMI(t *testing.T) {
	in := "timestamp, index, utilization.gpu [%]\n" +
		"2026/12/07 13:20:01.100, 0, 97 %\n" +
		"2026/12/07 13:20:01.200, 1, [N/A]\n" +
		"\n" +
		"2026/12/07 13:20:01.300, 0, 45\n"
	s, skipped, err := ReadSMI(strings.NewReader(in), time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	want0 := time.Date(2026, 12, 7, 13, 20, 1, 100e6, time.UTC).UnixNano()
	if len(s) != 2 || skipped != 3 || s[0].At != want0 || s[0].Device != "0" || s[0].Utilization != 0.97 || s[1].Utilization != 0.45 {
		t.Fatalf("samples %+v, skipped %d", s, skipped)
	}
	if _, _, err := ReadSMI(strings.NewReader("13:20:01, 0, 50\n"), time.UTC); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Fatalf("a bad timestamp: %v", err)
	}
}
