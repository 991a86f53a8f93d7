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
	// The ids, encoded by the encoder once a job (jobencoder_ids.go). JSON: head is `{`
	// and the trace, span and parent span id fields, headMore whether it holds a field.
	// Protobuf: ids are the parent span, span and trace id fields.
	head     []byte
	headMore bool
	ids      []byte
	name     string
	nameKind []byte // the name and kind fields when known in advance (spanNameKind), else nil
	start    pcommon.Timestamp
	end      pcommon.Timestamp
	attrs    []spanAttr
	attrsEnc []byte // the attributes encoded already (stageAttrs.get), else nil: attrs
	links    []linkData
	// status
	statusMsg string
	statusErr bool
	// the encoder's caches (jobencoder_kvcache.go, jobencoder_json.go)
	kv    *kvCache
	times *jsonCache
}

// linkData is one link to a dependency's span, with its attributes (attrs[:n]).
type linkData struct {
	trace pcommon.TraceID
	span  pcommon.SpanID
	attrs [len(linkAttributes)]spanAttr
	n     int
}

// spanNameKind is a span's name and kind fields in format: JSON after another field,
// protobuf in its field order (kind, then name).
func spanNameKind(format Format, name string) []byte {
	if format == FormatProto {
		dst := appendVarint([]byte{0x30}, uint64(ptrace.SpanKindInternal))
		if name != "" {
			dst = appendStringField(dst, 0x2a, name)
		}
		return dst
	}
	var dst []byte
	if name != "" {
		dst = appendString(appendField(dst, true, "name"), name)
	}
	return strconv.AppendInt(appendField(dst, true, "kind"), int64(ptrace.SpanKindInternal), 10)
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
	dst = append(dst, s.head...)
	if more := s.headMore; more && s.nameKind != nil {
		dst = append(dst, s.nameKind...)
	} else {
		if s.name != "" {
			dst = appendField(dst, more, "name")
			dst, more = appendString(dst, s.name), true
		}
		dst = appendField(dst, more, "kind")
		dst = strconv.AppendInt(dst, int64(ptrace.SpanKindInternal), 10)
	}
	if s.start != 0 {
		dst = append(dst, `,"startTimeUnixNano":`...)
		dst = s.times.appendQuotedUint(dst, uint64(s.start))
	}
	if s.end != 0 {
		dst = append(dst, `,"endTimeUnixNano":`...)
		dst = s.times.appendQuotedUint(dst, uint64(s.end))
	}
	if s.attrsEnc != nil {
		dst = append(dst, s.attrsEnc...)
	} else if len(s.attrs) > 0 {
		dst = append(dst, `,"attributes":`...)
		dst = appendSpanAttrsJSON(dst, s.attrs, s.kv)
	}
	if len(s.links) > 0 {
		dst = append(dst, `,"links":`...)
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
			if l.n > 0 {
				dst = appendField(dst, lmore, "attributes")
				dst = appendSpanAttrsJSON(dst, l.attrs[:l.n], s.kv)
			}
			dst = append(dst, '}')
		}
		dst = append(dst, ']')
	}
	dst = append(dst, `,"status":`...)
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
	if s.statusErr || s.statusMsg != "" {
		var at int
		dst, at = openMsg(dst, 0x7a, 1)
		if s.statusErr {
			dst = appendVarint(append(dst, 0x18), uint64(ptrace.StatusCodeError))
		}
		if s.statusMsg != "" {
			dst = appendStringField(dst, 0x12, s.statusMsg)
		}
		dst = closeMsg(dst, at, 1)
	} else {
		dst = append(dst, 0x7a, 0) // an empty status is written
	}
	for i := range s.links {
		l := &s.links[i]
		var at int
		dst, at = openMsg(dst, 0x6a, 1)
		for k := range l.attrs[:l.n] {
			dst = appendSpanAttrProto(dst, 0x22, &l.attrs[k], s.kv)
		}
		dst = appendIDField(dst, 0x12, l.span[:], l.span.IsEmpty())
		dst = appendIDField(dst, 0xa, l.trace[:], l.trace.IsEmpty())
		dst = closeMsg(dst, at, 1)
	}
	dst = append(dst, s.attrsEnc...)
	for i := range s.attrs {
		dst = appendSpanAttrProto(dst, 0x4a, &s.attrs[i], s.kv)
	}
	if s.end != 0 {
		dst = binary.LittleEndian.AppendUint64(append(dst, 0x41), uint64(s.end))
	}
	if s.start != 0 {
		dst = binary.LittleEndian.AppendUint64(append(dst, 0x39), uint64(s.start))
	}
	if s.nameKind != nil {
		dst = append(dst, s.nameKind...)
	} else {
		dst = appendVarint(append(dst, 0x30), uint64(ptrace.SpanKindInternal))
		if s.name != "" {
			dst = appendStringField(dst, 0x2a, s.name)
		}
	}
	return append(dst, s.ids...)
}
