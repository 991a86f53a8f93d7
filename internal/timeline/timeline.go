// Package timeline is the pictures' model of GPU jobs: the gpu.job spans of OTLP traces
// (the pipeline's own, or an OTLP/JSON lines file of them) read back into jobs with their
// stages, ring and submitting thread. The trace-event export (internal/tracejson) and the
// HTML report (internal/report) draw from it, so both show exactly what the spans say.
package timeline

import (
	"encoding/hex"
	"fmt"
	"sort"
	"strconv"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/ghostdriver/ghostdriver/internal/emit"
	"github.com/ghostdriver/ghostdriver/internal/metadata"
)

// Ring is where a job ran: driver, device (empty when the events do not name it) and ring.
type Ring struct {
	Driver, Device, Ring string
}

// String names the ring as the CLI summary does ("amdgpu/gfx"), with the device when known.
func (r Ring) String() string {
	s := orUnknown(r.Driver) + "/" + orUnknown(r.Ring)
	if r.Device != "" {
		s += " (" + r.Device + ")"
	}
	return s
}

func orUnknown(s string) string {
	if s == "" {
		return "?"
	}
	return s
}

// Stage is one stage child span of a job.
type Stage struct {
	Name       string
	Start, End int64 // unix ns, as in the span
	Source     string
	Rule       string
}

// Job is one gpu.job span with its stage children, sorted by start.
type Job struct {
	TraceID, SpanID string // hex
	Ring            Ring
	Start, End      int64 // unix ns
	Fence           string
	JobID           string
	Outcome         string
	Error           string // status message when the span's status is an error
	PID, TID        int64  // 0: not known
	Thread          string // thread.name (the kernel comm of the submitting thread)
	Service         string // the resource's service.name
	Executable      string // the resource's process.executable.name
	Links           int
	Stages          []Stage
}

// Failed says whether the job span's status is an error (incomplete or evicted job).
func (j *Job) Failed() bool { return j.Error != "" }

// Stage returns the job's stage named name, if it has one.
func (j *Job) Stage(name string) (Stage, bool) {
	for _, s := range j.Stages {
		if s.Name == name {
			return s, true
		}
	}
	return Stage{}, false
}

// Set is every job of an input, in input order, with what could not be read as a job.
type Set struct {
	Jobs []Job
	// OtherSpans counts spans that are neither a gpu.job nor a stage of one (for example
	// cuda.submission trees): not drawn.
	OtherSpans int
	// OrphanStages counts child spans whose parent was not a gpu.job of the input: not drawn.
	OrphanStages int
	// GPU is the NVIDIA GPU timeline of the input's cuda.submission spans (gpu.go), in
	// input order; its spans are not counted in OtherSpans.
	GPU []GPUWork
}

// Extent is the earliest start and the latest end of the jobs (0, 0 without jobs).
func (s *Set) Extent() (start, end int64) {
	for i := range s.Jobs {
		j := &s.Jobs[i]
		if i == 0 || j.Start < start {
			start = j.Start
		}
		if i == 0 || j.End > end {
			end = j.End
		}
	}
	return start, end
}

// Builder collects jobs from trace batches. A stage span may arrive in a later batch than
// its job span; Finish attaches it.
type Builder struct {
	jobs    []Job
	byID    map[string]int // span id (trace id + span id) → index in jobs
	pending []pendingStage
	other   int
	gpu     gpuBuilder
}

type pendingStage struct {
	parent string
	stage  Stage
}

// NewBuilder returns an empty builder.
func NewBuilder() *Builder { return &Builder{byID: map[string]int{}} }

// Add reads the gpu.job spans and their children of one batch.
func (b *Builder) Add(td ptrace.Traces) {
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		rs := rss.At(i)
		service := strAttr(rs.Resource().Attributes(), metadata.AttrServiceName)
		exe := strAttr(rs.Resource().Attributes(), metadata.AttrProcessExecutableName)
		resPID := intAttr(rs.Resource().Attributes(), metadata.AttrProcessPID)
		sss := rs.ScopeSpans()
		for k := 0; k < sss.Len(); k++ {
			spans := sss.At(k).Spans()
			for n := 0; n < spans.Len(); n++ {
				b.addSpan(spans.At(n), service, exe, resPID)
			}
		}
	}
}

