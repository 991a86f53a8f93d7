// Deterministic trace and span ids.
//
// Ids are a function of the job's identity, not random: golden files stay stable, and a
// job that depends on another can compute the link to that job's span before (or without)
// seeing it. The derivation is internal/emit/ids (SHA-256 of a domain tag, the builder's
// salt and the identity fields; the trace id is 128 bits of the digest, the span id 64
// more), shared with the CUDA submissions of internal/emit/cudaspans.
//
// A job's identity is its scheduler finished fence (context, seqno) when known. dma_fence
// contexts come from one global counter per boot (dma_fence_context_alloc), so the key is
// unique across devices within a boot and the device is deliberately left out: a
// dependency record names the other job's finished fence but not its device. Keys repeat
// across boots, so the receiver should pass a per-boot salt (WithIDSalt), for example from
// /proc/sys/kernel/random/boot_id. Jobs without a finished fence (old kernels that print
// only pointers or job ids) fall back to (device, ring, job id, start time, tid).
//
// Two jobs can still share an identity: a job the assembler could only put together in
// two pieces, a fence key the kernel reused (a 32-bit seqno wrapped), hostile input. The
// builder therefore checks every span id it hands out against the ids of the last
// idMemory spans (idGuard): a job whose ids are taken gets the next derivation of its
// identity — (identity, occurrence 1, 2, …) — instead, and the renaming is counted. The
// first job of an identity keeps the plain derivation, so links computed from a
// dependency's finished fence still reach it. Span ids are thus unique among the last
// idMemory spans of a builder whatever the input, and across more only as far as the
// identities differ (a repeat further apart than that is a fence key reused across
// 2^32 jobs of one context, or across boots without a salt).
package emit

import (
	"encoding/binary"
	"sync/atomic"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/ghostdriver/ghostdriver/internal/assemble"
	"github.com/ghostdriver/ghostdriver/internal/emit/ids"
	"github.com/ghostdriver/ghostdriver/internal/event"
)

// identityOfFence is the identity of the job whose finished fence is f.
func identityOfFence(salt uint64, f event.FenceKey) ids.Identity {
	var buf [32]byte
	return ids.New(buf[:], ids.TagFence).U64(salt).U64(f.Context).U64(f.Seqno).Identity()
}

// identityOf is the identity of job j.
func identityOf(salt uint64, j *assemble.Job) ids.Identity {
	if !j.Finished.IsZero() {
		return identityOfFence(salt, j.Finished)
	}
	var buf [128]byte
	f := ids.New(buf[:], ids.TagJob).U64(salt).Str(j.Driver).Str(j.Device).Str(j.Ring)
	return f.U64(j.JobID).U64(uint64(j.Start)).U64(uint64(j.TID)).Identity()
}

// derivedIDs are the root trace id and the span id of a job with the given identity.
func derivedIDs(identity ids.Identity) (pcommon.TraceID, pcommon.SpanID) {
	return identity.TraceID(), identity.SpanID()
}

// stageSpanID is the id of the child span of stage s under the job span parent.
func stageSpanID(parent pcommon.SpanID, s assemble.Stage) pcommon.SpanID {
	return ids.Child(parent, ids.TagStage, uint64(s))
}

// jobIDs are the trace id, span id and parent span id of job j's span: the application's
// trace when the job carries a valid context (both ids non-zero, as W3C requires), else
// a trace of its own rooted at the job. The span id and its stage children's ids are
// claimed in g (nil: not checked); stages is how many stage spans the job gets.
func jobIDs(salt uint64, j *assemble.Job, g *idGuard, stages []assemble.StageSpan) (trace pcommon.TraceID, span, parent pcommon.SpanID) {
	identity := identityOf(salt, j)
	trace, span = derivedIDs(identity)
	if g != nil {
		// each occurrence is a fresh draw: the loop ends at the first free one (the bound
		// only keeps hostile input from spinning if the guard were ever full of them)
		for occ := uint64(1); occ <= maxOccurrence && !g.claim(span, stages); occ++ {
			trace, span = derivedIDs(identity.Occurrence(occ))
			g.renamed.Add(1)
		}
	}
	if hasAppContext(j) {
		trace, parent = j.TraceID, j.SpanID
	}
	return trace, span, parent
}

// maxOccurrence bounds the renaming of one job.
const maxOccurrence = 1 << 16

// idMemory is how many recent span ids the guard remembers (3 MiB of table and ring).
const idMemory = 1 << 17

// idGuard remembers the span ids handed out recently.
type idGuard struct {
	used    *idWindow
	renamed atomic.Uint64 // jobs whose derived ids were taken and were renamed
}

func newIDGuard() *idGuard {
	return &idGuard{used: newIDWindow(idMemory)}
}

// claim records the job span id and its stages' ids, or returns false (recording
// nothing) when any of them was handed out already.
func (g *idGuard) claim(span pcommon.SpanID, stages []assemble.StageSpan) bool {
	// Each id derived once: the job span's and one child's a stage (on the stack for a
	// job's usual stages).
	var buf [assemble.NumStages + 1]uint64
	want := append(buf[:0], binary.BigEndian.Uint64(span[:]))
	for i := range stages {
		c := stageSpanID(span, stages[i].Stage)
		want = append(want, binary.BigEndian.Uint64(c[:]))
	}
	g.used.touch(want)
	for _, id := range want {
		if g.used.contains(id) {
			return false
		}
	}
	for _, id := range want {
		g.used.insert(id)
	}
	return true
}

func hasAppContext(j *assemble.Job) bool {
	return j.TraceID != [16]byte{} && j.SpanID != [8]byte{}
}
