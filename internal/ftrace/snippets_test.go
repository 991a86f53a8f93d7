// Every block of captures/snippets_real_lines.txt: real lines from mail, issues and test
// files, each with its exact decoded outcome (an event, an unknown name, or malformed).
package ftrace

import (
	"bytes"
	"strings"
	"testing"

	"github.com/ghostdriver/ghostdriver/internal/event"
)

// outcome is what one line must decode to: an event, or a counted skip.
type outcome struct {
	ev        event.Event
	unknown   string // the name counted in Unknown
	malformed bool
	header    bool
}

func ev(e event.Event) outcome          { return outcome{ev: e} }
func unknown(n string) outcome          { return outcome{unknown: n} }
func fk(ctx, seq uint64) event.FenceKey { return event.FenceKey{Context: ctx, Seqno: seq} }

var malformed = outcome{malformed: true}

// snippetBlocks reads the file into blocks keyed by id ("S1"…), keeping every non-blank
// line that is not a comment.
func snippetBlocks(t *testing.T) map[string][][]byte {
	t.Helper()
	blocks := map[string][][]byte{}
	id := ""
	for _, l := range readLines(t, "snippets_real_lines.txt") {
		if bytes.HasPrefix(l, []byte("## ")) {
			id = strings.Fields(string(l))[1]
			blocks[id] = nil
			continue
		}
		if id == "" || bytes.HasPrefix(l, []byte("#")) || len(bytes.TrimSpace(l)) == 0 {
			continue
		}
		blocks[id] = append(blocks[id], l)
	}
	return blocks
}

