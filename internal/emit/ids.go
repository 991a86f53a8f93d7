// Deterministic trace and span ids.
//
// Ids are a function of the job's identity, not random: golden files stay stable, and a
// job that depends on another can compute the link to that job's span before (or without)
// seeing it. The hash is FNV-1a 64 (stable across Go releases and platforms, no
// allocation), fed with a domain tag, the builder's salt and the identity fields in a
// fixed little-endian layout.
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
	"github.com/ghostdriver/ghostdriver/internal/emit/fnv"
	"github.com/ghostdriver/ghostdriver/internal/event"
)

// Domain tags keep the derivations apart.
const (
	tagFenceIdentity byte = 'F'
	tagJobIdentity   byte = 'J'
	tagSpan          byte = 's'
	tagTraceHi       byte = 'h'
	tagTraceLo       byte = 'l'
	tagStage         byte = 'c'
	tagOccurrence    byte = 'o'
)

// identityOfFence is the identity of the job whose finished fence is f.
func identityOfFence(salt uint64, f event.FenceKey) uint64 {
	return uint64(fnv.New().Byte(tagFenceIdentity).U64(salt).U64(f.Context).U64(f.Seqno))
}

// identityOf is the identity of job j.
func identityOf(salt uint64, j *assemble.Job) uint64 {
	if !j.Finished.IsZero() {
		return identityOfFence(salt, j.Finished)
	}
	h := fnv.New().Byte(tagJobIdentity).U64(salt).Str(j.Driver).Str(j.Device).Str(j.Ring)
	return uint64(h.U64(j.JobID).U64(uint64(j.Start)).U64(uint64(j.TID)))
}

// derivedIDs are the root trace id and the span id of a job with the given identity.
func derivedIDs(identity uint64) (pcommon.TraceID, pcommon.SpanID) {
	var tid pcommon.TraceID
	binary.BigEndian.PutUint64(tid[:8], nonZero(uint64(fnv.New().Byte(tagTraceHi).U64(identity))))
	binary.BigEndian.PutUint64(tid[8:], uint64(fnv.New().Byte(tagTraceLo).U64(identity)))
	var sid pcommon.SpanID
	binary.BigEndian.PutUint64(sid[:], nonZero(uint64(fnv.New().Byte(tagSpan).U64(identity))))
	return tid, sid
}

// stageSpanID is the id of the child span of stage s under the job span parent.
func stageSpanID(parent pcommon.SpanID, s assemble.Stage) pcommon.SpanID {
	h := fnv.New().Byte(tagStage).U64(binary.BigEndian.Uint64(parent[:])).Byte(byte(s))
	var sid pcommon.SpanID
	binary.BigEndian.PutUint64(sid[:], nonZero(uint64(h)))
	return sid
}

// nonZero keeps an id valid: all-zero trace and span ids mean "absent" in OTLP.
func nonZero(v uint64) uint64 {
	if v == 0 {
		return 1
	}
	return v
}

// jobIDs are the trace id, span id and parent span id of job j's span: the application's
// trace when the job carries a valid context (both ids non-zero, as W3C requires), else
// a trace of its own rooted at the job. The span id and its stage children's ids are
// claimed in g (nil: not checked); stages is how many stage spans the job gets.
func jobIDs(salt uint64, j *assemble.Job, g *idGuard, stages []assemble.StageSpan) (trace pcommon.TraceID, span, parent pcommon.SpanID) {
	identity := identityOf(salt, j)
	trace, span = derivedIDs(identity)
	if g != nil {
		// each occurrence is a fresh 64-bit draw: the loop ends at the first free one (the
		// bound only keeps hostile input from spinning if the guard were ever full of them)
		for occ := uint64(1); occ <= maxOccurrence && !g.claim(span, stages); occ++ {
			trace, span = derivedIDs(uint64(fnv.New().Byte(tagOccurrence).U64(identity).U64(occ)))
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

// idMemory is how many recent span ids the guard remembers (2 MiB of index and ring).
const idMemory = 1 << 17

// idGuard remembers the span ids handed out recently.
type idGuard struct {
	used    *recent[uint64, struct{}]
	renamed atomic.Uint64 // jobs whose derived ids were taken and were renamed
}

func newIDGuard() *idGuard {
	return &idGuard{used: newRecent[uint64, struct{}](idMemory, func(v uint64) uint64 { return v })}
}

// claim records the job span id and its stages' ids, or returns false (recording
// nothing) when any of them was handed out already.
func (g *idGuard) claim(span pcommon.SpanID, stages []assemble.StageSpan) bool {
	id := binary.BigEndian.Uint64(span[:])
	if _, taken := g.used.get(id); taken {
		return false
	}
	for i := range stages {
		c := stageSpanID(span, stages[i].Stage)
		if _, taken := g.used.get(binary.BigEndian.Uint64(c[:])); taken {
			return false
		}
	}
	g.used.put(id, struct{}{})
	for i := range stages {
		c := stageSpanID(span, stages[i].Stage)
		g.used.put(binary.BigEndian.Uint64(c[:]), struct{}{})
	}
	return true
}

func hasAppContext(j *assemble.Job) bool {
	return j.TraceID != [16]byte{} && j.SpanID != [8]byte{}
}
