// The consumer's side of the channel's byte ring, over any []byte holding the mapping
// (header page, then the ring): header validation, the header's fields, and Drain,
// which copies the pending frames out of the shared memory, checks their framing and
// hands them on. Platform-independent: tests and the fuzzer run it on Go slices.

package cupti

import (
	"encoding/binary"
	"errors"
	"fmt"
	"runtime/debug"
	"sync/atomic"
	"unsafe"
)

// ErrCorrupt is wrapped by every error Drain returns: the ring's bytes did not add up.
var ErrCorrupt = errors.New("corrupt CUPTI ring")

// ErrFault: an access to the mapping faulted (the process shrank its memfd below the
// mapping). The channel is unusable from then on.
var ErrFault = errors.New("the CUPTI channel's mapping faulted (its memfd shrank?)")

// drainChunk bounds one copy out of the shared memory: a large ring is drained in
// windows of this size (and the tail advanced after each), so the copy buffer stays
// small however large the rings are. A frame larger than a window (none the library
// writes today: a kernel frame is at most 1120 bytes) is copied whole on its own.
const drainChunk = 1 << 20

// Ring reads one channel. It is not safe for concurrent use: a channel has one
// consumer.
type Ring struct {
	mem   []byte // the mapping: header page, then ring
	ring  []byte // mem[HeaderSize : HeaderSize+size]
	size  uint64 // ring_size, as validated: later writes to the header are not read
	buf   []byte // the copy the frames are decoded from
	stats RingStats
}

// RingStats counts what Drain did.
type RingStats struct {
	Frames uint64 // frames handed on (not PAD)
	Pads   uint64 // PAD frames skipped
	Bytes  uint64 // ring bytes consumed, PAD included
	// Corrupt counts framing errors: head/tail out of range or misaligned, a frame
	// whose length is short, unaligned, past head or across the ring's end. The
	// frames the callback refused are counted by it (DecoderStats.Corrupt).
	Corrupt uint64
	// DroppedBytes are the pending bytes skipped after a corrupt frame (either kind).
	// A corrupt head/tail pair drops an unknown amount: not counted here.
	DroppedBytes uint64
}

// Add adds o's counts to s.
func (s *RingStats) Add(o RingStats) {
	s.Frames += o.Frames
	s.Pads += o.Pads
	s.Bytes += o.Bytes
	s.Corrupt += o.Corrupt
	s.DroppedBytes += o.DroppedBytes
}

// Frame is one frame as Drain hands it on. Body is the frame's bytes after its 8-byte
// head, padding included; it lies in the Ring's copy buffer, valid only during the call.
type Frame struct {
	Type  FrameType
	Flags uint16
	Body  []byte
}

// NewRing validates the header of mem (the whole mapping) and returns a Ring over it.
// mem must be 8-byte aligned (a mapping is page-aligned): head, tail and the header's
// counters are read and written with atomic operations in place.
func NewRing(mem []byte) (*Ring, error) {
	if binary.NativeEndian.Uint16([]byte{1, 0}) != 1 {
		return nil, errors.New("the CUPTI channel is little-endian and this host is not")
	}
	if len(mem) < HeaderSize {
		return nil, fmt.Errorf("CUPTI channel: the mapping is %d bytes, shorter than the %d-byte header page", len(mem), HeaderSize)
	}
	if uintptr(unsafe.Pointer(unsafe.SliceData(mem)))%8 != 0 {
		return nil, errors.New("CUPTI channel: the mapping is not 8-byte aligned")
	}
	le := binary.LittleEndian
	if m := mem[hdrMagic : hdrMagic+len(Magic)]; string(m) != Magic {
		return nil, fmt.Errorf("CUPTI channel: magic is %q, want %q", m, Magic)
	}
	if v := le.Uint32(mem[hdrVersion:]); v != Version {
		return nil, fmt.Errorf("CUPTI channel: version is %d, want %d", v, Version)
	}
	if v := le.Uint32(mem[hdrHeaderSize:]); v != HeaderSize {
		return nil, fmt.Errorf("CUPTI channel: header_size is %d, want %d", v, HeaderSize)
	}
	size := le.Uint64(mem[hdrRingSize:])
	if size < RingMin || size > RingMax {
		return nil, fmt.Errorf("CUPTI channel: ring_size is %d, outside [%d, %d]", size, RingMin, RingMax)
	}
	if size&(size-1) != 0 {
		return nil, fmt.Errorf("CUPTI channel: ring_size is %d, not a power of two", size)
	}
	if uint64(len(mem)) < HeaderSize+size {
		return nil, fmt.Errorf("CUPTI channel: the mapping is %d bytes, less than header_size %d + ring_size %d", len(mem), HeaderSize, size)
	}
	return &Ring{mem: mem, ring: mem[HeaderSize : HeaderSize+size], size: size}, nil
}

