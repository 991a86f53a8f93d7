// msm records of the tp_btf programs (bpf/drivers.c): the GPU stamps and the submitter
// travel in fields the other hooks use otherwise, and reach the same Event fields as the
// text decoder fills from the tracepoints' own print formats.
package probe

import (
	"testing"

	"github.com/ghostdriver/ghostdriver/internal/event"
)

func TestDecodeMsmRecords(t *testing.T) {
	var d decoder
	var ev event.Event

	r := commonRecord{Hook: uint16(commonHookHOOK_MSM_GPU_SUBMIT), PidTgid: 1440<<32 | 1453, JobId: 2081, Arg: 0, Cmd: 1453}
	if err := d.decode(rawRecord(r), &ev); err != nil {
		t.Fatal(err)
	}
	if ev.Kind != event.MsmSubmit || ev.JobID != 2081 || ev.Ring != "0" || ev.Submitter != 1453 || ev.PID != 1440 || ev.TID != 1453 {
		t.Errorf("submit: %+v", ev)
	}

	r = commonRecord{Hook: uint16(commonHookHOOK_MSM_GPU_SUBMIT_FLUSH), JobId: 2081, FenceSeqno: 16665, Arg: 0,
		DepCtx: 1083423501, Flags: uint8(commonRecordFlagRF_HAS_FENCE)}
	if err := d.decode(rawRecord(r), &ev); err != nil {
		t.Fatal(err)
	}
	if ev.Kind != event.MsmSubmitFlush || ev.GPUTicks != 1083423501 || ev.GPUStart != 0 || ev.Dep != (event.FenceKey{}) ||
		ev.Fence != (event.FenceKey{Seqno: 16665}) {
		t.Errorf("flush: %+v", ev)
	}

	r = commonRecord{Hook: uint16(commonHookHOOK_MSM_GPU_SUBMIT_RETIRED), JobId: 2081, FenceSeqno: 16665, Arg: 0,
		DepCtx: 1083423660, DepSeqno: 1083425922, Flags: uint8(commonRecordFlagRF_HAS_FENCE)}
	if err := d.decode(rawRecord(r), &ev); err != nil {
		t.Fatal(err)
	}
	if ev.Kind != event.MsmSubmitRetired || ev.GPUStart != 1083423660 || ev.GPUEnd != 1083425922 || ev.GPUTicks != 0 ||
		ev.Dep != (event.FenceKey{}) {
		t.Errorf("retired: %+v", ev)
	}
}
