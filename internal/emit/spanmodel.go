// The span model of a DRM job, once: which attributes the gpu.job span, its stage spans
// and its links carry, in which order, and when each is left out. Both writers read these
// tables: the SpanBuilder puts each attribute into pdata (putOwnAttrs), the JobEncoder
// writes it as bytes (jobencoder_attrs.go) with its key encoded once. Adding an attribute
// to a span is one row here (and its declaration in metadata.yaml / telemetry-extra.yaml);
// jobencoder_test.go holds the two writers to the same bytes and fails when no fixture
// sets a row's attribute. The status and the link targets are here too, for the same
// reason.

package emit

import (
	"math"
	"strconv"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/ghostdriver/ghostdriver/internal/assemble"
	"github.com/ghostdriver/ghostdriver/internal/attr"
	"github.com/ghostdriver/ghostdriver/internal/ctxtier"
	"github.com/ghostdriver/ghostdriver/internal/event"
	"github.com/ghostdriver/ghostdriver/internal/metadata"
)

// ownValue is the value of one of the builder's own attributes: a string, an int or a
// bool (num 0 or 1); kind attr.KindEmpty means the job does not know it, and the
// attribute is left out rather than written as zero.
type ownValue struct {
	kind attr.Kind
	str  string
	num  int64
}

// strValue is s, left out when empty.
func strValue(s string) ownValue {
	if s == "" {
		return ownValue{}
	}
	return ownValue{kind: attr.KindString, str: s}
}

// intValue is v when known.
func intValue(known bool, v int64) ownValue {
	if !known {
		return ownValue{}
	}
	return ownValue{kind: attr.KindInt, num: v}
}

// uintValue is a kernel uint64 when known, without wrapping: an int when it fits int64
// (always, in practice: fence contexts come from a boot-wide counter and drm_sched seqnos
// are 32-bit), else its exact decimal string under the same key.
func uintValue(known bool, v uint64) ownValue {
	if !known {
		return ownValue{}
	}
	if v > math.MaxInt64 {
		return ownValue{kind: attr.KindString, str: strconv.FormatUint(v, 10)}
	}
	return ownValue{kind: attr.KindInt, num: int64(v)}
}

// trueValue is true when set, else left out.
func trueValue(set bool) ownValue {
	if !set {
		return ownValue{}
	}
	return ownValue{kind: attr.KindBool, num: 1}
}

// ownAttr is one row of a span's attribute table: its key, encoded once, and its value
// taken from T (the job, a stage's key, a dependency).
type ownAttr[T any] struct {
	key   *attrKey
	value func(*T) ownValue
}

// jobAttributes are the gpu.job span's own attributes, in their order; the tenant's
// (Job.Attrs) follow and may replace them.
var jobAttributes = [...]ownAttr[assemble.Job]{
	{newAttrKey(metadata.AttrDriver), func(j *assemble.Job) ownValue { return strValue(j.Driver) }},
	{newAttrKey(metadata.AttrDevice), func(j *assemble.Job) ownValue { return strValue(j.Device) }},
	{newAttrKey(metadata.AttrRing), func(j *assemble.Job) ownValue { return strValue(j.Ring) }},
	{newAttrKey(metadata.AttrFenceContext), func(j *assemble.Job) ownValue {
		return uintValue(!j.Finished.IsZero(), j.Finished.Context)
	}},
	{newAttrKey(metadata.AttrFenceSeqno), func(j *assemble.Job) ownValue {
		return uintValue(!j.Finished.IsZero(), j.Finished.Seqno)
	}},
	{newAttrKey(metadata.AttrHWFenceContext), func(j *assemble.Job) ownValue {
		return uintValue(!j.HWFence.IsZero(), j.HWFence.Context)
	}},
	{newAttrKey(metadata.AttrHWFenceSeqno), func(j *assemble.Job) ownValue {
		return uintValue(!j.HWFence.IsZero(), j.HWFence.Seqno)
	}},
	{newAttrKey(metadata.AttrJobID), func(j *assemble.Job) ownValue { return uintValue(j.JobID != 0, j.JobID) }},
	{newAttrKey(metadata.AttrClientID), func(j *assemble.Job) ownValue { return uintValue(j.ClientID != 0, j.ClientID) }},
	{newAttrKey(metadata.AttrProcessPID), func(j *assemble.Job) ownValue { return intValue(j.PID != 0, int64(j.PID)) }},
	{newAttrKey(metadata.AttrThreadID), func(j *assemble.Job) ownValue { return intValue(j.TID != 0, int64(j.TID)) }},
	{newAttrKey(metadata.AttrThreadName), func(j *assemble.Job) ownValue { return strValue(j.Comm) }},
	{newAttrKey(metadata.AttrJobOutcome), func(j *assemble.Job) ownValue {
		return ownValue{kind: attr.KindString, str: j.Outcome.String()}
	}},
	{newAttrKey(metadata.AttrJobDependencies), func(j *assemble.Job) ownValue {
		return intValue(len(j.Deps) > 0, int64(len(j.Deps)))
	}},
	{newAttrKey(metadata.AttrJobEventsLost), func(j *assemble.Job) ownValue { return trueValue(j.Loss.Windows > 0) }},
	{newAttrKey(metadata.AttrJobLostEventCount), func(j *assemble.Job) ownValue {
		return uintValue(j.Loss.Windows > 0 && j.Loss.Counted, j.Loss.Events)
	}},
	{newAttrKey(metadata.AttrContextTier), func(j *assemble.Job) ownValue {
		return ownValue{kind: attr.KindString, str: ctxtier.Name(j.CtxTier)}
	}},
}

