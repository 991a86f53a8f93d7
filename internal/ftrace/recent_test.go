// The decoder's memory of recent lines (recent.go, taskColumns in line.go) changes
// nothing it returns: a decoder that has seen every line before decodes each exactly as a
// fresh decoder does.
package ftrace

import (
	"reflect"
	"testing"

	"github.com/ghostdriver/ghostdriver/internal/event"
)

func TestWarmDecoderDecodesAsFresh(t *testing.T) {
	var lines [][]byte
	for _, name := range []string{"gpuvis_amdgpu_4.11_full.trace-cmd-report.txt.gz", "snippets_real_lines.txt"} {
		lines = append(lines, readLines(t, name)...)
	}
	// Runs of one task, and lines that share a task's columns but not its layout after them.
	for _, l := range []string{
		"  kworker/u8:0-12  [001] d..1.  1000.000021: dma_fence_init: driver=amdgpu timeline=gfx context=1 seqno=1",
		"  kworker/u8:0-12  [001] d..1.  1000.000022: dma_fence_emit: driver=amdgpu timeline=gfx context=1 seqno=1",
		"  kworker/u8:0-12  [001] d..1.  x1000.000023: dma_fence_emit: driver=amdgpu timeline=gfx context=1 seqno=1",
		"  kworker/u8:0-12  [001] d..1.  1000.000024 dma_fence_emit: 1.5: driver=amdgpu",
		"  kworker/u8:0-12  [001] d..1.  1000.1234567890: dma_fence_emit: driver=amdgpu timeline=gfx context=1 seqno=1",
		"  kworker/u8:0-12  [001] d..1.  1000.000025:",
		"  kworker/u8:0-12  [001] d..1.  ",
		"  kworker/u8:0-12  [001] d..1.  1000.000026: <idle>-0 [000] 1.0: dma_fence_emit: driver=x timeline=y context=1 seqno=2",
		// after the same columns, what the timestamp right after them (line.go: timeAt) leaves to the search
		"  kworker/u8:0-12  [001] d..1.  1000.000027:dma_fence_emit: 1.5: driver=amdgpu",
		"  kworker/u8:0-12  [001] d..1.  1000.000028:\tdma_fence_emit: driver=amdgpu timeline=gfx context=1 seqno=1",
		"  kworker/u8:0-12  [001] d..1.  10000000000.000029: dma_fence_emit: driver=amdgpu timeline=gfx context=1 seqno=1",
		"  kworker/u8:0-12  [001] d..1.  9223372036.000030: dma_fence_emit: driver=amdgpu timeline=gfx context=1 seqno=1",
		"  kworker/u8:0-12  [001] d..1.  1000.000031 1.5: dma_fence_emit: driver=amdgpu timeline=gfx context=1 seqno=1",
		"-1 1.0: dma_fence_emit: driver=amdgpu timeline=gfx context=1 seqno=1",
		"-1 1.0: dma_fence_emit: driver=amdgpu timeline=gfx context=1 seqno=2",
		"-1:1 2.0: dma_fence_emit: driver=amdgpu timeline=gfx context=1 seqno=3",
	} {
		lines = append(lines, []byte(l))
	}
	warm := NewDecoder()
	for i, l := range lines {
		var got, want event.Event
		before := outcomes(warm)
		gotOK := warm.Decode(l, i+1, &got)
		fresh := NewDecoder()
		wantOK := fresh.Decode(l, i+1, &want)
		if gotOK != wantOK || !reflect.DeepEqual(got, want) {
			t.Fatalf("line %d %q:\nwarm  %v %+v\nfresh %v %+v", i+1, l, gotOK, got, wantOK, want)
		}
		after := outcomes(warm)
		for k := range after {
			after[k] -= before[k]
		}
		if f := outcomes(fresh); after != f {
			t.Fatalf("line %d %q: counted as %v, fresh %v", i+1, l, after, f)
		}
	}
}

// outcomes are a decoder's counts of malformed lines, headers and unknown events.
func outcomes(d *Decoder) [3]uint64 {
	s := d.Stats()
	var unknown uint64
	for _, n := range s.Unknown {
		unknown += n
	}
	return [3]uint64{s.Malformed, d.Headers(), unknown}
}