var snippetWant = map[string][]outcome{
	// trace-cmd short form: no CPU column, 4 decimals; ring_name a pointer (≤5.4).
	"S1": {
		ev(event.Event{Kind: event.JobQueue, Time: 475_168_800_000, CPU: -1, TID: 2837, Comm: "SkinningApp", Name: "amdgpu_cs_ioctl",
			Driver: "amdgpu", Timeline: "gfx", Ring: "gfx", Fence: fk(249, 91446), JobID: 185904}),
		ev(event.Event{Kind: event.JobRun, Time: 475_168_900_000, CPU: -1, TID: 477, Comm: "gfx", Name: "amdgpu_sched_run_job",
			Driver: "amdgpu", Timeline: "gfx", Ring: "gfx", Fence: fk(249, 91446), JobID: 185904}),
		ev(event.Event{Kind: event.FenceSignaled, Time: 475_169_000_000, CPU: -1, TID: 0, Comm: "<idle>", Name: "fence_signaled",
			Driver: "amd_sched", Timeline: "gfx", Fence: fk(249, 91446)}),
	},
	// unmerged 2024 RFC format, two GPUs; the 5th line is cut off in the stored copy.
	"S2": {
		ev(event.Event{Kind: event.JobQueue, Time: 735_008_761_000, CPU: 16, TID: 6498, Comm: "umr:cs0", Name: "drm_sched_job",
			Ring: "gfx_0.0.0", Fence: fk(7914, 920), FenceWide: true, JobID: 51757}),
		ev(event.Event{Kind: event.JobRun, Time: 735_008_769_000, CPU: 26, TID: 11, Comm: "kworker/u128:0", Name: "drm_run_job",
			Device: "0000:0e:00.0", Ring: "gfx_0.0.0", Fence: fk(8442, 145), FenceWide: true, JobID: 328}),
		ev(event.Event{Kind: event.JobRun, Time: 735_008_776_000, CPU: 27, TID: 2108, Comm: "kworker/u128:2", Name: "drm_run_job",
			Device: "0000:0b:00.0", Ring: "gfx_0.0.0", Fence: fk(664, 17099), FenceWide: true, JobID: 51756}),
		ev(event.Event{Kind: event.JobQueue, Time: 735_008_782_000, CPU: 0, TID: 2504, Comm: "Xorg:cs0", Name: "drm_sched_job",
			Ring: "gfx_0.0.0", Fence: fk(664, 17100), FenceWide: true, JobID: 51758}),
		malformed, // "drm[... truncated in stored copy ...]"
	},
	"S3": {
		unknown("drm_mode_atomic_commit"),
		ev(event.Event{Kind: event.FenceUsedAsDep, Time: 2571_905_147_000, CPU: 18, TID: 1638, Comm: "gnome-shell", Name: "dma_fence_sync_to",
			Driver: "drm_sched", Timeline: "gfx_0.0.0", Fence: fk(270, 73240), Text: "dma_fence_chain_init"}),
		unknown("drm_mode_atomic_commit"),
		ev(event.Event{Kind: event.FenceUsedAsDep, Time: 2571_913_250_000, CPU: 18, TID: 1638, Comm: "gnome-shell", Name: "dma_fence_sync_to",
			Driver: "drm_sched", Timeline: "gfx_0.0.0", Fence: fk(270, 73241), Text: "dma_fence_chain_init"}),
		unknown("drm_vblank_event"),
		unknown("drm_vblank_event"),
	},
	// The mail wraps each event over three lines: none of the pieces is an event (the
	// re-joined lines are tested in TestSnippetS4Rejoined).
	"S4": {malformed, malformed, malformed, malformed, malformed, malformed, malformed, malformed},
	// Cut off after "ring=" inside a kernel WARNING.
	"S5": {malformed},
	// systrace with the TGID column.
	"S6": {
		ev(event.Event{Kind: event.FenceInit, Time: 505_064_394_000, CPU: 10, PID: 3214, TID: 3268, Comm: "test", Name: "dma_fence_init",
			Driver: "virtio_gpu", Timeline: "controlq", Fence: fk(1, 0)}),
		ev(event.Event{Kind: event.FenceSignaled, Time: 505_065_121_000, CPU: 2, PID: 109, TID: 109, Comm: "kworker/2:1", Name: "dma_fence_signaled",
			Driver: "virtio_gpu", Timeline: "controlq", Fence: fk(1, 109779)}),
		ev(event.Event{Kind: event.FenceInit, Time: 584509_195_956_000, CPU: 1, PID: 595, TID: 650, Comm: "HwBinder:595_2", Name: "fence_init",
			Driver: "sde_fence:crtc111:25602", Timeline: "crtc111", Fence: fk(3, 256022)}),
		ev(event.Event{Kind: event.FenceSignaled, Time: 584509_213_897_000, CPU: 1, PID: 247, TID: 247, Comm: "crtc_event:111", Name: "fence_signaled",
			Driver: "sde_fence:crtc111:25602", Timeline: "crtc111", Fence: fk(3, 256022)}),
	},
	// i915 on 3.x kernels (ChromeOS), spliced; trace-cmd layout without flags.
	"S7": {
		ev(event.Event{Kind: event.I915RequestRetire, Time: 18420_681_687_000, CPU: 1, TID: 1539, Comm: "chrome", Name: "i915_gem_request_retire",
			Driver: "i915", Device: "0", Ring: "1", Fence: fk(0, 1178152)}),
		ev(event.Event{Kind: event.I915RequestAdd, Time: 18422_955_688_000, CPU: 0, TID: 1539, Comm: "chrome", Name: "i915_gem_request_add",
			Driver: "i915", Device: "0", Ring: "1", Fence: fk(0, 1178364)}),
		ev(event.Event{Kind: event.I915RequestComplete, Time: 18422_956_832_000, CPU: 0, TID: 21833, Comm: "cat", Name: "i915_gem_request_complete",
			Driver: "i915", Device: "0", Ring: "1", Fence: fk(0, 1178364)}),
		ev(event.Event{Kind: event.I915RequestWaitBegin, Time: 18420_682_511_000, CPU: 1, TID: 1012, Comm: "X", Name: "i915_gem_request_wait_begin",
			Driver: "i915", Device: "0", Ring: "4", Fence: fk(0, 1178156)}),
		ev(event.Event{Kind: event.I915RequestWaitEnd, Time: 18422_765_707_000, CPU: 0, TID: 1012, Comm: "X", Name: "i915_gem_request_wait_end",
			Driver: "i915", Device: "0", Ring: "4", Fence: fk(0, 1178359)}),
		unknown("i915_gem_ring_flush"),
		ev(event.Event{Kind: event.I915RequestQueue, Time: 18422_955_660_000, CPU: 0, TID: 1539, Comm: "chrome", Name: "i915_gem_ring_dispatch",
			Driver: "i915", Device: "0", Ring: "1", Fence: fk(0, 1178364)}),
		unknown("i915_flip_request"),
		unknown("i915_flip_complete"),
		unknown("intel_gpu_freq_change"),
		unknown("drm_vblank_event"),
		unknown("drm_vblank_event"),
	},
	"S8": {
		ev(event.Event{Kind: event.I915RequestAdd, Time: 5630_695_055_000, CPU: 0, TID: 204, Comm: "weston", Name: "i915_gem_request_add",
			Driver: "i915", Device: "0", Ring: "0", Fence: fk(29, 333715)}),
		ev(event.Event{Kind: event.I915RequestIn, Time: 2007_747_787_000, CPU: 0, TID: 212, Comm: "weston", Name: "i915_gem_request_in",
			Driver: "i915", Device: "0", Ring: "0", Fence: fk(29, 118649)}),
		ev(event.Event{Kind: event.I915RequestAdd, Time: 370_958_786_000, CPU: 2, TID: 383, Comm: "glmark2-es2-way", Name: "i915_request_add",
			Driver: "i915", Device: "0", Ring: "0:0", Fence: fk(44, 17313)}),
		unknown("intel_gpu_freq_change"),
	},
}

