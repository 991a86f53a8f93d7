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
// A job's span ids are one 64-bit value split in two: the job span's id is the digest's
// span id with its low 4 bits cleared (the job's base, 60 bits of the digest), and its stage
// spans' ids are that base with the stage's number + 1 in those bits. So the spans of two
// jobs share an id only if the jobs share a base, and the stage spans of one job never
// share one: keeping job bases unique keeps every span id unique.
//
// Two jobs can still share an identity: a job the assembler could only put together in
// two pieces, a fence key the kernel reused (a 32-bit seqno wrapped), hostile input. The
// builder therefore checks every job's base against the bases of the last idMemory jobs
// (idGuard): a job whose base is taken gets the next derivation of its identity —
// (identity, occurrence 1, 2, …) — instead, and the renaming is counted. The first job of
// an identity keeps the plain derivation, so links computed from a dependency's finished
// fence still reach it. Span ids are thus unique among the spans of the last idMemory
// jobs of a builder whatever the input, and across more only as far as the identities
// differ (a repeat further apart than that is a fence key reused across 2^32 jobs of one
// context, or across boots without a salt). One id a job is claimed, not one a span: the
// guard's table is read once per job instead of once per span (ten times a job with stage
// spans), where its cache misses were most of the guard's cost.

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

// stageBits are the low bits of a job's span id that number its stage spans: the job span
// has 0 there, stage s has s + 1.
const stageBits = 0x0f

// Every stage's number + 1 fits in stageBits (a negative array length fails the build).
var _ [stageBits - assemble.NumStages]struct{}

// derivedIDs are the root trace id and the span id (the job's base) of a job with the
// given identity.
func derivedIDs(identity ids.Identity) (pcommon.TraceID, pcommon.SpanID) {
	span := identity.SpanID()
	span[7] &^= stageBits
	if span.IsEmpty() {
		span[6] = 1 // never all zero: that means "absent" in OTLP
	}
	return identity.TraceID(), span
}

// stageSpanID is the id of the span of stage s of the job whose span id is parent.
func stageSpanID(parent pcommon.SpanID, s assemble.Stage) pcommon.SpanID {
	parent[7] = parent[7]&^stageBits | (byte(s) + 1)
	return parent
}

// jobIDs are the trace id, span id and parent span id of job j's span: the application's
// trace when the job carries a valid context (both ids non-zero, as W3C requires), else
// a trace of its own rooted at the job. The span id (the base of the job's stage spans'
// ids) is claimed in g (nil: not checked).
func jobIDs(salt uint64, j *assemble.Job, g *idGuard) (trace pcommon.TraceID, span, parent pcommon.SpanID) {
	trace, span, parent, _ = sampledJobIDs(salt, j, g, false)
	return trace, span, parent
}

// RootTraceID is the trace id job j's spans carry when they are the root of their own
// trace, before any renaming (the id guard's): what the sampler draws its randomness from.
func RootTraceID(salt uint64, j *assemble.Job) [16]byte {
	trace, _ := derivedIDs(identityOf(salt, j))
	return trace
}

// sampledJobIDs is jobIDs for a job the sampler kept: detached, the job is the root of
// its own trace even when it carries an application context (Sampled.Detach). renamed
// reports that the trace id is not RootTraceID's (the guard renamed the job).
func sampledJobIDs(salt uint64, j *assemble.Job, g *idGuard, detach bool) (trace pcommon.TraceID, span, parent pcommon.SpanID, renamed bool) {
	identity := identityOf(salt, j)
	trace, span = derivedIDs(identity)
	if g != nil {
		// each occurrence is a fresh draw: the loop ends at the first free one (the bound
		// only keeps hostile input from spinning if the guard were ever full of them)
		for occ := uint64(1); occ <= maxOccurrence && !g.claim(span); occ++ {
			trace, span = derivedIDs(identity.Occurrence(occ))
			g.renamed.Add(1)
			renamed = true
		}
	}
	if hasAppContext(j) && !detach {
		trace, parent, renamed = j.TraceID, j.SpanID, false
	}
	return trace, span, parent, renamed
}

// maxOccurrence bounds the renaming of one job.
const maxOccurrence = 1 << 16

// idMemory is how many recent jobs' span ids the guard remembers (3 MiB of table and
// ring).
const idMemory = 1 << 17

// idGuard remembers the job span ids (bases) handed out recently.
type idGuard struct {
	used    *idWindow
	renamed atomic.Uint64 // jobs whose derived ids were taken and were renamed
}

func newIDGuard() *idGuard {
	return &idGuard{used: newIDWindow(idMemory)}
}

// claim records the job span id span (the base of its stage spans' ids), or returns false
// (recording nothing) when it was handed out already.
func (g *idGuard) claim(span pcommon.SpanID) bool {
	id := binary.BigEndian.Uint64(span[:])
	if g.used.contains(id) {
		return false
	}
	g.used.insert(id)
	return true
}

func hasAppContext(j *assemble.Job) bool {
	return j.TraceID != [16]byte{} && j.SpanID != [8]byte{}
}
