// OTLP protobuf encoding of span batches, written straight into a reused byte slice.
//
// The output is byte for byte what pdata's ptrace.ProtoMarshaler writes: pdata marshals
// each message backwards from its last byte, so its fields come out in descending field
// number order (repeated fields keep their order), ids and the status are written even
// when empty, an empty string value keeps its tag. This encoder writes forward in that
// order; a nested message's length is reserved before its content and the content moved
// when the length needs another number of bytes. otlpproto_test.go checks the bytes
// against the marshaller on the builder's spans and on a real capture's jobs. It exists
// because the marshaller sizes the whole request first and allocates a new buffer for
// every batch; here one buffer serves the run.
//
// What pdata's public API does not expose cannot be written, and the builder never sets
// it: resource entity references, string-table indexes, the deprecated scope spans field.

package emit

import (
	"encoding/binary"
	"math"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// AppendTracesProto appends td as one OTLP protobuf ExportTraceServiceRequest.
func AppendTracesProto(dst []byte, td ptrace.Traces) []byte {
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		var at int
		dst, at = openMsg(dst, 0xa, 4)
		dst = appendResourceSpansProto(dst, rss.At(i))
		dst = closeMsg(dst, at, 4)
	}
	return dst
}

// openMsg appends tag and reserves n bytes for the length of the message that follows;
// at is where the message starts.
func openMsg(dst []byte, tag byte, n int) ([]byte, int) {
	dst = append(dst, tag)
	for range n {
		dst = append(dst, 0)
	}
	return dst, len(dst)
}

// closeMsg writes the length of the message that started at `at` into the n bytes
// reserved before it, moving the message when its length takes another number of bytes.
func closeMsg(dst []byte, at, n int) []byte {
	l := len(dst) - at
	w := varintLen(uint64(l))
	if w != n {
		if w > n {
			dst = append(dst, make([]byte, w-n)...)
		}
		copy(dst[at+w-n:], dst[at:at+l])
		dst = dst[:at+w-n+l]
	}
	putVarint(dst[at-n:], uint64(l))
	return dst
}

func varintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

func putVarint(b []byte, v uint64) {
	i := 0
	for v >= 0x80 {
		b[i] = byte(v) | 0x80
		v >>= 7
		i++
	}
	b[i] = byte(v)
}

func appendVarint(dst []byte, v uint64) []byte {
	for v >= 0x80 {
		dst = append(dst, byte(v)|0x80)
		v >>= 7
	}
	return append(dst, byte(v))
}

// appendBytesField appends a length-delimited field.
func appendBytesField(dst []byte, tag byte, b []byte) []byte {
	dst = append(dst, tag)
	dst = appendVarint(dst, uint64(len(b)))
	return append(dst, b...)
}

func appendStringField(dst []byte, tag byte, s string) []byte {
	dst = append(dst, tag)
	dst = appendVarint(dst, uint64(len(s)))
	return append(dst, s...)
}

// appendIDField appends an id (length 0 when it is empty, as pdata writes it).
func appendIDField(dst []byte, tag byte, id []byte, empty bool) []byte {
	if empty {
		return append(dst, tag, 0)
	}
	return appendBytesField(dst, tag, id)
}

func appendResourceSpansProto(dst []byte, rs ptrace.ResourceSpans) []byte {
	if u := rs.SchemaUrl(); u != "" {
		dst = appendStringField(dst, 0x1a, u)
	}
	sss := rs.ScopeSpans()
	for i := 0; i < sss.Len(); i++ {
		var at int
		dst, at = openMsg(dst, 0x12, 4)
		dst = appendScopeSpansProto(dst, sss.At(i))
		dst = closeMsg(dst, at, 4)
	}
	res := rs.Resource()
	var at int
	dst, at = openMsg(dst, 0xa, 2)
	if n := res.DroppedAttributesCount(); n != 0 {
		dst = appendVarint(append(dst, 0x10), uint64(n))
	}
	dst = appendAttrsProto(dst, 0xa, res.Attributes())
	return closeMsg(dst, at, 2)
}

func appendScopeSpansProto(dst []byte, ss ptrace.ScopeSpans) []byte {
	if u := ss.SchemaUrl(); u != "" {
		dst = appendStringField(dst, 0x1a, u)
	}
	spans := ss.Spans()
	for i := 0; i < spans.Len(); i++ {
		var at int
		dst, at = openMsg(dst, 0x12, 2)
		dst = appendSpanProto(dst, spans.At(i))
		dst = closeMsg(dst, at, 2)
	}
	sc := ss.Scope()
	var at int
	dst, at = openMsg(dst, 0xa, 1)
	if n := sc.DroppedAttributesCount(); n != 0 {
		dst = appendVarint(append(dst, 0x20), uint64(n))
	}
	dst = appendAttrsProto(dst, 0x1a, sc.Attributes())
	if v := sc.Version(); v != "" {
		dst = appendStringField(dst, 0x12, v)
	}
	if v := sc.Name(); v != "" {
		dst = appendStringField(dst, 0xa, v)
	}
	return closeMsg(dst, at, 1)
}

