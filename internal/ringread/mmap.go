//go:build linux

// The reader of a BPF ring buffer that reads records in place (the DRM events mode's).
//
// cilium/ebpf's ringbuf.Reader copies every sample into the caller's buffer, takes a mutex
// and publishes the consumer position once per record. The last is the costly one: the
// kernel reads the consumer position on every bpf_ringbuf_reserve, so each store moves
// that cache line to the reading CPU and back on the producer's next reserve. This reader
// hands out the sample where it lies in the mapped ring (valid until the next ReadInto)
// and publishes the consumer position only every PublishBytes (a quarter of a smaller
// ring) and before it waits, so the kernel sees space freed a little later (at most
// PublishBytes of an 8 MiB ring) and the line moves once per many records. The layout and the ordering are the kernel's
// (kernel/bpf/ringbuf.c): a consumer page (consumer_pos, read-write), a producer page
// (producer_pos) and the data pages mapped twice in a row so a record never wraps; each
// record has an 8-byte header whose length word carries BUSY (reserved, not committed)
// and DISCARD bits, written with release semantics after the record's bytes.
//
// Waiting is an epoll on the map's descriptor (readable when the kernel wakes readers)
// with the deadline as timeout, and an eventfd that Close writes to end a wait at once.
// The programs commit most records with BPF_RB_NO_WAKEUP (bpf/include/ghostdriver.h wakes
// the reader only once a batch has gathered), so a wait can end at its deadline with
// records committed meanwhile: the ring is read to its end once more before the deadline
// is reported, as cilium's reader does. The live reader declares everything stamped
// before the poll began seen once the deadline is reported; a record left behind then
// would reach the assembler behind its watermark. Flush ends a wait at once, as cilium's
// reader's does (WakeOnCancel).

package ringread

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/ringbuf"
	"golang.org/x/sys/unix"
)

const (
	ringBusyBit    = 1 << 31 // BPF_RINGBUF_BUSY_BIT
	ringDiscardBit = 1 << 30 // BPF_RINGBUF_DISCARD_BIT
	// PublishBytes: consumed bytes after which the consumer position is published
	// even while records keep coming (a quarter of the ring where that is less: a small
	// ring must not stay full until the reader has caught up).
	PublishBytes = 64 << 10
)

// Mmap is a Ring over the mapped ring buffer. One goroutine reads; Close and Flush may be
// called from another.
type Mmap struct {
	consPage, data []byte
	consPos        *uintptr
	prodPos        *uintptr
	mask           uintptr
	pos            uintptr // consumed up to here
	pub            uintptr // published up to here
	publishEvery   uintptr // PublishBytes, or a quarter of a smaller ring
	epfd, evfd     int
	deadline       time.Time
	expired        bool // the wait reached the deadline: report it once caught up
	events         [2]unix.EpollEvent

	flushed atomic.Bool // Flush was called: the wait it ends returns ringbuf.ErrFlushed

	closed    atomic.Bool
	users     atomic.Int32 // 1 while the reader may use a record (from ReadInto to the next)
	held      bool         // the reader's side of users
	unmapOnce sync.Once
	prodPage  []byte
}

var _ Ring = (*Mmap)(nil)

// NewMmap maps the ring buffer map m for reading in place.
func NewMmap(m *ebpf.Map) (*Mmap, error) {
	size := int(m.MaxEntries())
	if m.Type() != ebpf.RingBuf || size == 0 || size&(size-1) != 0 {
		return nil, fmt.Errorf("ring buffer map: type %s, size %d", m.Type(), size)
	}
	page := os.Getpagesize()
	fd := m.FD()
	cons, err := unix.Mmap(fd, 0, page, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("mmap consumer page: %w", err)
	}
	prod, err := unix.Mmap(fd, int64(page), page+2*size, unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		unix.Munmap(cons)
		return nil, fmt.Errorf("mmap data pages: %w", err)
	}
	r := &Mmap{consPage: cons, prodPage: prod, data: prod[page:], mask: uintptr(size - 1),
		consPos: (*uintptr)(unsafe.Pointer(&cons[0])), prodPos: (*uintptr)(unsafe.Pointer(&prod[0])), epfd: -1, evfd: -1}
	r.pos = atomic.LoadUintptr(r.consPos)
	r.pub = r.pos
	r.publishEvery = min(PublishBytes, uintptr(size/4))
	if err := r.openPoll(fd); err != nil {
		r.unmap()
		return nil, err
	}
	return r, nil
}

