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
