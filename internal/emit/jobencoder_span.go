// One span of the JobEncoder in both encodings.
//
// The field order, the fields left out and the value forms are those of AppendTracesJSON
// and AppendTracesProto (otlpjson.go, otlpproto.go: pdata's bytes) for the spans the
// SpanBuilder makes: internal kind, no trace state, flags, events or dropped counts; the
// status always present. The attributes are jobencoder_attrs.go's.
package emit

import (
	"encoding/binary"
	"strconv"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// spanData is everything of one span that the builder sets.
type spanData struct {
	trace        pcommon.TraceID
	span, parent pcommon.SpanID
	name         string
	nameJSON     []byte // name as a JSON string, when known in advance
	start, end   pcommon.Timestamp
	attrs        []spanAttr
	links        []linkData
	statusMsg    string
	statusErr    bool
	// JSON only: the trace and parent span ids in hex, when encoded already (nil: not),
	// and the encoder's cache of repeated values (nil: none).
	traceHex, parentHex []byte
	cache               *jsonCache
}

// linkData is one link to a dependency's span, with its three attributes.
type linkData struct {
	trace pcommon.TraceID
	span  pcommon.SpanID
	attrs [3]spanAttr
}

// appendTo appends the span in format: JSON after a comma when more, protobuf as a
// ScopeSpans.spans field.
func (s *spanData) appendTo(dst []byte, format Format, more bool) []byte {
	if format == FormatProto {
		var at int
		dst, at = openMsg(dst, 0x12, 2)
		dst = s.appendProto(dst)
		return closeMsg(dst, at, 2)
	}
	if more {
		dst = append(dst, ',')
	}
	return s.appendJSON(dst)
}

func (s *spanData) appendJSON(dst []byte) []byte {
	dst = append(dst, '{')
	more := false
	if !s.trace.IsEmpty() {
		dst = appendField(dst, more, "traceId")
		if s.traceHex != nil {
			dst = append(dst, s.traceHex...)
		} else {
			dst = appendHexID(dst, s.trace[:])
		}
		more = true
	}
	if !s.span.IsEmpty() {
		dst = appendField(dst, more, "spanId")
		dst, more = appendHexID(dst, s.span[:]), true
	}
	if !s.parent.IsEmpty() {
		dst = appendField(dst, more, "parentSpanId")
		if s.parentHex != nil {
			dst = append(dst, s.parentHex...)
		} else {
			dst = appendHexID(dst, s.parent[:])
		}
		more = true
	}
	if s.name != "" {
		dst = appendField(dst, more, "name")
		if s.nameJSON != nil {
			dst = append(dst, s.nameJSON...)
		} else {
			dst = appendString(dst, s.name)
		}
		more = true
	}
	dst = appendField(dst, more, "kind")
	dst = strconv.AppendInt(dst, int64(ptrace.SpanKindInternal), 10)
	if s.start != 0 {
		dst = appendField(dst, true, "startTimeUnixNano")
		dst = s.cache.appendQuotedUint(dst, uint64(s.start))
	}
	if s.end != 0 {
		dst = appendField(dst, true, "endTimeUnixNano")
		dst = s.cache.appendQuotedUint(dst, uint64(s.end))
	}
	if len(s.attrs) > 0 {
		dst = appendField(dst, true, "attributes")
		dst = appendSpanAttrsJSON(dst, s.attrs, s.cache)
	}
	if len(s.links) > 0 {
		dst = appendField(dst, true, "links")
		dst = append(dst, '[')
		for i := range s.links {
			l := &s.links[i]
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, '{')
			lmore := false
			if !l.trace.IsEmpty() {
				dst = appendField(dst, lmore, "traceId")
				dst, lmore = appendHexID(dst, l.trace[:]), true
			}
			if !l.span.IsEmpty() {
				dst = appendField(dst, lmore, "spanId")
				dst, lmore = appendHexID(dst, l.span[:]), true
			}
			dst = appendField(dst, lmore, "attributes")
			dst = append(appendSpanAttrsJSON(dst, l.attrs[:], s.cache), '}')
		}
		dst = append(dst, ']')
	}
	dst = appendField(dst, true, "status")
	dst = append(dst, '{')
	if s.statusMsg != "" {
		dst = appendField(dst, false, "message")
		dst = appendString(dst, s.statusMsg)
	}
	if s.statusErr {
		dst = appendField(dst, s.statusMsg != "", "code")
		dst = strconv.AppendInt(dst, int64(ptrace.StatusCodeError), 10)
	}
	return append(dst, '}', '}')
}

func (s *spanData) appendProto(dst []byte) []byte {
	var at int
	dst, at = openMsg(dst, 0x7a, 1)
	if s.statusErr {
		dst = appendVarint(append(dst, 0x18), uint64(ptrace.StatusCodeError))
	}
	if s.statusMsg != "" {
		dst = appendStringField(dst, 0x12, s.statusMsg)
	}
	dst = closeMsg(dst, at, 1)
	for i := range s.links {
		l := &s.links[i]
		dst, at = openMsg(dst, 0x6a, 1)
		for k := range l.attrs {
			dst = appendSpanAttrProto(dst, 0x22, &l.attrs[k])
		}
		dst = appendIDField(dst, 0x12, l.span[:], l.span.IsEmpty())
		dst = appendIDField(dst, 0xa, l.trace[:], l.trace.IsEmpty())
		dst = closeMsg(dst, at, 1)
	}
	for i := range s.attrs {
		dst = appendSpanAttrProto(dst, 0x4a, &s.attrs[i])
	}
	if s.end != 0 {
		dst = binary.LittleEndian.AppendUint64(append(dst, 0x41), uint64(s.end))
	}
	if s.start != 0 {
		dst = binary.LittleEndian.AppendUint64(append(dst, 0x39), uint64(s.start))
	}
	dst = appendVarint(append(dst, 0x30), uint64(ptrace.SpanKindInternal))
	if s.name != "" {
		dst = appendStringField(dst, 0x2a, s.name)
	}
	dst = appendIDField(dst, 0x22, s.parent[:], s.parent.IsEmpty())
	dst = appendIDField(dst, 0x12, s.span[:], s.span.IsEmpty())
	return appendIDField(dst, 0xa, s.trace[:], s.trace.IsEmpty())
}
