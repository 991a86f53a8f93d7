//go:build linux

// powervr, ivpu and amdxdna records of the tp_btf programs (bpf/drivers.c): the Event
// fields the text decoder fills from the same tracepoints' print formats
// (internal/ftrace/accel_test.go).

package probe

import (
	"testing"

	"github.com/ghostdriver/ghostdriver/internal/event"
)

func TestDecodeAccelRecords(t *testing.T) {
	var d decoder
	var ev event.Event
	for _, c := range []struct {
		r                      commonRecord
		kind                   event.Kind
		driver, ring, text, dv string
		job, entity            uint64
		fence                  event.FenceKey
	}{
		{commonRecord{Hook: uint16(commonHookHOOK_PVR_JOB_CREATE), JobId: 0xaaaa, Entity: 0x5e6f, Ring: cstr16("fragment")},
			event.PVRJobCreate, "powervr", "fragment", "", "", 0xaaaa, 0x5e6f, event.FenceKey{}},
		{commonRecord{Hook: uint16(commonHookHOOK_PVR_JOB_SUBMIT_FW), JobId: 0xaaaa, FenceSeqno: 41, Flags: uint8(commonRecordFlagRF_HAS_FENCE)},
			event.PVRJobSubmitFW, "powervr", "", "", "", 0xaaaa, 0, event.FenceKey{Seqno: 41}},
		{commonRecord{Hook: uint16(commonHookHOOK_JOB), JobId: 17, Entity: 3, Arg: 0, Ring: cstr16("submit")},
			event.IVPUJob, "intel_vpu", "0", "submit", "", 17, 3, event.FenceKey{}},
		{commonRecord{Hook: uint16(commonHookHOOK_XDNA_JOB), FenceCtx: 12, FenceSeqno: 5, Ring: cstr16("hwctx.1"), Dev: cstr16("signaled fence"),
			Flags: uint8(commonRecordFlagRF_HAS_FENCE | commonRecordFlagRF_FENCE_WIDE)},
			event.XDNAJob, "amdxdna", "hwctx.1", "signaled fence", "", 0, 0, event.FenceKey{Context: 12, Seqno: 5}},
	} {
		if err := d.decode(rawRecord(c.r), &ev); err != nil {
			t.Fatal(err)
		}
		if ev.Kind != c.kind || ev.Driver != c.driver || ev.Ring != c.ring || ev.Text != c.text || ev.Device != c.dv ||
			ev.JobID != c.job || ev.Entity != c.entity || ev.Fence != c.fence {
			t.Errorf("%v: %+v", c.kind, ev)
		}
	}
}
