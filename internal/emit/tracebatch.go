// TraceBatch: one ExportTraceServiceRequest's worth of encoded spans (JobEncoder.Take),
// written as one request: one ResourceSpans per tenant, in the order the tenants' first
// jobs came, then the resource spans of other job kinds (AddTraces).
//
// The tenants' span bytes are not copied into one buffer: WriteTo writes the request as
// pieces (framing, a tenant's spans, framing, …), so that a buffered file writer passes
// the large ones straight through.

package emit

import (
	"io"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/ghostdriver/ghostdriver/internal/metadata"
)

// TraceBatch is a batch of encoded spans. Release it once written.
type TraceBatch struct {
	format  Format
	tenants []batchTenant // [:n] in use; the rest keep their buffers for reuse
	n       int
	jobs    int
	spans   int
	// extra holds the resource spans of other job kinds (AddTraces), already encoded:
	// protobuf ResourceSpans fields, or JSON objects separated by commas.
	extra      []byte
	extraSpans int

	scopeVersion string
	frame        []byte   // the framing around the tenants' spans (encode)
	pieces       [][]byte // the request, in order (encode)
	size         int
	free         chan<- *TraceBatch
}

// batchTenant is one tenant's resource and its encoded spans.
type batchTenant struct {
	tenantResource
	spans []byte
	count int
}

func (b *TraceBatch) reset() {
	b.n, b.jobs, b.spans, b.extraSpans, b.size = 0, 0, 0, 0, 0
	b.extra, b.frame, b.pieces = b.extra[:0], b.frame[:0], b.pieces[:0]
}

// Jobs is the number of jobs encoded in the batch.
func (b *TraceBatch) Jobs() int { return b.jobs }

// SpanCount is the number of spans in the batch, AddTraces's included.
func (b *TraceBatch) SpanCount() int { return b.spans + b.extraSpans }

// Empty reports whether the batch holds no resource spans.
func (b *TraceBatch) Empty() bool { return b.n == 0 && len(b.extra) == 0 }

// AddTraces appends td's resource spans (another job kind's, built with pdata) after
// the batch's own.
func (b *TraceBatch) AddTraces(td ptrace.Traces) {
	rss := td.ResourceSpans()
	if b.format == FormatProto {
		b.extra = AppendTracesProto(b.extra, td)
	} else {
		for i := 0; i < rss.Len(); i++ {
			if len(b.extra) > 0 {
				b.extra = append(b.extra, ',')
			}
			b.extra = appendResourceSpans(b.extra, rss.At(i))
		}
	}
	b.extraSpans += td.SpanCount()
	b.pieces = b.pieces[:0] // encode again
}

// Size is the request's length in bytes.
func (b *TraceBatch) Size() int {
	b.encode()
	return b.size
}

