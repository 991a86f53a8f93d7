// OTLP/JSON encoding of span batches, written straight into a byte slice.
//
// The output is byte for byte what pdata's ptrace.JSONMarshaler writes (field order, empty
// fields left out, 64-bit integers as decimal strings, ids as lower-case hex, the same
// string escaping and float format); otlpjson_test.go checks it against the marshaller on
// every kind of span, attribute and value the builder makes and more. It exists because
// the marshaller's generic stream was most of the CLI's `replay --output` time (profile in
// BENCHMARKS.md): appending into a reused buffer needs no stream, no per-object state and
// no copy of the result.

package emit

import (
	"encoding/base64"
	"math"
	"strconv"
	"unicode/utf8"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// AppendTracesJSON appends td as one OTLP/JSON ExportTraceServiceRequest (no newline).
func AppendTracesJSON(dst []byte, td ptrace.Traces) []byte {
	dst = append(dst, '{')
	rss := td.ResourceSpans()
	if rss.Len() > 0 {
		dst = append(dst, `"resourceSpans":[`...)
		for i := 0; i < rss.Len(); i++ {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendResourceSpans(dst, rss.At(i))
		}
		dst = append(dst, ']')
	}
	return append(dst, '}')
}

func appendResourceSpans(dst []byte, rs ptrace.ResourceSpans) []byte {
	dst = append(dst, `{"resource":{`...)
	res := rs.Resource()
	dst, more := appendAttrsField(dst, res.Attributes(), false)
	if n := res.DroppedAttributesCount(); n != 0 {
		dst = appendField(dst, more, "droppedAttributesCount")
		dst = strconv.AppendUint(dst, uint64(n), 10)
	}
	dst = append(dst, '}')
	sss := rs.ScopeSpans()
	if sss.Len() > 0 {
		dst = append(dst, `,"scopeSpans":[`...)
		for i := 0; i < sss.Len(); i++ {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendScopeSpans(dst, sss.At(i))
		}
		dst = append(dst, ']')
	}
	if u := rs.SchemaUrl(); u != "" {
		dst = append(dst, `,"schemaUrl":`...)
		dst = appendString(dst, u)
	}
	return append(dst, '}')
}

func appendScopeSpans(dst []byte, ss ptrace.ScopeSpans) []byte {
	dst = append(dst, `{"scope":{`...)
	sc := ss.Scope()
	more := false
	if v := sc.Name(); v != "" {
		dst = appendField(dst, more, "name")
		dst, more = appendString(dst, v), true
	}
	if v := sc.Version(); v != "" {
		dst = appendField(dst, more, "version")
		dst, more = appendString(dst, v), true
	}
	dst, more = appendAttrsField(dst, sc.Attributes(), more)
	if n := sc.DroppedAttributesCount(); n != 0 {
		dst = appendField(dst, more, "droppedAttributesCount")
		dst = strconv.AppendUint(dst, uint64(n), 10)
	}
	dst = append(dst, '}')
	spans := ss.Spans()
	if spans.Len() > 0 {
		dst = append(dst, `,"spans":[`...)
		for i := 0; i < spans.Len(); i++ {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendSpan(dst, spans.At(i))
		}
		dst = append(dst, ']')
	}
	if u := ss.SchemaUrl(); u != "" {
		dst = append(dst, `,"schemaUrl":`...)
		dst = appendString(dst, u)
	}
	return append(dst, '}')
}

func appendSpan(dst []byte, sp ptrace.Span) []byte {
	dst = append(dst, '{')
	more := false
	if id := sp.TraceID(); !id.IsEmpty() {
		dst = appendField(dst, more, "traceId")
		dst, more = appendHexID(dst, id[:]), true
	}
	if id := sp.SpanID(); !id.IsEmpty() {
		dst = appendField(dst, more, "spanId")
		dst, more = appendHexID(dst, id[:]), true
	}
	if ts := sp.TraceState().AsRaw(); ts != "" {
		dst = appendField(dst, more, "traceState")
		dst, more = appendString(dst, ts), true
	}
	if id := sp.ParentSpanID(); !id.IsEmpty() {
		dst = appendField(dst, more, "parentSpanId")
		dst, more = appendHexID(dst, id[:]), true
	}
	if f := sp.Flags(); f != 0 {
		dst = appendField(dst, more, "flags")
		dst, more = strconv.AppendUint(dst, uint64(f), 10), true
	}
	if v := sp.Name(); v != "" {
		dst = appendField(dst, more, "name")
		dst, more = appendString(dst, v), true
	}
	if k := sp.Kind(); k != 0 {
		dst = appendField(dst, more, "kind")
		dst, more = strconv.AppendInt(dst, int64(k), 10), true
	}
	if t := sp.StartTimestamp(); t != 0 {
		dst = appendField(dst, more, "startTimeUnixNano")
		dst, more = appendQuotedUint(dst, uint64(t)), true
	}
	if t := sp.EndTimestamp(); t != 0 {
		dst = appendField(dst, more, "endTimeUnixNano")
		dst, more = appendQuotedUint(dst, uint64(t)), true
	}
	dst, more = appendAttrsField(dst, sp.Attributes(), more)
	if n := sp.DroppedAttributesCount(); n != 0 {
		dst = appendField(dst, more, "droppedAttributesCount")
		dst, more = strconv.AppendUint(dst, uint64(n), 10), true
	}
	if evs := sp.Events(); evs.Len() > 0 {
		dst = appendField(dst, more, "events")
		dst = append(dst, '[')
		for i := 0; i < evs.Len(); i++ {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendEvent(dst, evs.At(i))
		}
		dst, more = append(dst, ']'), true
	}
	if n := sp.DroppedEventsCount(); n != 0 {
		dst = appendField(dst, more, "droppedEventsCount")
		dst, more = strconv.AppendUint(dst, uint64(n), 10), true
	}
	if ls := sp.Links(); ls.Len() > 0 {
		dst = appendField(dst, more, "links")
		dst = append(dst, '[')
		for i := 0; i < ls.Len(); i++ {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendLink(dst, ls.At(i))
		}
		dst, more = append(dst, ']'), true
	}
	if n := sp.DroppedLinksCount(); n != 0 {
		dst = appendField(dst, more, "droppedLinksCount")
		dst, more = strconv.AppendUint(dst, uint64(n), 10), true
	}
	dst = appendField(dst, more, "status")
	dst = append(dst, '{')
	st := sp.Status()
	smore := false
	if m := st.Message(); m != "" {
		dst = appendField(dst, smore, "message")
		dst, smore = appendString(dst, m), true
	}
	if c := st.Code(); c != 0 {
		dst = appendField(dst, smore, "code")
		dst = strconv.AppendInt(dst, int64(c), 10)
	}
	return append(dst, '}', '}')
}

func appendEvent(dst []byte, ev ptrace.SpanEvent) []byte {
	dst = append(dst, '{')
	more := false
	if t := ev.Timestamp(); t != 0 {
		dst = appendField(dst, more, "timeUnixNano")
		dst, more = appendQuotedUint(dst, uint64(t)), true
	}
	if v := ev.Name(); v != "" {
		dst = appendField(dst, more, "name")
		dst, more = appendString(dst, v), true
	}
	dst, more = appendAttrsField(dst, ev.Attributes(), more)
	if n := ev.DroppedAttributesCount(); n != 0 {
		dst = appendField(dst, more, "droppedAttributesCount")
		dst = strconv.AppendUint(dst, uint64(n), 10)
	}
	return append(dst, '}')
}

func appendLink(dst []byte, l ptrace.SpanLink) []byte {
	dst = append(dst, '{')
	more := false
	if id := l.TraceID(); !id.IsEmpty() {
		dst = appendField(dst, more, "traceId")
		dst, more = appendHexID(dst, id[:]), true
	}
	if id := l.SpanID(); !id.IsEmpty() {
		dst = appendField(dst, more, "spanId")
		dst, more = appendHexID(dst, id[:]), true
	}
	if ts := l.TraceState().AsRaw(); ts != "" {
		dst = appendField(dst, more, "traceState")
		dst, more = appendString(dst, ts), true
	}
	dst, more = appendAttrsField(dst, l.Attributes(), more)
	if n := l.DroppedAttributesCount(); n != 0 {
		dst = appendField(dst, more, "droppedAttributesCount")
		dst, more = strconv.AppendUint(dst, uint64(n), 10), true
	}
	if f := l.Flags(); f != 0 {
		dst = appendField(dst, more, "flags")
		dst = strconv.AppendUint(dst, uint64(f), 10)
	}
	return append(dst, '}')
}

// appendAttrsField writes `"attributes":[...]` when m is not empty; more says whether a
// field precedes it and is returned updated.
func appendAttrsField(dst []byte, m pcommon.Map, more bool) ([]byte, bool) {
	if m.Len() == 0 {
		return dst, more
	}
	dst = appendField(dst, more, "attributes")
	return append(appendKeyValues(dst, m), ']'), true
}

// appendKeyValues writes `[` and the key/value objects of m (the caller closes the array).
func appendKeyValues(dst []byte, m pcommon.Map) []byte {
	dst = append(dst, '[')
	first := true
	m.Range(func(k string, v pcommon.Value) bool {
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = appendValue(appendKeyValueStart(dst, k), v)
		dst = append(dst, '}')
		return true
	})
	return dst
}

// appendKeyValueStart opens a KeyValue object up to its value: `{"key":k,"value":` (an
// empty key is left out, as pdata's marshaller does).
func appendKeyValueStart(dst []byte, k string) []byte {
	dst = append(dst, '{')
	if k != "" {
		dst = append(dst, `"key":`...)
		dst = appendString(dst, k)
		dst = append(dst, ',')
	}
	return append(dst, `"value":`...)
}

func appendValue(dst []byte, v pcommon.Value) []byte {
	switch v.Type() {
	case pcommon.ValueTypeStr:
		dst = append(dst, `{"stringValue":`...)
		dst = appendString(dst, v.Str())
	case pcommon.ValueTypeBool:
		dst = append(dst, `{"boolValue":`...)
		dst = strconv.AppendBool(dst, v.Bool())
	case pcommon.ValueTypeInt:
		dst = append(dst, `{"intValue":"`...)
		dst = strconv.AppendInt(dst, v.Int(), 10)
		dst = append(dst, '"')
	case pcommon.ValueTypeDouble:
		dst = append(dst, `{"doubleValue":`...)
		dst = appendFloat(dst, v.Double())
	case pcommon.ValueTypeBytes:
		dst = append(dst, `{"bytesValue":"`...)
		dst = base64.StdEncoding.AppendEncode(dst, v.Bytes().AsRaw())
		dst = append(dst, '"')
	case pcommon.ValueTypeSlice:
		dst = append(dst, `{"arrayValue":{`...)
		if s := v.Slice(); s.Len() > 0 {
			dst = append(dst, `"values":[`...)
			for i := 0; i < s.Len(); i++ {
				if i > 0 {
					dst = append(dst, ',')
				}
				dst = appendValue(dst, s.At(i))
			}
			dst = append(dst, ']')
		}
		dst = append(dst, '}')
	case pcommon.ValueTypeMap:
		dst = append(dst, `{"kvlistValue":{`...)
		if m := v.Map(); m.Len() > 0 {
			dst = append(dst, `"values":`...)
			dst = append(appendKeyValues(dst, m), ']')
		}
		dst = append(dst, '}')
	default: // empty value
		dst = append(dst, '{')
	}
	return append(dst, '}')
}

// appendField writes `,"name":` (without the comma when nothing precedes it).
func appendField(dst []byte, more bool, name string) []byte {
	if more {
		dst = append(dst, ',')
	}
	dst = append(dst, '"')
	dst = append(dst, name...)
	return append(dst, '"', ':')
}

func appendQuotedUint(dst []byte, v uint64) []byte {
	dst = append(dst, '"')
	dst = strconv.AppendUint(dst, v, 10)
	return append(dst, '"')
}

const hexDigits = "0123456789abcdef"

func appendHexID(dst []byte, id []byte) []byte {
	dst = append(dst, '"')
	for _, b := range id {
		dst = append(dst, hexDigits[b>>4], hexDigits[b&0xf])
	}
	return append(dst, '"')
}

// appendFloat writes a double as the marshaller does: NaN and infinities as strings, else
// the shortest decimal, in exponent form below 1e-6 and from 1e21.
func appendFloat(dst []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, `"NaN"`...)
	case math.IsInf(f, 1):
		return append(dst, `"Infinity"`...)
	case math.IsInf(f, -1):
		return append(dst, `"-Infinity"`...)
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	return strconv.AppendFloat(dst, f, format, -1, 64)
}

// jsonPlain marks the bytes appendString copies as they are: from 0x20 on, except `"` and
// `\`, and every byte of a multi-byte sequence (or of invalid UTF-8).
var jsonPlain = func() (t [256]bool) {
	for c := range t {
		t[c] = c >= 0x20 && c != '"' && c != '\\' || c >= utf8.RuneSelf
	}
	return t
}()

// appendString writes s as a JSON string with the marshaller's escaping: `"` and `\`
// backslash-escaped, \n \r \t by name, other bytes below 0x20 as \u00XX, everything else
// (including bytes of invalid UTF-8) as is.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if jsonPlain[c] {
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		start = i + 1
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