func (r *Ring) u32(off int) *uint32 { return (*uint32)(unsafe.Pointer(&r.mem[off])) }
func (r *Ring) u64(off int) *uint64 { return (*uint64)(unsafe.Pointer(&r.mem[off])) }

// Size is ring_size as validated by NewRing.
func (r *Ring) Size() uint64 { return r.size }

// Stats returns what Drain has counted.
func (r *Ring) Stats() RingStats { return r.stats }

// Drain hands fn every complete frame between tail and the head loaded at its start,
// in order, skipping PAD frames, and stores the new tail. The pending bytes are copied
// out of the mapping before they are looked at: the process may write over them while
// they are read, the copy is what gets checked and decoded.
//
// A framing error, or an error from fn (a frame whose body does not add up), drops
// every pending byte from there to head (tail = head) and returns an error wrapping
// ErrCorrupt; the ring is then usable again, the error is only to be reported. Drain
// returns how many frames fn was given.
func (r *Ring) Drain(fn func(Frame) error) (int, error) {
	head := atomic.LoadUint64(r.u64(hdrHead))
	tail := atomic.LoadUint64(r.u64(hdrTail))
	if head == tail {
		return 0, nil // also after a corrupt pair was resynchronized: counted once
	}
	if head%frameAlign != 0 || tail%frameAlign != 0 || head-tail > r.size {
		// head < tail wraps to a huge difference: one check for both directions.
		r.stats.Corrupt++
		atomic.StoreUint64(r.u64(hdrTail), head)
		return 0, fmt.Errorf("%w: head %d, tail %d, ring_size %d", ErrCorrupt, head, tail, r.size)
	}
	defer func() {
		if cap(r.buf) > drainChunk {
			r.buf = nil // a frame larger than a window was copied: not kept for every drain
		}
	}()
	frames := 0
	for tail != head {
		pos := tail & (r.size - 1)
		// Frames never cross the ring's end: what is pending up to it is one span.
		span := min(head-tail, r.size-pos)
		buf := r.copyOut(pos, min(span, drainChunk))
		alone := false // buf was copied for its first frame alone
		var off uint64 // consumed from buf
		for off < uint64(len(buf)) {
			h := buf[off:]
			n := uint64(binary.LittleEndian.Uint32(h[frameLen:]))
			typ := FrameType(binary.LittleEndian.Uint16(h[frameType:]))
			err := r.checkLen(n, off, span, head-tail, tail+off)
			if err == nil && off+n > uint64(len(buf)) { // past this window (a span > drainChunk)
				switch {
				case typ == FramePad: // its bytes are not needed
					r.stats.Pads++
					off += n
				case alone:
					// The second copy's length is not the first's: the process is
					// writing over the pending bytes.
					err = fmt.Errorf("%w: frame at %d changed while it was copied", ErrCorrupt, tail+off)
				case off == 0:
					buf, alone = r.copyOut(pos, n), true // a frame larger than a window
					continue
				}
				if err == nil {
					break // the next window starts at off
				}
			}
			if err != nil {
				r.stats.Corrupt++
				return frames, r.drop(tail, off, head, err)
			}
			if typ == FramePad {
				r.stats.Pads++
			} else {
				frames++
				r.stats.Frames++
				err := fn(Frame{Type: typ, Flags: binary.LittleEndian.Uint16(h[frameFlags:]), Body: h[SizeofFrame:n]})
				if err != nil {
					return frames, r.drop(tail, off, head, fmt.Errorf("%w: %s frame at %d: %w", ErrCorrupt, typ, tail+off, err))
				}
			}
			off += n
		}
		tail += off
		r.stats.Bytes += off
		atomic.StoreUint64(r.u64(hdrTail), tail)
	}
	return frames, nil
}

