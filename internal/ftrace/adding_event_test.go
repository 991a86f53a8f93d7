// The checklist of docs/design.md ("Adding a driver event") run on a row the table has,
// xe_hw_fence_signal: without its row a line of it is an unknown event; with the row as
// the checklist writes it, lines in the kernel's own TP_printk formats decode to the
// fields its arguments name.

package ftrace

import (
	"reflect"
	"testing"

	"github.com/ghostdriver/ghostdriver/internal/event"
	"github.com/ghostdriver/ghostdriver/internal/eventdef"
)

// The row, as docs/design.md shows it: one entry of eventdef's table.
var xeHwFenceSignalRow = eventdef.Event{
	Names: []eventdef.Name{{Name: "xe_hw_fence_signal"}},
	Kind:  event.XeHwFenceSignal, KindName: "xe_hw_fence_signal",
	Driver: "xe", System: "xe",
	Formats: &eventdef.Family{Name: "xe hw fence", Formats: []eventdef.Format{
		{Printk: "ctx=0x%016llx, fence=%p, seqno=%u", Args: "fctx fence fseq", Src: "xe_trace.h 6.8 (index 78286750)"},
		{Printk: "dev=%s, ctx=0x%016llx, fence=%p, seqno=%u", Args: "dev fctx fence fseq", Src: "55defc10 (6.17), index 18550292"},
	}},
	Points: []eventdef.Point{eventdef.PointHWDone},
	Rule:   "by the xe fence pointer (the job's fence=%p) or hw fence key; standalone tf = th (xe_hw_fence_as_finished); assemble.xeHWSignal",
	Hook:   &eventdef.Hook{Value: 65, Event: "xe_hw_fence_signal", Kernels: "xe_trace.h since 6.8"},
}

func TestAddingADriverEvent(t *testing.T) {
	var without []eventdef.Event
	for _, e := range eventdef.Events() {
		if e.Names[0].Name == "xe_hw_fence_signal" {
			if !reflect.DeepEqual(e, xeHwFenceSignalRow) {
				t.Errorf("the table's row is not the one docs/design.md shows:\n%+v\n%+v", e, xeHwFenceSignalRow)
			}
			continue
		}
		without = append(without, e)
	}
	defer loadSpecs(events)

	// Lines in xe_trace.h's TP_printk of 6.8 and of 6.17 (dev= first).
	lines := []string{
		"   kworker/u64:3-412     [002] d.h1.  1000.000100: xe_hw_fence_signal: ctx=0x0000000000000152, fence=000000009b3f6a10, seqno=82",
		"   kworker/u64:3-412     [002] d.h1.  1000.000200: xe_hw_fence_signal: dev=0000:03:00.0, ctx=0x0000000000000152, fence=000000009b3f6a10, seqno=83",
	}
	loadSpecs(flatten(without))
	d := NewDecoder()
	var ev event.Event
	for i, l := range lines {
		if d.Decode([]byte(l), i+1, &ev) {
			t.Errorf("decoded without its row: %+v", ev)
		}
	}
	if got := d.Stats().Unknown["xe_hw_fence_signal"]; got != 2 {
		t.Errorf("without its row: %d unknown events, want 2", got)
	}

	loadSpecs(flatten(append(without, xeHwFenceSignalRow)))
	d = NewDecoder()
	for i, l := range lines {
		if !d.Decode([]byte(l), i+1, &ev) {
			t.Fatalf("line %d not decoded with the row: %+v", i+1, d.Stats())
		}
		want := event.FenceKey{Context: 0x152, Seqno: uint64(82 + i)}
		if ev.Kind != event.XeHwFenceSignal || ev.Driver != "xe" || ev.Name != "xe_hw_fence_signal" ||
			ev.Fence != want || ev.FencePtr != 0x9b3f6a10 || ev.Device != [...]string{"", "0000:03:00.0"}[i] {
			t.Errorf("line %d: %+v", i+1, ev)
		}
	}
}