func TestSnippets(t *testing.T) {
	blocks := snippetBlocks(t)
	if len(blocks) != len(snippetWant) {
		t.Errorf("file has blocks %d, test covers %d", len(blocks), len(snippetWant))
	}
	for id, want := range snippetWant {
		lines := blocks[id]
		if len(lines) != len(want) {
			t.Errorf("%s: %d lines, want %d outcomes", id, len(lines), len(want))
			continue
		}
		for i, l := range lines {
			checkOutcome(t, id, string(l), want[i])
		}
	}
}

// checkOutcome decodes line with a fresh decoder and checks it against want.
func checkOutcome(t *testing.T, where, line string, want outcome) {
	t.Helper()
	got, ok, d := decodeOne(line)
	s := d.Stats()
	switch {
	case want.malformed:
		if ok || s.Malformed != 1 {
			t.Errorf("%s: %q: want malformed, got ok=%v stats=%+v", where, line, ok, s)
		}
	case want.unknown != "":
		if ok || s.Unknown[want.unknown] != 1 || s.Malformed != 0 {
			t.Errorf("%s: %q: want unknown %q, got ok=%v stats=%+v", where, line, want.unknown, ok, s)
		}
	case want.header:
		if ok || d.Headers() != 1 || s.Malformed != 0 {
			t.Errorf("%s: %q: want header, got ok=%v stats=%+v", where, line, ok, s)
		}
	default:
		if !ok {
			t.Errorf("%s: %q: not decoded: %+v", where, line, s)
			return
		}
		if got != want.ev {
			t.Errorf("%s: %q:\n got %+v\nwant %+v", where, line, got, want.ev)
		}
		if s.EventsOf(got.Kind) != 1 {
			t.Errorf("%s: %q: kind not counted", where, line)
		}
	}
}

// S4 re-joined as the kernel printed each event on one line: before (≤5.4, ring_name
// a pointer) and after (≥5.5, a name) the 2019 fix.
func TestSnippetS4Rejoined(t *testing.T) {
	lines := snippetBlocks(t)["S4"]
	join := func(a, b, c []byte) string { return string(a) + " " + string(b) + " " + string(c) }
	before := join(lines[1], lines[2], lines[3])
	after := join(lines[5], lines[6], lines[7])
	checkOutcome(t, "S4 before", before, ev(event.Event{Kind: event.JobQueue, Time: 138_508_781_000, CPU: 2, TID: 1556,
		Comm: "amdgpu_test_kev", Name: "amdgpu_cs_ioctl", Driver: "amdgpu", Timeline: "gfx_0.0.0", Ring: "gfx_0.0.0",
		Fence: fk(177, 1), JobID: 8}))
	checkOutcome(t, "S4 after", after, ev(event.Event{Kind: event.JobQueue, Time: 370_703_783_000, CPU: 4, TID: 1506,
		Comm: "amdgpu_test_kev", Name: "amdgpu_cs_ioctl", Driver: "amdgpu", Timeline: "gfx_0.0.0", Ring: "gfx_0.0.0",
		Fence: fk(234, 2), JobID: 12}))
}
