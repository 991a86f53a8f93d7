// virtio_gpu records of the tp_btf programs (bpf/drivers.c): the device and virtqueue
// index and the command type travel in fd, arg and cmd, and reach the Event fields the
// text decoder fills from the 7.3 TP_printk (vdev=0 vq=0 … type=0x207 … fence_id=105 …
// seqno=215).

package probe

import (
	"testing"

	"github.com/ghostdriver/ghostdriver/internal/event"
)

func TestDecodeVirtioGPURecords(t *testing.T) {
	var d decoder
	var ev event.Event
	r := commonRecord{Hook: uint16(commonHookHOOK_VIRTIO_GPU_CMD_QUEUE), PidTgid: 185<<32 | 185, Fd: 0, Arg: 0, Cmd: 0x207,
		FenceSeqno: 105, JobId: 215, Flags: uint8(commonRecordFlagRF_HAS_FENCE)}
	if err := d.decode(rawRecord(r), &ev); err != nil {
		t.Fatal(err)
	}
	if ev.Kind != event.VirtioGPUCmdQueue || ev.Device != "0" || ev.Ring != "0" || ev.Cmd != 0x207 ||
		ev.Fence != (event.FenceKey{Seqno: 105}) || ev.JobID != 215 || ev.TID != 185 {
		t.Errorf("queue: %+v", ev)
	}
	// An unfenced response (fence_id 0: no RF_HAS_FENCE) on device 1's control queue.
	r = commonRecord{Hook: uint16(commonHookHOOK_VIRTIO_GPU_CMD_RESPONSE), PidTgid: 34<<32 | 34, Fd: 1, Arg: 0, Cmd: 0x1100, JobId: 216}
	if err := d.decode(rawRecord(r), &ev); err != nil {
		t.Fatal(err)
	}
	if ev.Kind != event.VirtioGPUCmdResponse || ev.Device != "1" || ev.Ring != "0" || ev.Cmd != 0x1100 || !ev.Fence.IsZero() || ev.JobID != 216 {
		t.Errorf("response: %+v", ev)
	}
}
