// What the jobs mode's reader holds back until no pending job can still bring an earlier
// stamp (jobs_live.go): the samples as they came from the ring, decoded only when they are
// handed over, instead of decoded events (328 bytes each, and a job record's up to eight).
// A sample is kept without its zero 8-byte words (a bitmap of the others, then them): most
// of a per-event record is fields its hook does not fill. An item that a hand-over splits
// (a job record with stamps on both sides of the bound) and the jobs the reader sweeps out
// of the kernel map are held as events.

package probe

import (
	"encoding/binary"
	mathbits "math/bits"
	"slices"
	"unsafe"

	"github.com/ghostdriver/ghostdriver/internal/event"
)

// heldRef is one held item, in arrival order: a sample of n bytes packed in
// arena[off:off+m] (n > 0) or a decoded event (n == 0: evs[off]). t is the earliest event
// time the item can give.
type heldRef struct {
	t    int64
	off  uint32
	n, m uint16
}

// maxPackedWords is the most 8-byte words a packed sample has (its bitmap's bits). A
// sample that packing would not make shorter (longer than that, not a multiple of 8
// bytes, or with too few zero words) is kept as it is: its packed length equals its
// length, which a packed sample's never does.
const maxPackedWords = 64

// pack appends b to dst without its zero words: a little-endian bitmap of the nonzero
// words, then those words; or b itself (see maxPackedWords).
func pack(dst, b []byte) []byte {
	n := len(b)
	if n%8 != 0 || n/8 > maxPackedWords || n == 0 {
		return append(dst, b...)
	}
	at := len(dst)
	dst = slices.Grow(dst, 8+n)[:at+8+n]
	out, k := dst[at+8:], 0
	var bits uint64
	for i, rest := 0, b; len(rest) >= 8; i, rest = i+1, rest[8:] {
		if w := binary.LittleEndian.Uint64(rest); w != 0 {
			bits |= 1 << i
			binary.LittleEndian.PutUint64(out[k:], w)
			k += 8
		}
	}
	if 8+k >= n {
		return append(dst[:at], b...)
	}
	binary.LittleEndian.PutUint64(dst[at:], bits)
	return dst[:at+8+k]
}

// unpack appends the n-byte sample that pack made into p to dst.
func unpack(dst, p []byte, n int) []byte {
	if len(p) == n {
		return append(dst, p...)
	}
	at := len(dst)
	dst = slices.Grow(dst, n)[:at+n]
	clear(dst[at:])
	bits := binary.LittleEndian.Uint64(p)
	p = p[8:]
	for ; bits != 0; bits &= bits - 1 {
		i := mathbits.TrailingZeros64(bits)
		binary.LittleEndian.PutUint64(dst[at+8*i:], binary.LittleEndian.Uint64(p))
		p = p[8:]
	}
	return dst
}

// heldRefSize is what a held item costs beside its bytes or its event.
const heldRefSize = int(unsafe.Sizeof(heldRef{}))

// heldStore holds the reader's items. The arena is compacted in place at each hand-over
// (kept samples only move towards its start); refs and evs alternate with a spare.
type heldStore struct {
	refs, spareRefs []heldRef
	arena           []byte
	evs, spareEvs   []event.Event
	sample          []byte // an unpacked sample being decoded
}

// holdSample keeps a copy of a ring sample whose earliest event time is t.
func (h *heldStore) holdSample(b []byte, t int64) {
	off := len(h.arena)
	h.arena = pack(h.arena, b)
	h.refs = append(h.refs, heldRef{t: t, off: uint32(off), n: uint16(len(b)), m: uint16(len(h.arena) - off)})
}

// holdEvents keeps decoded events.
func (h *heldStore) holdEvents(evs []event.Event) {
	for i := range evs {
		h.refs = append(h.refs, heldRef{t: evs[i].Time, off: uint32(len(h.evs))})
		h.evs = append(h.evs, evs[i])
	}
}

// items is how many items are held.
func (h *heldStore) items() int { return len(h.refs) }

// bytes is what the held items take: packed samples, decoded events and the item list
// (lengths, not the capacity kept for reuse).
func (h *heldStore) bytes() int {
	return len(h.arena) + len(h.evs)*int(unsafe.Sizeof(event.Event{})) + len(h.refs)*heldRefSize
}

// take appends to out every held event before bound, decoding held samples with decode,
// and keeps the rest in arrival order.
func (h *heldStore) take(bound int64, out []event.Event, decode func(b []byte, out []event.Event) []event.Event) []event.Event {
	refs, evs := h.spareRefs[:0], h.spareEvs[:0]
	keepEvent := func(e *event.Event) {
		refs = append(refs, heldRef{t: e.Time, off: uint32(len(evs))})
		evs = append(evs, *e)
	}
	w := 0 // arena write position: kept samples move down
	for _, r := range h.refs {
		switch {
		case r.n == 0:
			if e := &h.evs[r.off]; e.Time < bound {
				out = append(out, *e)
			} else {
				keepEvent(e)
			}
		case r.t >= bound:
			copy(h.arena[w:], h.arena[r.off:r.off+uint32(r.m)])
			refs = append(refs, heldRef{t: r.t, off: uint32(w), n: r.n, m: r.m})
			w += int(r.m)
		default:
			h.sample = unpack(h.sample[:0], h.arena[r.off:r.off+uint32(r.m)], int(r.n))
			n0 := len(out)
			out = decode(h.sample, out)
			// a job record's stamps after the bound stay, as events
			w := n0
			for i := n0; i < len(out); i++ {
				if e := &out[i]; e.Time < bound {
					out[w] = *e
					w++
				} else {
					keepEvent(e)
				}
			}
			out = out[:w]
		}
	}
	h.arena = h.arena[:w]
	h.spareRefs, h.refs = h.refs[:0], refs
	h.spareEvs, h.evs = h.evs[:0], evs
	return out
}

// sampleTime is the earliest event time a ring sample can give: a job record's earliest
// stamp, any other record's ts (every record kind starts with it); ok is false for a
// sample too short to have one (decoded at once, so that its error is reported).
func sampleTime(b []byte) (t int64, ok bool) {
	if len(b) == jobRecordSize {
		r := loadSample[jobsJobRecord](b)
		first := int64(-1)
		for s := 0; s < int(jobsJobSlotJS_COUNT); s++ {
			if r.Slots&(1<<s) != 0 && (first < 0 || int64(r.St[s].Ts) < first) {
				first = int64(r.St[s].Ts)
			}
		}
		return first, first >= 0
	}
	if len(b) < 8 {
		return 0, false
	}
	return int64(binary.LittleEndian.Uint64(b)), true
}