// copyOut copies n ring bytes from pos (n <= size-pos) into r.buf.
func (r *Ring) copyOut(pos, n uint64) []byte {
	if uint64(cap(r.buf)) < n {
		r.buf = make([]byte, n)
	}
	buf := r.buf[:n]
	copy(buf, r.ring[pos:pos+n])
	return buf
}

// checkLen checks the length n of the frame at off of a window whose span is the
// bytes up to the ring's end or head, whichever is first, with left bytes to head.
func (r *Ring) checkLen(n, off, span, left, at uint64) error {
	switch {
	case n < SizeofFrame || n%frameAlign != 0:
		return fmt.Errorf("%w: frame at %d has length %d", ErrCorrupt, at, n)
	case n > left-off:
		return fmt.Errorf("%w: frame at %d of length %d goes past head (%d bytes pending)", ErrCorrupt, at, n, left-off)
	case n > span-off:
		return fmt.Errorf("%w: frame at %d of length %d crosses the ring's end", ErrCorrupt, at, n)
	}
	return nil
}

// drop skips from the frame at tail+off to head: the frames before it in this window
// were handed on, the rest of the pending bytes are not looked at.
func (r *Ring) drop(tail, off, head uint64, err error) error {
	r.stats.Bytes += head - tail
	r.stats.DroppedBytes += head - tail - off
	atomic.StoreUint64(r.u64(hdrTail), head)
	return err
}

// Head is the library's head (bytes produced).
func (r *Ring) Head() uint64 { return atomic.LoadUint64(r.u64(hdrHead)) }

// Tail is the collector's tail (bytes consumed).
func (r *Ring) Tail() uint64 { return atomic.LoadUint64(r.u64(hdrTail)) }

// PID is the header's pid: getpid() of the process that made the channel.
func (r *Ring) PID() uint32 { return atomic.LoadUint32(r.u32(hdrPID)) }

// LibState is what the library says it is doing.
func (r *Ring) LibState() State { return State(atomic.LoadUint32(r.u32(hdrLibState))) }

// CUPTIVersion is cuptiGetVersion's answer, 0 before CUPTI was loaded.
func (r *Ring) CUPTIVersion() uint32 { return atomic.LoadUint32(r.u32(hdrCuptiVersion)) }

// KernelRecordSize is the size of the CUPTI kernel record the library reads.
func (r *Ring) KernelRecordSize() uint32 { return atomic.LoadUint32(r.u32(hdrKernelRecordSize)) }

// LibSeenSeq is the control_seq the library last acted on.
func (r *Ring) LibSeenSeq() uint32 { return atomic.LoadUint32(r.u32(hdrLibSeenSeq)) }

// Control reports whether the header asks the library to be on.
func (r *Ring) Control() bool { return atomic.LoadUint32(r.u32(hdrControl)) == ControlOn }

// ControlSeq is the number of control writes so far.
func (r *Ring) ControlSeq() uint32 { return atomic.LoadUint32(r.u32(hdrControlSeq)) }

// Acked reports whether the library has acted on the last control write.
func (r *Ring) Acked() bool { return r.LibSeenSeq() == r.ControlSeq() }

// CollectorBeat is the last Beat stored.
func (r *Ring) CollectorBeat() uint64 { return atomic.LoadUint64(r.u64(hdrCollectorBeat)) }

