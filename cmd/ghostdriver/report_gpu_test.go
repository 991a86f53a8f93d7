//go:build linux && (386 || amd64)

// `ghostdriver report` on a span file of the NVIDIA GPU timeline alone (no gpu.job): the
// coverage table is written and printed, and nvidia-smi's samples are set beside it.

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/ghostdriver/ghostdriver/internal/cuda"
	"github.com/ghostdriver/ghostdriver/internal/emit/cudaspans"
	"github.com/ghostdriver/ghostdriver/internal/event"
)

func TestReportOfTheGPUTimelineAlone(t *testing.T) {
	const origin = int64(1_800_000_000_000_000_000) // 2027-01-15T08:00:00Z
	b := cudaspans.NewBuilder(event.OffsetClock{Offset: origin})
	var launch, sync cuda.Op
	for i, a := range cuda.APIs() {
		switch a.Name {
		case "cudaLaunchKernel":
			launch = cuda.Op{Call: cuda.Call{API: i, PID: 7, TID: 7, Start: 1000, End: 2000}}
		case "cudaStreamSynchronize":
			sync = cuda.Op{Call: cuda.Call{API: i, PID: 7, TID: 7, Start: 2000, End: 5_000_000}}
		}
	}
	// One submission: its kernels ran 2 ms of a 3 ms window (coverage 66.7 %); one
	// nvidia-smi sample (millisecond timestamps) inside it.
	b.Append(&cuda.Submission{PID: 7, Comm: "python3", Scope: cuda.ScopeStream, Outcome: cuda.Synced, Ops: []cuda.Op{launch},
		Launches: 1, Sync: &sync, Start: 1000, End: 5_000_000,
		GPU: &cuda.GPUWork{KernelCount: 2, FirstStart: 1_000_000, LastEnd: 4_000_000, Busy: 2_000_000, QueueFrom: 2000,
			Devices: []uint32{0}, Complete: true}})
	js, err := (&ptrace.JSONMarshaler{}).MarshalTraces(b.Take())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	spans := filepath.Join(dir, "spans.json")
	if err := os.WriteFile(spans, append(js, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	at := time.Unix(0, origin+2_000_000).UTC().Format("2006/01/02 15:04:05.000")
	smi := filepath.Join(dir, "smi.csv")
	if err := os.WriteFile(smi, []byte(at+", 0, 100\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errs bytes.Buffer
	html := filepath.Join(dir, "r.html")
	if code := cmdReport([]string{"--output", html, "--nvidia-smi", smi, "--nvidia-smi-tz", "UTC", spans}, &out, &errs); code != 0 {
		t.Fatalf("exit %d: %s", code, errs.String())
	}
	if !strings.Contains(out.String(), "kernel coverage  66.7 %") || !strings.Contains(out.String(), "nvidia-smi 100.0 % (1 samples)") {
		t.Errorf("summary:\n%s", out.String())
	}
	page, _ := os.ReadFile(html)
	if !strings.Contains(string(page), "NVIDIA GPU timeline: coverage per process and device") {
		t.Error("the page has no GPU coverage table")
	}
}
