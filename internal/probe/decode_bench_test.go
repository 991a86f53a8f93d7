//go:build linux

package probe

import (
	"testing"
	"unsafe"

	"github.com/ghostdriver/ghostdriver/internal/event"
)

// BenchmarkDecodeRecords: the events-mode decoder on the three record kinds a followed
// ioctl and a job's fences produce (a submit ioctl's enter, its exit, a dma_fence signal),
// from 8-byte-aligned buffers as the ring hands them over.
func BenchmarkDecodeRecords(b *testing.B) {
	enter := commonIoctlEnterRecord{Ts: 1, PidTgid: 7<<32 | 7, Fd: 5, Cmd: 0xc0186444, Hook: uint8(commonHookHOOK_SYS_ENTER_IOCTL),
		Comm: cstr("app"), Driver: cstr("amdgpu")}
	exit := commonIoctlExitRecord{Ts: 2, PidTgid: 7<<32 | 7, Fd: 5, Cmd: 0xc0186444, Hook: uint16(commonHookHOOK_SYS_EXIT_IOCTL)}
	fence := commonFenceRecord{Ts: 3, FenceCtx: 9, FenceSeqno: 1, Hook: uint16(commonHookHOOK_DMA_FENCE_SIGNALED),
		Flags: uint8(commonRecordFlagRF_HAS_FENCE | commonRecordFlagRF_FENCE_WIDE)}
	samples := [][]byte{aligned(&enter), aligned(&exit), aligned(&fence)}
	var d decoder
	var ev event.Event
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := d.decode(samples[i%3], &ev); err != nil {
			b.Fatal(err)
		}
	}
}

// aligned copies a record into a uint64-backed buffer.
func aligned[T any](v *T) []byte {
	n := int(unsafe.Sizeof(*v))
	buf := make([]uint64, (n+7)/8)
	out := unsafe.Slice((*byte)(unsafe.Pointer(&buf[0])), n)
	copy(out, unsafe.Slice((*byte)(unsafe.Pointer(v)), n))
	return out
}
