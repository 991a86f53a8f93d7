// Package kstr turns the fixed-size, NUL-terminated char arrays of kernel records (comm,
// ring and device names, Xid messages) into Go strings, for both live sources (the DRM
// probe and the CUDA uprobes): one definition, so both sanitise the same way.
package kstr

import (
	"encoding/binary"
	"math/bits"
	"strings"
	"unicode/utf8"
	"unsafe"
)

// FromC returns b up to its first NUL. Invalid UTF-8 is replaced by U+FFFD: comm is
// whatever a process set with prctl(PR_SET_NAME), and invalid UTF-8 would make the
// exported OTLP/JSON invalid.
func FromC(b []int8) string {
	n := 0
	for n < len(b) && b[n] != 0 {
		n++
	}
	if n == 0 {
		return ""
	}
	s := string(unsafe.Slice((*byte)(unsafe.Pointer(&b[0])), n))
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	return s
}

// Interner is FromC with a small direct-mapped cache of the strings it returned: the
// names in kernel records repeat (one comm per thread, one name per ring or device), so
// a hit costs a hash and a compare instead of a validation and an allocation. The zero
// value is ready; not safe for concurrent use (one per reader).
type Interner struct {
	slots [internSlots]string
}

const internSlots = 256

// FromC is the package's FromC, through the cache.
func (in *Interner) FromC(b []int8) string {
	if len(b) == 16 { // comm, ring and device names: TASK_COMM_LEN
		return in.from16(b)
	}
	n := 0
	h := uint32(2166136261) // FNV-1a of the bytes up to the first NUL
	for n < len(b) && b[n] != 0 {
		h = (h ^ uint32(uint8(b[n]))) * 16777619
		n++
	}
	if n == 0 {
		return ""
	}
	raw := unsafe.Slice((*byte)(unsafe.Pointer(&b[0])), n)
	slot := &in.slots[h%internSlots]
	if *slot == string(raw) { // compares without allocating
		return *slot
	}
	s := FromC(b[:n])
	if s == string(raw) { // cache only what needed no repair: a hit must mean the same bytes
		*slot = s
	}
	return s
}

// from16 is FromC of a 16-byte array, a word at a time: the first NUL found with the
// classic zero-byte test (exact for the lowest zero byte, which is all that is used), the
// hash taken of the two words with the bytes from the NUL on cleared. Only the slot a
// string lands in differs from the byte loop's; what is returned is the same.
func (in *Interner) from16(b []int8) string {
	raw := unsafe.Slice((*byte)(unsafe.Pointer(&b[0])), 16)
	lo, hi := binary.LittleEndian.Uint64(raw), binary.LittleEndian.Uint64(raw[8:])
	var n int
	if z := zeroBytes(lo); z != 0 {
		n = bits.TrailingZeros64(z) >> 3
		lo &= 1<<(8*n) - 1
		hi = 0
	} else if z := zeroBytes(hi); z != 0 {
		k := bits.TrailingZeros64(z) >> 3
		n = 8 + k
		hi &= 1<<(8*k) - 1
	} else {
		n = 16
	}
	if n == 0 {
		return ""
	}
	h := ((lo ^ bits.RotateLeft64(hi, 29)) * 0x9e3779b97f4a7c15) >> (64 - 8)
	slot := &in.slots[h%internSlots]
	if *slot == string(raw[:n]) { // compares without allocating
		return *slot
	}
	s := FromC(b[:n])
	if s == string(raw[:n]) { // cache only what needed no repair: a hit must mean the same bytes
		*slot = s
	}
	return s
}

// zeroBytes has the high bit set of the lowest zero byte of w (and maybe of bytes above
// it), nothing when w has none.
func zeroBytes(w uint64) uint64 {
	return (w - 0x0101010101010101) &^ w & 0x8080808080808080
}
