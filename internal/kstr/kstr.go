// Package kstr turns the fixed-size, NUL-terminated char arrays of kernel records (comm,
// ring and device names, Xid messages) into Go strings, for both live sources (the DRM
// probe and the CUDA uprobes): one definition, so both sanitise the same way.
package kstr

import (
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