func (r *Mmap) openPoll(fd int) (err error) {
	if r.epfd, err = unix.EpollCreate1(unix.EPOLL_CLOEXEC); err != nil {
		return fmt.Errorf("epoll: %w", err)
	}
	if r.evfd, err = unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK); err != nil {
		return fmt.Errorf("eventfd: %w", err)
	}
	for _, f := range []int{fd, r.evfd} {
		ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(f)}
		if err := unix.EpollCtl(r.epfd, unix.EPOLL_CTL_ADD, f, &ev); err != nil {
			return fmt.Errorf("epoll_ctl: %w", err)
		}
	}
	return nil
}

func (r *Mmap) SetDeadline(t time.Time) { r.deadline, r.expired = t, false }

// AvailableBytes is what the kernel has committed or reserved beyond what was read (the
// reader's goroutine only).
func (r *Mmap) AvailableBytes() int {
	if r.closed.Load() {
		return 0
	}
	return int(atomic.LoadUintptr(r.prodPos) - r.pos)
}

// ReadInto sets rec.RawSample to the next record, in place: it stays valid until the next
// ReadInto or Release (Close does not unmap it before then). It waits until the deadline
// for one; once the deadline has passed it returns the records committed by then and
// os.ErrDeadlineExceeded when none is left; ringbuf.ErrFlushed once for a Flush that ended
// (or came before) a wait; ringbuf.ErrClosed after Close.
func (r *Mmap) ReadInto(rec *ringbuf.Record) error {
	if !r.held {
		r.users.Add(1)
		r.held = true
	}
	for {
		if r.closed.Load() {
			r.release()
			return ringbuf.ErrClosed
		}
		prod := atomic.LoadUintptr(r.prodPos)
		for r.pos != prod {
			if prod-r.pos < 8 {
				r.release()
				return fmt.Errorf("read record header: %d bytes left", prod-r.pos)
			}
			cur := r.pos
			start := cur & r.mask
			hdr := atomic.LoadUint32((*uint32)(unsafe.Pointer(&r.data[start])))
			if hdr&ringBusyBit != 0 {
				break // reserved, not committed yet: wait as for an empty ring
			}
			n := uintptr(hdr &^ (ringBusyBit | ringDiscardBit))
			next := cur + 8 + (n+7)&^7
			if next-cur > prod-cur {
				r.release()
				return fmt.Errorf("read record: %d bytes announced, %d left", n, prod-cur-8)
			}
			r.pos = next
			if next-r.pub >= r.publishEvery && cur != r.pub {
				// Everything before this record is consumed (the caller is done with it).
				atomic.StoreUintptr(r.consPos, cur)
				r.pub = cur
			}
			if hdr&ringDiscardBit != 0 {
				continue
			}
			rec.RawSample = r.data[start+8 : start+8+n : start+8+n]
			rec.Remaining = int(prod - next)
			return nil
		}
		// Caught up (or at an uncommitted record): give the space back, then wait (the
		// map's descriptor is readable while the kernel's consumer position is behind).
		if r.pos != r.pub {
			atomic.StoreUintptr(r.consPos, r.pos)
			r.pub = r.pos
		}
		if r.expired {
			r.release()
			return os.ErrDeadlineExceeded
		}
		if r.flushed.Swap(false) {
			return ringbuf.ErrFlushed
		}
		if err := r.wait(); err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				r.expired = true // look once more: records committed without a wakeup
				continue
			}
			r.release()
			return err
		}
	}
}

