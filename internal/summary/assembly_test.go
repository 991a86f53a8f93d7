package summary

import (
	"bytes"
	"testing"
	"time"

	"github.com/ghostdriver/ghostdriver/internal/assemble"
)

// The assembly line names what a job may show only as a fallback rule, leaves out the
// orphan fence signals every run has, and is absent when there is nothing to say.
func TestWriteAssembly(t *testing.T) {
	var b bytes.Buffer
	WriteAssembly(&b, assemble.Stats{Orphans: map[string]uint64{"fence_signaled": 40}})
	if b.Len() != 0 {
		t.Fatalf("printed %q for orphan fence signals only", b.String())
	}
	WriteAssembly(&b, assemble.Stats{Late: 2, LateByKind: map[string]uint64{"ioctl_exit": 1, "fence_destroy": 1}, ClockJumps: 1,
		LateMaxBehind: 3500 * time.Microsecond, LatePastWatermark: 1,
		Orphans: map[string]uint64{"fence_signaled": 40, "job_done": 1, "job_run": 0}})
	want := "assembly: 2 late events (fence_destroy=1 ioctl_exit=1; at most 3.5ms behind, 1 only behind a bound event times had moved past the watermark), 0 duplicate job events, 1 clock jumps, 0 jobs without their submit ioctl's exit; job events that matched no job: job_done=1\n"
	if b.String() != want {
		t.Fatalf("got  %q\nwant %q", b.String(), want)
	}
}
