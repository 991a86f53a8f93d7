//go:build linux

// The ring's reader for the sources that read a copy of each record: cilium/ebpf's
// ringbuf.Reader, made safe to poll across Close.

package ringread

import (
	"sync"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/ringbuf"
)

// Reader is cilium/ebpf's ringbuf.Reader whose AvailableBytes may run while or after
// Close does. cilium's reads the ring's mapped positions without its lock and has no ring
// after Close (a nil dereference, or a read of unmapped pages), and Shutdown closes the
// sources while their Run may be between two polls: handing a poll's events over, about
// to start the next. After Close, AvailableBytes is 0 and ReadInto returns ErrClosed.
type Reader struct {
	*ringbuf.Reader
	mu     sync.Mutex // held by AvailableBytes while it reads the ring, and to mark it closed
	closed bool
}

var _ Ring = (*Reader)(nil)

// NewReader returns a Reader of the ring buffer map m (ringbuf.NewReader).
func NewReader(m *ebpf.Map) (*Reader, error) {
	rd, err := ringbuf.NewReader(m)
	if err != nil {
		return nil, err
	}
	return &Reader{Reader: rd}, nil
}

// AvailableBytes is what the kernel has committed or reserved beyond what was read; 0
// once Close has begun.
func (r *Reader) AvailableBytes() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return 0
	}
	return r.Reader.AvailableBytes()
}

// Close ends a wait at once and releases the ring (ringbuf.Reader.Close).
func (r *Reader) Close() error {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	return r.Reader.Close()
}
