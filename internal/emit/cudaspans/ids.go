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
	"github.com/ghostdriver/ghostdriver/internal/emit/fnv"
)

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
	h := fnv.New().Byte(tagSubmission).U64(salt).U64(uint64(s.PID)).U64(s.Stream).Byte(byte(s.Scope))
	return uint64(h.U64(uint64(s.Start)).U64(uint64(s.End)).U64(uint64(tid)))
}

// submissionIDs are the trace id and span id of a submission.
func submissionIDs(salt uint64, s *cuda.Submission) (pcommon.TraceID, pcommon.SpanID) {
	id := identityOf(salt, s)
	var tr pcommon.TraceID
	binary.BigEndian.PutUint64(tr[:8], nonZero(uint64(fnv.New().Byte(tagTraceHi).U64(id))))
	binary.BigEndian.PutUint64(tr[8:], uint64(fnv.New().Byte(tagTraceLo).U64(id)))
	var sp pcommon.SpanID
	binary.BigEndian.PutUint64(sp[:], nonZero(uint64(fnv.New().Byte(tagSpan).U64(id))))
	return tr, sp
}

// childID is the id of the i-th op's span (tagOp) or of the sync's (tagSync, i = 0).
func childID(parent pcommon.SpanID, tag byte, i int) pcommon.SpanID {
	h := fnv.New().Byte(tag).U64(binary.BigEndian.Uint64(parent[:])).U64(uint64(i))
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