// BlockedAt says whether reading stopped at a record the kernel has reserved and not yet
// committed, and where: its producer is still writing it, or was stalled while writing it
// (a VM's vCPU preempted by the host in the middle of a program). That record and every
// one behind it are unreadable until it is committed. The reader's goroutine only.
func (r *Mmap) BlockedAt() (uint64, bool) {
	r.users.Add(1)
	defer r.leave()
	if r.closed.Load() {
		return 0, false
	}
	prod := atomic.LoadUintptr(r.prodPos)
	if r.pos == prod || prod-r.pos < 8 {
		return 0, false
	}
	hdr := atomic.LoadUint32((*uint32)(unsafe.Pointer(&r.data[r.pos&r.mask])))
	return uint64(r.pos), hdr&ringBusyBit != 0
}

// Release says the caller is done with the last record (ReadInto does it on its errors):
// a reader that stops reading calls it, so that Close may unmap the ring.
func (r *Mmap) Release() { r.release() }

func (r *Mmap) release() {
	if r.held {
		r.held = false
		r.leave()
	}
}

// wait blocks until the kernel wakes readers, Close is called or the deadline passes.
func (r *Mmap) wait() error {
	for {
		d := time.Until(r.deadline)
		if r.deadline.IsZero() {
			d = -1
		} else if d <= 0 {
			return os.ErrDeadlineExceeded
		}
		ms := -1
		if d >= 0 {
			ms = int((d + time.Millisecond - 1) / time.Millisecond)
		}
		n, err := unix.EpollWait(r.epfd, r.events[:], ms)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return fmt.Errorf("epoll_wait: %w", err)
		}
		for _, ev := range r.events[:n] {
			if ev.Fd == int32(r.evfd) && !r.closed.Load() {
				r.drainEventfd() // a Flush's: taken back, or the next wait would not wait
			}
		}
		if n > 0 || r.deadline.IsZero() {
			return nil // readable, or woken by Close or Flush: the caller looks again
		}
	}
}

// leave drops the reader's use; the last user after Close unmaps.
func (r *Mmap) leave() {
	if r.users.Add(-1) == 0 && r.closed.Load() {
		r.unmap()
	}
}

// Flush ends a wait at once (from any goroutine): the records committed are read, then
// ReadInto returns ringbuf.ErrFlushed, once; a Flush while no wait is under way ends the
// next one. cilium's Reader.Flush, so WakeOnCancel wakes this reader too.
func (r *Mmap) Flush() error {
	r.users.Add(1) // the eventfd stays open until this write is done
	defer r.leave()
	if r.closed.Load() {
		return ringbuf.ErrClosed
	}
	r.flushed.Store(true)
	var one = [8]byte{1}
	unix.Write(r.evfd, one[:])
	return nil
}

// drainEventfd takes back a Flush's write (the reader's goroutine, in its wait).
func (r *Mmap) drainEventfd() {
	var b [8]byte
	unix.Read(r.evfd, b[:])
}

// Close ends a wait at once and makes ReadInto return ringbuf.ErrClosed. The mapping is
// released by Close, or, while the reader holds a record, when it lets go of it.
func (r *Mmap) Close() error {
	if r.closed.Swap(true) {
		return nil
	}
	if r.evfd >= 0 {
		var one = [8]byte{1}
		unix.Write(r.evfd, one[:])
	}
	if r.users.Load() == 0 {
		r.unmap()
	}
	return nil
}

func (r *Mmap) unmap() {
	r.unmapOnce.Do(func() {
		unix.Munmap(r.prodPage)
		unix.Munmap(r.consPage)
		for _, fd := range []int{r.epfd, r.evfd} {
			if fd >= 0 {
				unix.Close(fd)
			}
		}
	})
}