func appendSpanProto(dst []byte, sp ptrace.Span) []byte {
	st := sp.Status()
	var at int
	dst, at = openMsg(dst, 0x7a, 1)
	if c := st.Code(); c != 0 {
		dst = appendVarint(append(dst, 0x18), uint64(c))
	}
	if m := st.Message(); m != "" {
		dst = appendStringField(dst, 0x12, m)
	}
	dst = closeMsg(dst, at, 1)
	if n := sp.DroppedLinksCount(); n != 0 {
		dst = appendVarint(append(dst, 0x70), uint64(n))
	}
	links := sp.Links()
	for i := 0; i < links.Len(); i++ {
		dst, at = openMsg(dst, 0x6a, 1)
		dst = appendLinkProto(dst, links.At(i))
		dst = closeMsg(dst, at, 1)
	}
	if n := sp.DroppedEventsCount(); n != 0 {
		dst = appendVarint(append(dst, 0x60), uint64(n))
	}
	events := sp.Events()
	for i := 0; i < events.Len(); i++ {
		ev := events.At(i)
		dst, at = openMsg(dst, 0x5a, 1)
		if n := ev.DroppedAttributesCount(); n != 0 {
			dst = appendVarint(append(dst, 0x20), uint64(n))
		}
		dst = appendAttrsProto(dst, 0x1a, ev.Attributes())
		if v := ev.Name(); v != "" {
			dst = appendStringField(dst, 0x12, v)
		}
		if t := ev.Timestamp(); t != 0 {
			dst = binary.LittleEndian.AppendUint64(append(dst, 0x9), uint64(t))
		}
		dst = closeMsg(dst, at, 1)
	}
	if n := sp.DroppedAttributesCount(); n != 0 {
		dst = appendVarint(append(dst, 0x50), uint64(n))
	}
	dst = appendAttrsProto(dst, 0x4a, sp.Attributes())
	if t := sp.EndTimestamp(); t != 0 {
		dst = binary.LittleEndian.AppendUint64(append(dst, 0x41), uint64(t))
	}
	if t := sp.StartTimestamp(); t != 0 {
		dst = binary.LittleEndian.AppendUint64(append(dst, 0x39), uint64(t))
	}
	if k := sp.Kind(); k != 0 {
		dst = appendVarint(append(dst, 0x30), uint64(k))
	}
	if v := sp.Name(); v != "" {
		dst = appendStringField(dst, 0x2a, v)
	}
	if f := sp.Flags(); f != 0 {
		dst = binary.LittleEndian.AppendUint32(append(dst, 0x85, 0x01), f)
	}
	p := sp.ParentSpanID()
	dst = appendIDField(dst, 0x22, p[:], p.IsEmpty())
	if ts := sp.TraceState().AsRaw(); ts != "" {
		dst = appendStringField(dst, 0x1a, ts)
	}
	s := sp.SpanID()
	dst = appendIDField(dst, 0x12, s[:], s.IsEmpty())
	t := sp.TraceID()
	return appendIDField(dst, 0xa, t[:], t.IsEmpty())
}

func appendLinkProto(dst []byte, l ptrace.SpanLink) []byte {
	if f := l.Flags(); f != 0 {
		dst = binary.LittleEndian.AppendUint32(append(dst, 0x35), f)
	}
	if n := l.DroppedAttributesCount(); n != 0 {
		dst = appendVarint(append(dst, 0x28), uint64(n))
	}
	dst = appendAttrsProto(dst, 0x22, l.Attributes())
	if ts := l.TraceState().AsRaw(); ts != "" {
		dst = appendStringField(dst, 0x1a, ts)
	}
	s := l.SpanID()
	dst = appendIDField(dst, 0x12, s[:], s.IsEmpty())
	t := l.TraceID()
	return appendIDField(dst, 0xa, t[:], t.IsEmpty())
}

// appendAttrsProto appends each attribute as a KeyValue field with tag.
func appendAttrsProto(dst []byte, tag byte, m pcommon.Map) []byte {
	m.Range(func(k string, v pcommon.Value) bool {
		var at int
		dst, at = openMsg(dst, tag, 1)
		dst = appendKeyValueProto(dst, k, v)
		dst = closeMsg(dst, at, 1)
		return true
	})
	return dst
}

func appendKeyValueProto(dst []byte, k string, v pcommon.Value) []byte {
	var at int
	dst, at = openMsg(dst, 0x12, 1)
	dst = appendAnyValueProto(dst, v)
	dst = closeMsg(dst, at, 1)
	if k != "" {
		dst = appendStringField(dst, 0xa, k)
	}
	return dst
}

func appendAnyValueProto(dst []byte, v pcommon.Value) []byte {
	switch v.Type() {
	case pcommon.ValueTypeStr:
		return appendStringField(dst, 0xa, v.Str())
	case pcommon.ValueTypeBool:
		b := byte(0)
		if v.Bool() {
			b = 1
		}
		return append(dst, 0x10, b)
	case pcommon.ValueTypeInt:
		return appendVarint(append(dst, 0x18), uint64(v.Int()))
	case pcommon.ValueTypeDouble:
		return binary.LittleEndian.AppendUint64(append(dst, 0x21), math.Float64bits(v.Double()))
	case pcommon.ValueTypeSlice:
		var at int
		dst, at = openMsg(dst, 0x2a, 1)
		s := v.Slice()
		for i := 0; i < s.Len(); i++ {
			var vat int
			dst, vat = openMsg(dst, 0xa, 1)
			dst = appendAnyValueProto(dst, s.At(i))
			dst = closeMsg(dst, vat, 1)
		}
		return closeMsg(dst, at, 1)
	case pcommon.ValueTypeMap:
		var at int
		dst, at = openMsg(dst, 0x32, 1)
		dst = appendAttrsProto(dst, 0xa, v.Map())
		return closeMsg(dst, at, 1)
	case pcommon.ValueTypeBytes:
		return appendBytesField(dst, 0x3a, v.Bytes().AsRaw())
	}
	return dst // empty: no field
}
