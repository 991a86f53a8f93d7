// Whole real captures in, exact numbers out: the gpuvis amdgpu 4.11 capture (trace-cmd
// report text), filtered and full.
package ftrace

import (
	"reflect"
	"testing"

	"github.com/ghostdriver/ghostdriver/internal/event"
)

// Expected numbers computed independently of the decoder:
//
//	grep -oE '[0-9]+\.[0-9]{6}: [a-z_0-9]+:' FILE | awk '{print $2}' | sort | uniq -c
//	    755 amdgpu_cs_ioctl:      693 amdgpu_sched_run_job:  2 amdgpu_ttm_bo_move:
//	      1 amdgpu_vm_flush:     1976 dma_fence_signaled:  247 drm_vblank_event:
//	   6027 print:             (full capture only: 43806 sched_switch:)
//	grep -vcE '[0-9]+\.[0-9]{6}: [a-z_0-9]+:' FILE   → 2 ("# Source: …" and "cpus=4")
var gpuOnlyKinds = map[event.Kind]uint64{
	event.JobQueue:      755,
	event.JobRun:        693,
	event.FenceSignaled: 1976,
	event.Marker:        6027,
}

func TestGpuOnlyCaptureCounts(t *testing.T) {
	lines := readLines(t, "gpuvis_amdgpu_4.11_gpu_only.trace-cmd-report.txt")
	if len(lines) != 9703 {
		t.Fatalf("capture has %d lines, want 9703 (wc -l)", len(lines))
	}
	evs, d := decodeAll(lines)
	s := d.Stats()
	if got := countsByKind(s); !reflect.DeepEqual(got, gpuOnlyKinds) {
		t.Errorf("events by kind = %v, want %v", got, gpuOnlyKinds)
	}
	wantUnknown := map[string]uint64{"drm_vblank_event": 247, "amdgpu_ttm_bo_move": 2, "amdgpu_vm_flush": 1}
	if !reflect.DeepEqual(s.Unknown, wantUnknown) {
		t.Errorf("unknown = %v, want %v", s.Unknown, wantUnknown)
	}
	for name := range wantUnknown {
		if k, known := Known(name); !known || k != event.KindUnknown {
			t.Errorf("%s: Known = %v, %v; want known-but-unused", name, k, known)
		}
	}
	if s.Malformed != 0 || d.Headers() != 2 || s.Lost != 0 {
		t.Errorf("malformed %d (%v), headers %d, lost %d; want 0, 2, 0", s.Malformed, s.MalformedSamples, d.Headers(), s.Lost)
	}
	if len(evs) != 9451 {
		t.Errorf("decoded %d events, want 9451", len(evs))
	}

	// Every amdgpu job event names its ring by the timeline (ring_name is a pointer in this
	// trace-cmd output): grep -E 'amdgpu_(cs_ioctl|sched_run_job):' | grep -oE 'timeline=[^,]+'
	// → 1424 gfx, 1 sdma0, 23 sdma1.
	rings := map[string]int{}
	for _, ev := range evs {
		if ev.Kind == event.JobQueue || ev.Kind == event.JobRun {
			rings[ev.Ring]++
			if ev.Ring != ev.Timeline || ev.Driver != "amdgpu" || ev.FenceWide || ev.JobID == 0 {
				t.Fatalf("amdgpu job event %+v", ev)
			}
		}
	}
	if want := map[string]int{"gfx": 1424, "sdma0": 1, "sdma1": 23}; !reflect.DeepEqual(rings, want) {
		t.Errorf("rings = %v, want %v", rings, want)
	}
	// The capture is time-ordered (trace-cmd merges CPUs).
	for i := 1; i < len(evs); i++ {
		if evs[i].Time < evs[i-1].Time {
			t.Fatalf("event %d at %d before event %d at %d", i, evs[i].Time, i-1, evs[i-1].Time)
		}
	}
}

func TestGpuOnlyCaptureLines(t *testing.T) {
	lines := readLines(t, "gpuvis_amdgpu_4.11_gpu_only.trace-cmd-report.txt")
	// line numbers are 1-based, as `sed -n Np` prints them
	tests := []struct {
		lineNo int
		want   event.Event
	}{
		{3, event.Event{Kind: event.Marker, Time: 630659131089000, CPU: 3, TID: 25155, Comm: "RenderThread", Name: "print",
			Text: "[Compositor] XPresentCompleteNotifyEvent; msSinceVblank: -1.823000"}},
		{9, event.Event{Kind: event.JobQueue, Time: 630659133157000, CPU: 3, TID: 25155, Comm: "RenderThread",
			Name: "amdgpu_cs_ioctl", Driver: "amdgpu", Timeline: "gfx", Ring: "gfx", Fence: event.FenceKey{Context: 4929, Seqno: 3200}, JobID: 3489726}},
		// the job's finished fence is context 123 ...
		{10, event.Event{Kind: event.JobRun, Time: 630659230528000, CPU: 3, TID: 199, Comm: "sdma0",
			Name: "amdgpu_sched_run_job", Driver: "amdgpu", Timeline: "sdma0", Ring: "sdma0", Fence: event.FenceKey{Context: 123, Seqno: 1735030}, JobID: 1892797}},
		// ... and its scheduled fence (context−1) signals as it runs: decoded as printed.
		{11, event.Event{Kind: event.FenceSignaled, Time: 630659230531000, CPU: 3, TID: 199, Comm: "sdma0",
			Name: "dma_fence_signaled", Driver: "amd_sched", Timeline: "sdma0", Fence: event.FenceKey{Context: 122, Seqno: 1735030}}},
	}
	for _, tt := range tests {
		d := NewDecoder()
		var ev event.Event
		if !d.Decode(lines[tt.lineNo-1], tt.lineNo, &ev) {
			t.Errorf("line %d not decoded: %v", tt.lineNo, d.Stats())
			continue
		}
		if ev != tt.want {
			t.Errorf("line %d:\n got %+v\nwant %+v", tt.lineNo, ev, tt.want)
		}
	}
}

// The full capture (committed gzipped) adds 43806 sched_switch lines: unknown, counted.
func TestFullCaptureCounts(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the full capture is 53509 lines")
	}
	_, d := decodeAll(readLines(t, "gpuvis_amdgpu_4.11_full.trace-cmd-report.txt.gz"))
	s := d.Stats()
	if got := countsByKind(s); !reflect.DeepEqual(got, gpuOnlyKinds) {
		t.Errorf("events by kind = %v, want %v", got, gpuOnlyKinds)
	}
	want := map[string]uint64{"sched_switch": 43806, "drm_vblank_event": 247, "amdgpu_ttm_bo_move": 2, "amdgpu_vm_flush": 1}
	if !reflect.DeepEqual(s.Unknown, want) || s.Malformed != 0 || d.Headers() != 2 {
		t.Errorf("unknown %v malformed %d headers %d; want %v, 0, 2", s.Unknown, s.Malformed, d.Headers(), want)
	}
}
