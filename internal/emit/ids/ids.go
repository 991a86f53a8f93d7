// Package ids derives the deterministic trace and span ids of every span the receiver
// emits: DRM jobs (internal/emit) and CUDA submissions (internal/emit/cudaspans) use this
// one derivation, and their domain tags are one table below, so the two schemes can
// neither drift apart nor give a job and a submission the same id.
//
// An identity is the SHA-256 digest of a domain tag and the identity's fields in a fixed
// little-endian layout (Fields; strings are followed by their length, so adjacent strings
// cannot run into each other). The span's trace id is the digest's first 16 bytes and its
// span id the next 8: 128 and 64 bits of one digest of the whole input, so distinct
// identities get trace ids as unique as W3C Trace Context expects of random ones, while
// equal identities get equal ids (golden files stay stable, and a link to a job can be
// computed from its finished fence alone). SHA-256 is specified, stable across Go releases
// and platforms, in the standard library, and runs on the CPU's SHA instructions where
// there are some; internal/emit's BenchmarkJobIDs measures the cost per job.
//
// A submission's child span (a call, its sync) gets a 64-bit mix of its parent's span id
// keyed by its tag and index (Child). A DRM job's stage spans take their ids from the job's
// span id instead (internal/emit/ids.go: the low 4 bits number the stages).
package ids

import (
	"crypto/sha256"
	"encoding/binary"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// Tag is a domain tag: the first byte hashed, different for every kind of identity.
type Tag byte

// Domain tags, one table for every package that derives ids.
const (
	// internal/emit: DRM jobs.
	TagFence      Tag = 'F' // a job known by its finished fence: salt, context, seqno
	TagJob        Tag = 'J' // a job without one: salt, driver, device, ring, job id, start, tid
	TagOccurrence Tag = 'o' // the n-th job of one identity (the collision guard's renaming)
	// 'c' was a job's stage span (Child) until stage ids took the job's base: not reused.
	// internal/emit/cudaspans: CUDA submissions.
	TagSubmission Tag = 'U' // salt, pid, stream, scope, start, end, tid
	TagOp         Tag = 'p' // a submission's i-th call span
	TagSync       Tag = 'y' // a submission's sync span
	TagGPU        Tag = 'g' // a submission's i-th GPU stage span (queue, execution, completion)
)

// Fields is an identity's input as it is built: New, then U64/Str/Bytes in a fixed order.
// Appending to a caller's stack buffer keeps the derivation free of allocations.
type Fields []byte

// New starts the fields of an identity with its tag, reusing buf's storage.
func New(buf []byte, tag Tag) Fields { return append(Fields(buf[:0]), byte(tag)) }

// U64 appends v in little-endian byte order.
func (f Fields) U64(v uint64) Fields { return binary.LittleEndian.AppendUint64(f, v) }

// Str appends s and then its length.
func (f Fields) Str(s string) Fields { return append(f, s...).U64(uint64(len(s))) }

// Bytes appends b as it is (fixed-size values only: no length follows).
func (f Fields) Bytes(b []byte) Fields { return append(f, b...) }

// Identity is the digest of the fields.
func (f Fields) Identity() Identity { return sha256.Sum256(f) }

// Identity is the SHA-256 digest of an identity's fields.
type Identity [sha256.Size]byte

// TraceID is the trace id of a span rooted at this identity (never all zero: that means
// "absent" in OTLP).
func (id Identity) TraceID() pcommon.TraceID {
	var t pcommon.TraceID
	copy(t[:], id[:16])
	if t.IsEmpty() {
		t[15] = 1
	}
	return t
}

// SpanID is the span id of this identity's span (never all zero).
func (id Identity) SpanID() pcommon.SpanID {
	var s pcommon.SpanID
	copy(s[:], id[16:24])
	if s.IsEmpty() {
		s[7] = 1
	}
	return s
}

// Occurrence is the identity of the n-th further span of this identity (n ≥ 1): a fresh
// draw the collision guard takes when this identity's ids are already handed out.
func (id Identity) Occurrence(n uint64) Identity {
	var buf [48]byte
	return New(buf[:], TagOccurrence).Bytes(id[:]).U64(n).Identity()
}

// Child is the span id of the i-th child of kind tag under the span parent: a span id is
// 64 bits whatever the hash, so children take a cheap bijective mix of the parent's id
// (SplitMix64's finaliser, Steele, Lea and Flood 2014) keyed by (tag, i) instead of a
// digest (a SHA-256 per stage span doubled the id cost of a job). Bijective: two parents
// never give one child id for the same (tag, i).
func Child(parent pcommon.SpanID, tag Tag, i uint64) pcommon.SpanID {
	v := mix64(binary.BigEndian.Uint64(parent[:]) ^ mix64(uint64(tag)<<56|i))
	if v == 0 {
		v = 1
	}
	var s pcommon.SpanID
	binary.BigEndian.PutUint64(s[:], v)
	return s
}

// mix64 is SplitMix64's output function (Stafford's Mix13): a bijection of 64-bit values.
func mix64(z uint64) uint64 {
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}
