// Deterministic ids, with the scheme of internal/emit (ids.go): FNV-1a 64 over a domain
// tag, the per-boot salt and the identity fields in a fixed little-endian layout. The
// tags differ from emit's, so a CUDA submission and a DRM job never share an id.
//
// A submission's identity is (pid, stream, sync scope, start, end, thread of the sync or
// of the first op): two submissions of one process cannot share all of them. Children are
// derived from the submission's span id and their position (ops in start order; the sync
// has its own tag), so the same capture always gives the same ids.
package cudaspans

import (
	"encoding/binary"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/ghostdriver/ghostdriver/internal/cuda"
)

const (
	fnvOffset64 = 14695981039346656037
	fnvPrime64  = 1099511628211
)

type fnv1a uint64

func newFNV() fnv1a { return fnvOffset64 }

func (h fnv1a) byte(b byte) fnv1a { return (h ^ fnv1a(b)) * fnvPrime64 }

func (h fnv1a) u64(v uint64) fnv1a {
	for i := 0; i < 8; i++ {
		h = h.byte(byte(v))
		v >>= 8
	}
	return h
}

// Domain tags (emit uses F, J, s, h, l, c).
const (
	tagSubmission byte = 'U'
	tagTraceHi    byte = 'H'
	tagTraceLo    byte = 'L'
	tagSpan       byte = 'S'
	tagOp         byte = 'o'
	tagSync       byte = 'y'
)

func identityOf(salt uint64, s *cuda.Submission) uint64 {
	var tid uint32
	switch {
	case s.Sync != nil:
		tid = s.Sync.TID
	case len(s.Ops) > 0:
		tid = s.Ops[0].TID
	}
	h := newFNV().byte(tagSubmission).u64(salt).u64(uint64(s.PID)).u64(s.Stream).byte(byte(s.Scope))
	return uint64(h.u64(uint64(s.Start)).u64(uint64(s.End)).u64(uint64(tid)))
}

// submissionIDs are the trace id and span id of a submission.
func submissionIDs(salt uint64, s *cuda.Submission) (pcommon.TraceID, pcommon.SpanID) {
	id := identityOf(salt, s)
	var tr pcommon.TraceID
	binary.BigEndian.PutUint64(tr[:8], nonZero(uint64(newFNV().byte(tagTraceHi).u64(id))))
	binary.BigEndian.PutUint64(tr[8:], uint64(newFNV().byte(tagTraceLo).u64(id)))
	var sp pcommon.SpanID
	binary.BigEndian.PutUint64(sp[:], nonZero(uint64(newFNV().byte(tagSpan).u64(id))))
	return tr, sp
}

// childID is the id of the i-th op's span (tagOp) or of the sync's (tagSync, i = 0).
func childID(parent pcommon.SpanID, tag byte, i int) pcommon.SpanID {
	h := newFNV().byte(tag).u64(binary.BigEndian.Uint64(parent[:])).u64(uint64(i))
	var sp pcommon.SpanID
	binary.BigEndian.PutUint64(sp[:], nonZero(uint64(h)))
	return sp
}

func nonZero(v uint64) uint64 {
	if v == 0 {
		return 1
	}
	return v
}
