// A job's span ids as the JobEncoder writes them, encoded once a job: the job span's
// ids, and a stage span's, whose span id differs from one stage to the next only in its
// last byte (a stage span's id is the job's with the stage in its low bits, ids.go), so
// that byte is all a stage span rewrites.

package emit

import "go.opentelemetry.io/collector/pdata/pcommon"

// encodedIDs holds a job's encoded ids: JSON `{` and the id fields (more: a field was
// written); protobuf the parent span, span and trace id fields (spanData.head, .ids).
type encodedIDs struct {
	format             Format
	job, stage         []byte
	jobMore, stageMore bool
	at                 int // where stage holds its span id's last byte
}

// set encodes the ids of a job's span (trace, span, parent) and of its stage spans, and
// the tracestate all of them carry ("": none), which pdata writes between the ids.
func (b *encodedIDs) set(trace pcommon.TraceID, span, parent pcommon.SpanID, state string) {
	stage := stageSpanID(span, 0)
	if b.format == FormatProto {
		b.job = appendIDsProto(b.job[:0], trace, span, parent, state)
		b.stage = appendIDField(b.stage[:0], 0x22, span[:], span.IsEmpty())
		if state != "" {
			b.stage = appendStringField(b.stage, 0x1a, state)
		}
		b.stage = appendIDField(b.stage, 0x12, stage[:], false) // never empty: stage bits
		b.at = len(b.stage) - 1
		b.stage = appendIDField(b.stage, 0xa, trace[:], trace.IsEmpty())
		return
	}
	b.job, b.jobMore, _ = appendIDsJSON(b.job[:0], trace, span, parent, state)
	b.stage, b.stageMore, b.at = appendIDsJSON(b.stage[:0], trace, stage, span, state)
}

// forStage returns the stage block for the stage span whose id is id.
func (b *encodedIDs) forStage(id pcommon.SpanID) []byte {
	if b.format == FormatProto {
		b.stage[b.at] = id[7]
	} else {
		b.stage[b.at], b.stage[b.at+1] = hexDigits[id[7]>>4], hexDigits[id[7]&0xf]
	}
	return b.stage
}

// appendIDsProto appends the parent span, span and trace id fields (pdata's order).
func appendIDsProto(dst []byte, trace pcommon.TraceID, span, parent pcommon.SpanID, state string) []byte {
	dst = appendIDField(dst, 0x22, parent[:], parent.IsEmpty())
	if state != "" {
		dst = appendStringField(dst, 0x1a, state)
	}
	dst = appendIDField(dst, 0x12, span[:], span.IsEmpty())
	return appendIDField(dst, 0xa, trace[:], trace.IsEmpty())
}

// appendIDsJSON appends `{` and the non-empty id fields; more reports a field written,
// at where the span id's last byte's two hex digits are (0: no span id).
func appendIDsJSON(dst []byte, trace pcommon.TraceID, span, parent pcommon.SpanID, state string) (_ []byte, more bool, at int) {
	dst = append(dst, '{')
	if !trace.IsEmpty() {
		dst = appendField(dst, more, "traceId")
		dst, more = appendHexID(dst, trace[:]), true
	}
	if !span.IsEmpty() {
		dst = appendField(dst, more, "spanId")
		dst, more = appendHexID(dst, span[:]), true
		at = len(dst) - 3
	}
	if state != "" {
		dst = appendField(dst, more, "traceState")
		dst, more = appendString(dst, state), true
	}
	if !parent.IsEmpty() {
		dst = appendField(dst, more, "parentSpanId")
		dst, more = appendHexID(dst, parent[:]), true
	}
	return dst, more, at
}
