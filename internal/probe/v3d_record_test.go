//go:build linux

// v3d records of the tp_btf programs (bpf/drivers.c): the queue of v3d_submit_cl in ring,
// the DRM minor index in dev, the seqno in the fence: the Event fields the text decoder
// fills from the same tracepoints' print formats (internal/ftrace/v3d_test.go).

package probe

import (
	"testing"

	"github.com/ghostdriver/ghostdriver/internal/event"
)

func TestDecodeV3DRecords(t *testing.T) {
	var d decoder
	var ev event.Event
	flags := uint8(commonRecordFlagRF_HAS_FENCE | commonRecordFlagRF_FENCE_WIDE)
	for _, c := range []struct {
		hook commonHook
		ring string
		kind event.Kind
	}{
		{commonHookHOOK_V3D_SUBMIT_CL, "RCL", event.V3DSubmitCL},
		{commonHookHOOK_V3D_RCL_IRQ, "", event.V3DRenderIRQ},
		{commonHookHOOK_V3D_SUBMIT_CSD, "", event.V3DSubmitCSD},
		{commonHookHOOK_V3D_CACHE_CLEAN_END, "", event.V3DCacheCleanEnd},
	} {
		r := commonRecord{Hook: uint16(c.hook), FenceSeqno: 1 << 33, Flags: flags, Ring: cstr16(c.ring), Dev: cstr16("0")}
		if err := d.decode(rawRecord(r), &ev); err != nil {
			t.Fatal(err)
		}
		if ev.Kind != c.kind || ev.Ring != c.ring || ev.Device != "0" || ev.Fence != (event.FenceKey{Seqno: 1 << 33}) {
			t.Errorf("%v: %+v", c.kind, ev)
		}
	}
}
