// The classic rung on v3d's events, with format files written from v3d_trace.h
// (internal/ftrace/testdata/formats/v3d_trace_h_layout.txt): the seqno events decode
// from their raw entries; v3d_submit_cl's print fmt (a ternary) is refused with the
// reason, leaving its tp_btf program the only live hook of the bin and render starts.

package probe

import (
	"strings"
	"testing"

	"github.com/ghostdriver/ghostdriver/internal/event"
)

func TestClassicV3DFormats(t *testing.T) {
	blocks := readFormats(t, "v3d_trace_h_layout.txt")
	if _, err := newClassicEvent("v3d", "v3d_submit_cl", blocks["v3d_submit_cl"].text); err == nil ||
		!strings.Contains(classicReason("v3d/v3d_submit_cl", err), "cannot decode its raw entries") {
		t.Errorf("v3d_submit_cl: %v, want refused", err)
	}
	for _, c := range []struct {
		name string
		vals map[string]any
		kind event.Kind
		seq  uint64
	}{
		{"v3d_bcl_irq", map[string]any{"dev": uint64(0), "seqno": uint64(1) << 40}, event.V3DBinIRQ, 1 << 40},
		{"v3d_cache_clean_begin", map[string]any{"dev": uint64(0)}, event.V3DCacheCleanBegin, 0},
	} {
		ce, err := newClassicEvent("v3d", c.name, blocks[c.name].text)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		h, ok := classicHook(c.name)
		if !ok {
			t.Fatalf("%s: no hook", c.name)
		}
		var evs classicEvents
		evs.add(h, ce)
		d := decoder{classic: newClassicDecoder(&evs)}
		var ev event.Event
		err = d.decode(rawSample(h, 1, 1, 0, "x", entry(t, ce.layout(), c.vals)), &ev)
		if err != nil || ev.Kind != c.kind || ev.Fence.Seqno != c.seq || ev.Device != "0" || ev.Driver != "v3d" {
			t.Errorf("%s: %+v %v", c.name, ev, err)
		}
	}
}