// stageKey is everything a stage span's attributes may depend on: the JobEncoder encodes
// them once per key (stageAttrs), so a stage attribute that needs more of the stage adds
// it here (and to stageAttrsSlot, which keeps a copy of each field).
type stageKey struct {
	src  assemble.Provenance
	rule string
}

// stageAttributes are a stage span's attributes, in their order.
var stageAttributes = [...]ownAttr[stageKey]{
	{newAttrKey(metadata.AttrStageSource), func(k *stageKey) ownValue {
		return ownValue{kind: attr.KindString, str: k.src.String()}
	}},
	{newAttrKey(metadata.AttrStageRule), func(k *stageKey) ownValue { return strValue(k.rule) }},
}

// linkAttributes are the attributes of a link to a dependency's span: the fence that was
// waited on (the other job's finished, scheduled or hardware fence) and how.
var linkAttributes = [...]ownAttr[assemble.Dependency]{
	{newAttrKey(metadata.AttrFenceContext), func(d *assemble.Dependency) ownValue {
		return uintValue(true, d.Fence.Context)
	}},
	{newAttrKey(metadata.AttrFenceSeqno), func(d *assemble.Dependency) ownValue {
		return uintValue(true, d.Fence.Seqno)
	}},
	{newAttrKey(metadata.AttrDependencyWait), func(d *assemble.Dependency) ownValue {
		return ownValue{kind: attr.KindString, str: d.Wait.String()}
	}},
}

// appendOwnAttrs appends the attributes of table that v knows.
func appendOwnAttrs[T any](dst []spanAttr, table []ownAttr[T], v *T) []spanAttr {
	for i := range table {
		row := &table[i]
		if a := row.value(v); a.kind != attr.KindEmpty {
			dst = append(dst, spanAttr{key: row.key.name, k: row.key, kind: a.kind, str: a.str, num: a.num})
		}
	}
	return dst
}

// putOwnAttrs puts the builder's own attributes into m, in their order.
func putOwnAttrs(m pcommon.Map, attrs []spanAttr) {
	for i := range attrs {
		a := &attrs[i]
		switch a.kind {
		case attr.KindString:
			m.PutStr(a.key, a.str)
		case attr.KindInt:
			m.PutInt(a.key, a.num)
		case attr.KindBool:
			m.PutBool(a.key, a.num != 0)
		}
	}
}

// jobStatus is the status of j's span: an error, with the assembler's reason or else the
// outcome as its message, unless the job completed.
func jobStatus(j *assemble.Job) (msg string, isErr bool) {
	if j.Outcome == assemble.Completed {
		return "", false
	}
	if j.Reason != "" {
		return j.Reason, true
	}
	return j.Outcome.String(), true
}

// linked reports whether dependency d of j becomes a link: another job, known by its
// finished fence, and not j itself.
func linked(j *assemble.Job, d *assemble.Dependency) bool {
	return d.JobKnown && !d.Job.IsZero() && d.Job != j.Finished
}

// linkTarget is the span a link to dependency d points to: the remembered one, else the
// ids derived from its finished fence (links.go says when they differ).
func linkTarget(emitted *recent[event.FenceKey, spanRef], salt uint64, d *assemble.Dependency) spanRef {
	ref, ok := emitted.get(d.Job)
	if !ok {
		ref.trace, ref.span = derivedIDs(identityOfFence(salt, d.Job))
	}
	return ref
}