// SetControl asks the library to turn the timeline on or off: control first, then
// control_seq + 1, so a library that sees the new sequence number reads the new value.
func (r *Ring) SetControl(on bool) {
	v := uint32(ControlOff)
	if on {
		v = ControlOn
	}
	atomic.StoreUint32(r.u32(hdrControl), v)
	atomic.AddUint32(r.u32(hdrControlSeq), 1)
}

// Beat stores the collector's CLOCK_MONOTONIC now (ns): the library can tell a
// collector that stopped visiting from one that asks for nothing.
func (r *Ring) Beat(monoNs uint64) { atomic.StoreUint64(r.u64(hdrCollectorBeat), monoNs) }

// Counters are the library's counters (header offsets 192 to 272).
type Counters struct {
	RecordsWritten  uint64 // activity records put in the ring
	DroppedRingFull uint64 // records lost: the ring had no room
	DroppedCUPTI    uint64 // records CUPTI itself dropped
	RefusedLayout   uint64 // records of a kind or layout the library does not decode
	Batches         uint64 // CUPTI buffers completed
	Enables         uint64 // times the timeline was turned on
	Disables        uint64 // times it was turned off
	Backoffs        uint64 // times the library kept out for another profiler
	BuffersRefused  uint64 // CUPTI buffer requests refused: the budget was spent
	NamesTruncated  uint64 // kernel names cut at NameMax
	// APIFiltered: API records of calls that launch nothing, left out by the library
	// (not a loss: the join uses only the launches').
	APIFiltered uint64
}

// Add adds o's counts to c.
func (c *Counters) Add(o Counters) {
	c.RecordsWritten += o.RecordsWritten
	c.DroppedRingFull += o.DroppedRingFull
	c.DroppedCUPTI += o.DroppedCUPTI
	c.RefusedLayout += o.RefusedLayout
	c.Batches += o.Batches
	c.Enables += o.Enables
	c.Disables += o.Disables
	c.Backoffs += o.Backoffs
	c.BuffersRefused += o.BuffersRefused
	c.NamesTruncated += o.NamesTruncated
	c.APIFiltered += o.APIFiltered
}

// Counters reads the library's counters, each atomically (not all at one instant).
func (r *Ring) Counters() Counters {
	ld := func(off int) uint64 { return atomic.LoadUint64(r.u64(off)) }
	return Counters{
		RecordsWritten:  ld(hdrRecordsWritten),
		DroppedRingFull: ld(hdrDroppedRingFull),
		DroppedCUPTI:    ld(hdrDroppedCupti),
		RefusedLayout:   ld(hdrRefusedLayout),
		Batches:         ld(hdrBatches),
		Enables:         ld(hdrEnables),
		Disables:        ld(hdrDisables),
		Backoffs:        ld(hdrBackoffs),
		BuffersRefused:  ld(hdrBuffersRefused),
		NamesTruncated:  ld(hdrNamesTruncated),
		APIFiltered:     ld(hdrAPIFiltered),
	}
}

// CUPTIPath is the libcupti the library loaded.
func (r *Ring) CUPTIPath() string { return r.text(hdrCuptiPath) }

// StateMsg says, for people, why the library's state is what it is.
func (r *Ring) StateMsg() string { return r.text(hdrStateMsg) }

// text reads a NUL-terminated string of at most hdrTextLen bytes (all of them when the
// process left no NUL), copied before it is scanned, made valid UTF-8 (it is exported).
func (r *Ring) text(off int) string {
	var b [hdrTextLen]byte
	copy(b[:], r.mem[off:off+hdrTextLen])
	n := 0
	for n < len(b) && b[n] != 0 {
		n++
	}
	return validUTF8(b[:n])
}

// guard runs fn, turning a fault on the mapping (SIGBUS: the file shrank under it)
// into ErrFault instead of a crash of the collector.
func guard(fn func()) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if p := recover(); p != nil {
			if re, ok := p.(interface{ Addr() uintptr }); ok {
				err = fmt.Errorf("%w (address %#x)", ErrFault, re.Addr())
				return
			}
			panic(p)
		}
	}()
	fn()
	return nil
}
