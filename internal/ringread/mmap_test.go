//go:build linux

// The in-place reader (mmap.go) on a ring laid out in ordinary memory, and its wake-up.

package ringread

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/cilium/ebpf/ringbuf"
	"golang.org/x/sys/unix"
)

// A ring laid out as the kernel lays it out (8-byte headers, length word with BUSY and
// DISCARD bits) in ordinary memory: BlockedAt must see an uncommitted record where reading
// stopped, and nothing once it is committed or when the ring is empty.
func TestBlockedAtSeesAnUncommittedRecord(t *testing.T) {
	data := make([]byte, 2*4096) // the data pages, mapped twice in a row by the kernel
	var prod uintptr
	r := &Mmap{data: data, mask: 4096 - 1, prodPos: &prod, epfd: -1, evfd: -1}
	if _, blocked := r.BlockedAt(); blocked {
		t.Fatal("an empty ring is not blocked")
	}
	hdr := (*uint32)(unsafe.Pointer(&data[0]))
	atomic.StoreUint32(hdr, ringBusyBit|16) // reserved, 16 bytes, being written
	atomic.StoreUintptr(&prod, 8+16)
	pos, blocked := r.BlockedAt()
	if !blocked || pos != 0 {
		t.Fatalf("BlockedAt = %d, %v with a reserved record at 0", pos, blocked)
	}
	atomic.StoreUint32(hdr, 16) // committed
	if _, blocked := r.BlockedAt(); blocked {
		t.Fatal("a committed record does not block")
	}
	var rec ringbuf.Record
	r.SetDeadline(time.Now().Add(time.Second))
	if err := r.ReadInto(&rec); err != nil || len(rec.RawSample) != 16 {
		t.Fatalf("ReadInto: %v, %d bytes", err, len(rec.RawSample))
	}
	// The next record, reserved after the first, at position 24.
	atomic.StoreUint32((*uint32)(unsafe.Pointer(&data[24])), ringBusyBit|8)
	atomic.StoreUintptr(&prod, 24+8+8)
	if pos, blocked := r.BlockedAt(); !blocked || pos != 24 {
		t.Fatalf("BlockedAt = %d, %v with a reserved record at 24", pos, blocked)
	}
	r.closed.Store(true)
	if _, blocked := r.BlockedAt(); blocked {
		t.Fatal("a closed ring reports nothing")
	}
}

// memoryMmap is an Mmap over ordinary memory with its own epoll and eventfd (no ring
// buffer map: the map's descriptor is never readable), for the wake-up's tests.
func memoryMmap(t *testing.T) (*Mmap, []byte, *uintptr) {
	t.Helper()
	data := make([]byte, 2*4096)
	prod := new(uintptr)
	cons := new(uintptr)
	r := &Mmap{data: data, mask: 4096 - 1, prodPos: prod, consPos: cons, publishEvery: 1024, epfd: -1, evfd: -1}
	var err error
	if r.epfd, err = unix.EpollCreate1(unix.EPOLL_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	if r.evfd, err = unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK); err != nil {
		t.Fatal(err)
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(r.evfd)}
	if err := unix.EpollCtl(r.epfd, unix.EPOLL_CTL_ADD, r.evfd, &ev); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(r.epfd); unix.Close(r.evfd) })
	return r, data, prod
}

// Flush (WakeOnCancel) ends a wait a minute long at once: the records committed are read
// first, then ErrFlushed, once; the next wait waits again (the wake-up is taken back).
func TestMmapFlushEndsTheWait(t *testing.T) {
	r, data, prod := memoryMmap(t)
	got := make(chan error, 1)
	var rec ringbuf.Record
	r.SetDeadline(time.Now().Add(time.Minute))
	go func() { got <- r.ReadInto(&rec) }()
	time.Sleep(20 * time.Millisecond)
	atomic.StoreUint32((*uint32)(unsafe.Pointer(&data[0])), 16) // a committed 16-byte record, no wake-up
	atomic.StoreUintptr(prod, 8+16)
	if err := r.Flush(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-got:
		if err != nil || len(rec.RawSample) != 16 {
			t.Fatalf("woken ReadInto: %v, %d bytes; want the committed record first", err, len(rec.RawSample))
		}
	case <-time.After(5 * time.Second):
		t.Fatal("ReadInto still waits 5s after Flush (deadline a minute away)")
	}
	if err := r.ReadInto(&rec); err != ringbuf.ErrFlushed {
		t.Fatalf("after the records: %v, want ErrFlushed", err)
	}
	begin := time.Now()
	r.SetDeadline(begin.Add(50 * time.Millisecond))
	if err := r.ReadInto(&rec); err == nil || err == ringbuf.ErrFlushed {
		t.Fatalf("the next wait: %v, want its deadline", err)
	}
	if d := time.Since(begin); d < 40*time.Millisecond {
		t.Errorf("the next wait ended after %v, before its 50ms deadline: the wake-up was not taken back", d)
	}
	// WakeOnCancel uses it.
	ctx, cancel := context.WithCancel(context.Background())
	stop := New(r).WakeOnCancel(ctx)
	cancel()
	time.Sleep(10 * time.Millisecond)
	if stop() {
		t.Error("WakeOnCancel did not wake the in-place reader on cancellation")
	}
}