func (b *Builder) addSpan(sp ptrace.Span, service, exe string, resPID int64) {
	if sp.Name() == emit.JobSpanName {
		a := sp.Attributes()
		j := Job{
			TraceID: hexID(sp.TraceID()), SpanID: hexID(sp.SpanID()),
			Ring: Ring{
				Driver: strAttr(a, metadata.AttrDriver),
				Device: strAttr(a, metadata.AttrDevice),
				Ring:   strAttr(a, metadata.AttrRing),
			},
			Start: int64(sp.StartTimestamp()), End: int64(sp.EndTimestamp()),
			JobID:   strAttr(a, metadata.AttrJobID),
			Outcome: strAttr(a, metadata.AttrJobOutcome),
			PID:     intAttr(a, metadata.AttrProcessPID), TID: intAttr(a, metadata.AttrThreadID),
			Thread:  strAttr(a, metadata.AttrThreadName),
			Service: service, Executable: exe,
			Links: sp.Links().Len(),
		}
		if ctx, seq := strAttr(a, metadata.AttrFenceContext), strAttr(a, metadata.AttrFenceSeqno); ctx != "" {
			j.Fence = ctx + ":" + seq
		}
		if j.PID == 0 {
			j.PID = resPID
		}
		if sp.Status().Code() == ptrace.StatusCodeError {
			j.Error = sp.Status().Message()
			if j.Error == "" {
				j.Error = "error"
			}
		}
		b.byID[j.TraceID+j.SpanID] = len(b.jobs)
		b.jobs = append(b.jobs, j)
		return
	}
	if sp.ParentSpanID().IsEmpty() {
		b.other++
		return
	}
	if b.gpu.add(sp, service, exe, resPID) {
		return
	}
	a := sp.Attributes()
	_, hasSource := a.Get(metadata.AttrStageSource)
	if !hasSource {
		// Not a stage: a child of an application span, a cuda.* span, ...
		b.other++
		return
	}
	b.pending = append(b.pending, pendingStage{
		parent: hexID(sp.TraceID()) + hex.EncodeToString(sliceOf(sp.ParentSpanID())),
		stage: Stage{
			Name: sp.Name(), Start: int64(sp.StartTimestamp()), End: int64(sp.EndTimestamp()),
			Source: strAttr(a, metadata.AttrStageSource), Rule: strAttr(a, metadata.AttrStageRule),
		},
	})
}

// Finish attaches the stages to their jobs and returns the set. The builder must not be
// used afterwards.
func (b *Builder) Finish() *Set {
	set := &Set{Jobs: b.jobs, OtherSpans: b.other, GPU: b.gpu.finish()}
	for _, p := range b.pending {
		i, ok := b.byID[p.parent]
		if !ok {
			set.OrphanStages++
			continue
		}
		set.Jobs[i].Stages = append(set.Jobs[i].Stages, p.stage)
	}
	for i := range set.Jobs {
		st := set.Jobs[i].Stages
		sort.SliceStable(st, func(a, b int) bool { return st[a].Start < st[b].Start })
	}
	return set
}

// FromTraces reads one batch (tests, small inputs).
func FromTraces(td ptrace.Traces) *Set {
	b := NewBuilder()
	b.Add(td)
	return b.Finish()
}

func hexID[T pcommon.TraceID | pcommon.SpanID](id T) string {
	return hex.EncodeToString(sliceOf(id))
}

func sliceOf[T pcommon.TraceID | pcommon.SpanID](id T) []byte {
	switch v := any(id).(type) {
	case pcommon.TraceID:
		return v[:]
	case pcommon.SpanID:
		return v[:]
	}
	return nil
}

func strAttr(m pcommon.Map, key string) string {
	if v, ok := m.Get(key); ok {
		return v.AsString()
	}
	return ""
}

func intAttr(m pcommon.Map, key string) int64 {
	v, ok := m.Get(key)
	if !ok {
		return 0
	}
	switch v.Type() {
	case pcommon.ValueTypeInt:
		return v.Int()
	case pcommon.ValueTypeStr:
		n, err := strconv.ParseInt(v.Str(), 10, 64)
		if err == nil {
			return n
		}
	}
	return 0
}

// Tenant names who submitted a job, for per-tenant tables: the service.name when it says
// more than "unknown_service", else the executable, else the submitting thread's name.
func (j *Job) Tenant() string {
	switch {
	case j.Service != "" && j.Service != "unknown_service":
		if j.PID != 0 {
			return fmt.Sprintf("%s (pid %d)", j.Service, j.PID)
		}
		return j.Service
	case j.Executable != "" && j.PID != 0:
		return fmt.Sprintf("%s (pid %d)", j.Executable, j.PID)
	case j.Executable != "":
		return j.Executable
	case j.PID != 0:
		return fmt.Sprintf("pid %d", j.PID)
	case j.Thread != "":
		return "thread " + j.Thread + " (process unknown)"
	}
	return "unknown submitter"
}
