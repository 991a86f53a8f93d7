//go:build linux

package probe

// A driver's own event says which driver it is (Event.Driver) whichever source it came
// from: the assembler's precedence between a driver's events and the scheduler's (amdgpu's
// queue and run events yield to drm_sched's) reads it, so live and replay must agree. The
// oracle for replay is the text decoder reading real amdgpu lines of a trace-cmd capture;
// the live side is the record the tp_btf program sends for the same event.

import (
	"testing"

	"github.com/ghostdriver/ghostdriver/internal/event"
	"github.com/ghostdriver/ghostdriver/internal/eventdef"
	"github.com/ghostdriver/ghostdriver/internal/ftrace"
)

// Two lines of testdata/captures/gpuvis_amdgpu_4.11_gpu_only.trace-cmd-report.txt (lines 9, 10).
var amdgpuLines = []struct {
	line string
	hook commonHook
}{
	{"    RenderThread-25155 [003] 630659.133157: amdgpu_cs_ioctl:      sched_job=3489726, timeline=gfx, context=4929, seqno=3200, ring_name=ffff91cb1ab1bdd0, num_ibs=1",
		commonHook(40)},
	{"           sdma0-199   [003] 630659.230528: amdgpu_sched_run_job: sched_job=1892797, timeline=sdma0, context=123, seqno=1735030, ring_name=ffff91cb1ab1d170, num_ibs=1",
		commonHook(41)},
}

func TestLiveAndReplayAmdgpuEventsNameTheirDriver(t *testing.T) {
	text := ftrace.NewDecoder()
	for _, c := range amdgpuLines {
		var replayed event.Event
		if !text.Decode([]byte(c.line), 1, &replayed) {
			t.Fatalf("the text decoder did not decode %q", c.line)
		}
		if replayed.Driver == "" {
			t.Fatalf("%s: the text decoder gives no driver", replayed.Name)
		}
		// The record drivers.c's amdgpu programs send: the scheduler job's finished fence.
		r := commonRecord{Ts: uint64(replayed.Time), Hook: uint16(c.hook), JobId: replayed.JobID,
			FenceCtx: replayed.Fence.Context, FenceSeqno: replayed.Fence.Seqno,
			Flags: uint8(commonRecordFlagRF_HAS_FENCE)}
		setComm(&r.Ring, replayed.Timeline)
		var live event.Event
		if err := (&decoder{}).decode(sampleBytes(&r), &live); err != nil {
			t.Fatalf("hook %d: %v", c.hook, err)
		}
		if live.Name != replayed.Name || live.Kind != replayed.Kind {
			t.Fatalf("hook %d decodes to %s (%v), the line to %s (%v)", c.hook, live.Name, live.Kind, replayed.Name, replayed.Kind)
		}
		if live.Driver != replayed.Driver {
			t.Errorf("%s: live Driver %q, replay Driver %q", live.Name, live.Driver, replayed.Driver)
		}
	}
}

// Every driver hook, both record modes' header: the row's driver.
func TestEveryDriverHookNamesItsDriver(t *testing.T) {
	for _, e := range eventdef.Hooks() {
		info, ok := lookupHook(e.Hook.Value)
		if !ok {
			t.Errorf("%s: hook %d not in the hook table", e.Hook.Event, e.Hook.Value)
			continue
		}
		if ev := eventHeader(info, 1, 0, 0); ev.Driver != e.Driver {
			t.Errorf("%s: live Driver %q, the table's %q", e.Hook.Event, ev.Driver, e.Driver)
		}
	}
}

// The core's hooks (enum hook, ghostdriver.h) keep out of the drivers' blocks
// (eventdef.FirstDriverHook, one block of ten per driver; 80..89 the core's again).
func TestCoreHookValuesLeaveTheDriversBlocks(t *testing.T) {
	drivers := map[commonHook]bool{}
	for _, e := range eventdef.Hooks() {
		drivers[commonHook(e.Hook.Value)] = true
	}
	for h, info := range hookTable {
		if drivers[h] {
			continue
		}
		if int(h) >= eventdef.FirstDriverHook && eventdef.HookBlock(uint16(h)) != 80 {
			t.Errorf("core hook %s = %d is in the drivers' blocks (from %d; 80..89 is the core's)", info.name, h, eventdef.FirstDriverHook)
		}
	}
}