// WriteTo writes the request (no framing of the file's: no length prefix, no newline).
func (b *TraceBatch) WriteTo(w io.Writer) (int64, error) {
	b.encode()
	var n int64
	for _, p := range b.pieces {
		m, err := w.Write(p)
		n += int64(m)
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// AppendTo appends the request to dst.
func (b *TraceBatch) AppendTo(dst []byte) []byte {
	b.encode()
	for _, p := range b.pieces {
		dst = append(dst, p...)
	}
	return dst
}

// maxPooledBatch bounds the buffers a released batch may keep for reuse: a lossless
// batch of 1024 jobs is a few MB; a live one that grew behind a stalled writer (up to the
// pipeline's MaxBufferedJobs) is left to the garbage collector instead of being held.
const maxPooledBatch = 32 << 20

// Release hands the batch back to its encoder for reuse; do not use it afterwards.
func (b *TraceBatch) Release() {
	if b.free == nil {
		return
	}
	held := cap(b.extra) + cap(b.frame)
	for i := range b.tenants {
		held += cap(b.tenants[i].spans)
	}
	if held > maxPooledBatch {
		return
	}
	select {
	case b.free <- b:
	default:
	}
}

// encode lays out the framing and the pieces (once; again after AddTraces).
func (b *TraceBatch) encode() {
	if len(b.pieces) > 0 {
		return
	}
	b.frame = b.frame[:0]
	// The request in order: ranges of frame (recorded as offsets: frame may move while it
	// grows) and the tenants' span buffers.
	var local [64]pieceRef
	refs := local[:0]
	framed := func(from int) { refs = append(refs, pieceRef{from: from, to: len(b.frame)}) }
	outside := func(p []byte) { refs = append(refs, pieceRef{ext: p, outside: true}) }
	if b.format == FormatProto {
		for i := 0; i < b.n; i++ {
			t := &b.tenants[i]
			head, tail, tailEnd := b.protoFrame(t)
			refs = append(refs, pieceRef{from: head, to: len(b.frame)})
			outside(t.spans)
			refs = append(refs, pieceRef{from: tail, to: tailEnd})
		}
		outside(b.extra)
	} else if b.n == 0 && len(b.extra) == 0 {
		b.frame = append(b.frame, '{', '}')
		framed(0)
	} else {
		from := len(b.frame)
		b.frame = append(b.frame, `{"resourceSpans":[`...)
		for i := 0; i < b.n; i++ {
			t := &b.tenants[i]
			if i > 0 {
				b.frame = append(b.frame, ',')
			}
			b.frame = append(b.frame, `{"resource":{`...)
			b.frame, _ = appendAttrsField(b.frame, t.res, false)
			b.frame = append(b.frame, `},"scopeSpans":[{"scope":{"name":`...)
			b.frame = appendString(b.frame, metadata.ScopeName)
			if v := b.scopeVersion; v != "" {
				b.frame = append(b.frame, `,"version":`...)
				b.frame = appendString(b.frame, v)
			}
			b.frame = append(b.frame, `},"spans":[`...)
			framed(from)
			outside(t.spans)
			from = len(b.frame)
			b.frame = append(b.frame, `]}]}`...)
		}
		if b.n > 0 && len(b.extra) > 0 {
			b.frame = append(b.frame, ',')
		}
		framed(from)
		outside(b.extra)
		from = len(b.frame)
		b.frame = append(b.frame, ']', '}')
		framed(from)
	}
	b.size = 0
	for _, r := range refs {
		p := r.ext
		if !r.outside {
			p = b.frame[r.from:r.to]
		}
		if len(p) > 0 {
			b.pieces = append(b.pieces, p)
			b.size += len(p)
		}
	}
	if len(b.pieces) == 0 {
		b.pieces = append(b.pieces, []byte{}) // encoded: an empty request
	}
}

// pieceRef is a piece of the request: a range of frame, or a buffer outside it.
type pieceRef struct {
	from, to int
	ext      []byte
	outside  bool
}

// protoFrame appends tenant t's framing to frame: its tail (after its spans: the scope,
// then the resource, pdata's field order being highest number first) at [tail, tailEnd),
// then its head (the ResourceSpans and ScopeSpans tags and lengths) from head to the end.
func (b *TraceBatch) protoFrame(t *batchTenant) (head, tail, tailEnd int) {
	tail = len(b.frame)
	var at int
	b.frame, at = openMsg(b.frame, 0xa, 1)
	if v := b.scopeVersion; v != "" {
		b.frame = appendStringField(b.frame, 0x12, v)
	}
	b.frame = appendStringField(b.frame, 0xa, metadata.ScopeName)
	b.frame = closeMsg(b.frame, at, 1)
	scopeLen := len(b.frame) - tail
	b.frame, at = openMsg(b.frame, 0xa, 2)
	b.frame = appendAttrsProto(b.frame, 0xa, t.res)
	b.frame = closeMsg(b.frame, at, 2)
	tailEnd = len(b.frame)

	ssLen := len(t.spans) + scopeLen
	rsLen := 1 + varintLen(uint64(ssLen)) + ssLen + (tailEnd - tail - scopeLen)
	head = len(b.frame)
	b.frame = appendVarint(append(b.frame, 0xa), uint64(rsLen))
	b.frame = appendVarint(append(b.frame, 0x12), uint64(ssLen))
	return head, tail, tailEnd
}
