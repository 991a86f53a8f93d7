// W3C Trace Context `traceparent` (https://www.w3.org/TR/trace-context/#traceparent-header),
// as batch jobs and training runs carry it in their TRACEPARENT environment variable.

package appctx

import (
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// ErrTraceParent is wrapped by every ParseTraceParent error.
var ErrTraceParent = errors.New("invalid traceparent")

// TraceParent is a parsed W3C traceparent.
type TraceParent struct {
	Version uint8
	TraceID [16]byte
	SpanID  [8]byte
	Flags   uint8
}

// Sampled reports the sampled flag (bit 0).
func (t TraceParent) Sampled() bool { return t.Flags&0x01 != 0 }

// String renders the version-00 form.
func (t TraceParent) String() string {
	return fmt.Sprintf("%02x-%x-%x-%02x", t.Version, t.TraceID, t.SpanID, t.Flags)
}

const traceParentLen = 55 // "00-" + 32 + "-" + 16 + "-" + 2

// ParseTraceParent parses s by the W3C rules: lowercase hex only, exact field lengths,
// version ff invalid, all-zero trace id or span id invalid. Version 00 must be exactly 55
// characters; a higher version may carry more fields after a '-' (forward compatibility).
// Surrounding spaces and tabs (optional whitespace) are ignored.
func ParseTraceParent(s string) (TraceParent, error) {
	var tp TraceParent
	s = strings.Trim(s, " \t")
	if len(s) < traceParentLen {
		return tp, fmt.Errorf("%w: %d characters, want %d", ErrTraceParent, len(s), traceParentLen)
	}
	if s[2] != '-' || s[35] != '-' || s[52] != '-' {
		return tp, fmt.Errorf("%w: misplaced field separator", ErrTraceParent)
	}
	var v [1]byte
	if !lowerHex(s[0:2], v[:]) {
		return tp, fmt.Errorf("%w: version %q", ErrTraceParent, s[0:2])
	}
	tp.Version = v[0]
	switch {
	case tp.Version == 0xff:
		return tp, fmt.Errorf("%w: version ff is forbidden", ErrTraceParent)
	case tp.Version == 0 && len(s) != traceParentLen:
		return tp, fmt.Errorf("%w: version 00 with trailing data", ErrTraceParent)
	case len(s) > traceParentLen && s[traceParentLen] != '-':
		return tp, fmt.Errorf("%w: trailing data not separated by '-'", ErrTraceParent)
	}
	if !lowerHex(s[3:35], tp.TraceID[:]) {
		return tp, fmt.Errorf("%w: trace-id %q", ErrTraceParent, s[3:35])
	}
	if !lowerHex(s[36:52], tp.SpanID[:]) {
		return tp, fmt.Errorf("%w: parent-id %q", ErrTraceParent, s[36:52])
	}
	var f [1]byte
	if !lowerHex(s[53:55], f[:]) {
		return tp, fmt.Errorf("%w: trace-flags %q", ErrTraceParent, s[53:55])
	}
	tp.Flags = f[0]
	if tp.TraceID == ([16]byte{}) {
		return tp, fmt.Errorf("%w: all-zero trace-id", ErrTraceParent)
	}
	if tp.SpanID == ([8]byte{}) {
		return tp, fmt.Errorf("%w: all-zero parent-id", ErrTraceParent)
	}
	return tp, nil
}

// lowerHex decodes s into dst, accepting only 0-9a-f (the spec forbids uppercase).
func lowerHex(s string, dst []byte) bool {
	if len(s) != 2*len(dst) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	_, err := hex.Decode(dst, []byte(s))
	return err == nil
}

// MaxTraceStateLen is the W3C limit a vendor must propagate (512 characters).
const MaxTraceStateLen = 512

// ValidTraceState reports whether s is a plausible W3C tracestate to carry along: at most
// 512 characters, at most 32 list members, printable ASCII, every member key=value.
// The receiver never interprets vendor entries, it only forwards them.
func ValidTraceState(s string) bool {
	if len(s) > MaxTraceStateLen {
		return false
	}
	members := 0
	for _, m := range strings.Split(s, ",") {
		m = strings.Trim(m, " \t")
		if m == "" {
			continue // empty list members are allowed
		}
		members++
		k, v, ok := strings.Cut(m, "=")
		if !ok || k == "" || v == "" || members > 32 {
			return false
		}
		for i := 0; i < len(m); i++ {
			if m[i] < 0x20 || m[i] > 0x7e {
				return false
			}
		}
	}
	return true
}
