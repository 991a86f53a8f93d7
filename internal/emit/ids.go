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
package emit

import (
	"encoding/binary"

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
// a trace of its own rooted at the job.
func jobIDs(salt uint64, j *assemble.Job) (trace pcommon.TraceID, span, parent pcommon.SpanID) {
	trace, span = derivedIDs(identityOf(salt, j))
	if hasAppContext(j) {
		trace, parent = j.TraceID, j.SpanID
	}
	return trace, span, parent
}

func hasAppContext(j *assemble.Job) bool {
	return j.TraceID != [16]byte{} && j.SpanID != [8]byte{}
}
