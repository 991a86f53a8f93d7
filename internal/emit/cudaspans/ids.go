// Deterministic ids, derived as internal/emit's are (internal/emit/ids: the same
// derivation, its own domain tags, so a CUDA submission and a DRM job never share an id).
//
// A submission's identity is (pid, stream, sync scope, start, end, thread of the sync or
// of the first op): two submissions of one process cannot share all of them. Children are
// derived from the submission's span id and their position (ops in start order; the sync
// has its own tag), so the same capture always gives the same ids.

package cudaspans

import (
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/ghostdriver/ghostdriver/internal/cuda"
	"github.com/ghostdriver/ghostdriver/internal/emit/ids"
)

func identityOf(salt uint64, s *cuda.Submission) ids.Identity {
	var tid uint32
	switch {
	case s.Sync != nil:
		tid = s.Sync.TID
	case len(s.Ops) > 0:
		tid = s.Ops[0].TID
	}
	var buf [64]byte
	f := ids.New(buf[:], ids.TagSubmission).U64(salt).U64(uint64(s.PID)).U64(s.Stream).U64(uint64(s.Scope))
	return f.U64(uint64(s.Start)).U64(uint64(s.End)).U64(uint64(tid)).Identity()
}

// submissionIDs are the trace id and span id of a submission.
func submissionIDs(salt uint64, s *cuda.Submission) (pcommon.TraceID, pcommon.SpanID) {
	id := identityOf(salt, s)
	return id.TraceID(), id.SpanID()
}

// childID is the id of the i-th op's span (ids.TagOp) or of the sync's (ids.TagSync, i = 0).
func childID(parent pcommon.SpanID, tag ids.Tag, i int) pcommon.SpanID {
	return ids.Child(parent, tag, uint64(i))
}
