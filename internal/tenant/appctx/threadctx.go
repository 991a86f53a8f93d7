// OTEP 4947 thread context record: what the otel_thread_ctx_v1 TLS slot points to.
//
//	offset  size  field
//	0       16    trace-id (W3C byte order)
//	16      8     span-id
//	24      1     valid (1 = valid; anything else: ignore the record)
//	25      1     trace-flags (reserved/alignment byte in early drafts)
//	26      2     attrs-data-size, host-endian
//	28      n     attrs-data: {key-index u8, length u8, value [length]byte utf-8}…

package appctx

import (
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/ghostdriver/ghostdriver/internal/attr"
	"strconv"
	"strings"
)

const (
	// ThreadContextHeaderSize is the fixed part a reader fetches first.
	ThreadContextHeaderSize = 28
	// MaxThreadContextSize is the OTEP's recommended upper bound for a whole record (the
	// OTel eBPF profiler's limit); the BPF side reads at most this much and so do we.
	MaxThreadContextSize = 640
)

// ErrThreadContext is wrapped by every ParseThreadContext error.
var ErrThreadContext = errors.New("invalid thread context record")

// ThreadContext is a decoded record.
type ThreadContext struct {
	TraceID [16]byte
	SpanID  [8]byte
	// Valid is true when the writer marked the record valid (valid == 1) and it names a
	// span. A record with valid != 1 or with all-zero ids means "no active context".
	Valid bool
	Flags uint8
	Attrs []ThreadAttr
}

// ThreadAttr is one attribute of the record, keyed by index into the key map that the
// process publishes in its process context (threadlocal.attribute_key_map).
type ThreadAttr struct {
	Key   uint8
	Value string
}

// ParseThreadContext decodes a record read from the target thread. b is what was read:
// at least the 28-byte header, and the attrs-data it announces. attrs-data-size beyond
// what was read, or beyond MaxThreadContextSize, is an error; so is an attribute that
// runs past attrs-data. Values that are not valid UTF-8 are repaired with U+FFFD.
// A record not marked valid decodes to Valid=false without error and without attributes.
func ParseThreadContext(b []byte) (ThreadContext, error) {
	var c ThreadContext
	if len(b) < ThreadContextHeaderSize {
		return c, fmt.Errorf("%w: %d bytes, header needs %d", ErrThreadContext, len(b), ThreadContextHeaderSize)
	}
	copy(c.TraceID[:], b[0:16])
	copy(c.SpanID[:], b[16:24])
	c.Flags = b[25]
	if b[24] != 1 {
		return ThreadContext{}, nil
	}
	zeroTrace, zeroSpan := c.TraceID == [16]byte{}, c.SpanID == [8]byte{}
	if zeroTrace != zeroSpan {
		return ThreadContext{}, fmt.Errorf("%w: only one of trace-id and span-id is set", ErrThreadContext)
	}
	size := int(binary.NativeEndian.Uint16(b[26:28]))
	if ThreadContextHeaderSize+size > MaxThreadContextSize {
		return ThreadContext{}, fmt.Errorf("%w: attrs-data-size %d exceeds the %d-byte record limit", ErrThreadContext, size, MaxThreadContextSize)
	}
	if ThreadContextHeaderSize+size > len(b) {
		return ThreadContext{}, fmt.Errorf("%w: attrs-data-size %d but only %d bytes read", ErrThreadContext, size, len(b)-ThreadContextHeaderSize)
	}
	attrs := b[ThreadContextHeaderSize : ThreadContextHeaderSize+size]
	for len(attrs) > 0 {
		if len(attrs) < 2 {
			return ThreadContext{}, fmt.Errorf("%w: truncated attribute header", ErrThreadContext)
		}
		key, n := attrs[0], int(attrs[1])
		if 2+n > len(attrs) {
			return ThreadContext{}, fmt.Errorf("%w: attribute %d value of %d bytes runs past attrs-data", ErrThreadContext, key, n)
		}
		c.Attrs = append(c.Attrs, ThreadAttr{Key: key, Value: strings.ToValidUTF8(string(attrs[2:2+n]), "\uFFFD")})
		attrs = attrs[2+n:]
	}
	c.Valid = !zeroTrace
	if !c.Valid {
		c.Attrs = nil
	}
	return c, nil
}

// Named resolves attribute key indexes with the process's key map. An index the map does
// not cover is kept as "threadlocal.attr.<index>" rather than dropped.
func (c ThreadContext) Named(keyMap []string) []attr.Attribute {
	out := make([]attr.Attribute, 0, len(c.Attrs))
	for _, a := range c.Attrs {
		k := "threadlocal.attr." + strconv.Itoa(int(a.Key))
		if int(a.Key) < len(keyMap) && keyMap[a.Key] != "" {
			k = keyMap[a.Key]
		}
		out = append(out, attr.String(k, a.Value))
	}
	return out
}
