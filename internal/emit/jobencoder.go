// JobEncoder: assembled jobs straight to OTLP bytes (JSON or protobuf), without pdata spans.
//
// It writes what the SpanBuilder's spans give through AppendTracesJSON / AppendTracesProto
// (and so through pdata's marshallers): the same tenants in the same order, the same
// resources, scope, ids (the same id guard, so the same renames), attributes, links, status
// and stage spans. Which attributes, links and status a span has is read by both from one
// place, the span model's tables (spanmodel.go); how they are written is each one's own.
// jobencoder_test.go decodes both with pdata's unmarshallers and compares them, and their
// bytes; spanmodel_test.go checks that those runs compare every row of the tables. It exists for the CLI's file outputs, where building pdata spans
// only to marshal them was a third of the run's CPU (BENCHMARKS.md, export path); the
// collector's consumers need pdata and keep the SpanBuilder.
//
// Each tenant's resource is still a pcommon.Map (one per tenant and batch, filled by the
// builder's own code, so that a ResourceFunc hook works unchanged); the spans, up to ten a
// job, are written as bytes when the job arrives, into the tenant's buffer of the batch.

package emit

import (
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/ghostdriver/ghostdriver/internal/assemble"
	"github.com/ghostdriver/ghostdriver/internal/event"
	"github.com/ghostdriver/ghostdriver/internal/metadata"
)

// Format is an OTLP encoding.
type Format uint8

const (
	FormatJSON  Format = iota // OTLP/JSON (protobuf's JSON mapping, as pdata writes it)
	FormatProto               // OTLP protobuf
)

// batchesKept is how many written batches the encoder keeps for reuse (one filling, one
// queued, one being written is the lossless pipeline's steady state).
const batchesKept = 4

// JobEncoder encodes the spans of assembled jobs into batches. It is not safe for
// concurrent use; a batch it hands out may be written on another goroutine and released.
type JobEncoder struct {
	clock  event.Clock
	cfg    spanConfig
	format Format

	cur     *TraceBatch
	tenants map[uint32]int   // PID → index in cur.tenants, this batch
	free    chan *TraceBatch // released batches, for reuse

	emitted  *recent[event.FenceKey, spanRef] // finished fence → ids, across batches
	ids      *idGuard                         // span ids handed out recently (ids.go)
	exeNames *recent[uint32, string]          // PID → executable name, across batches

	span  spanData // scratch: the span being written
	attrs []spanAttr
	links []linkData
	// what every job repeats, encoded once (jobencoder_ids.go, _kvcache.go, _json.go)
	idBytes        encodedIDs
	jobNameKind    []byte
	stageNameKinds [assemble.NumStages][]byte
	kv             kvCache
	stageAttrs     stageAttrs
	times          jsonCache
}

// NewJobEncoder returns an encoder in format converting source timestamps with clock (at
// Append time); opts are the SpanBuilder's.
func NewJobEncoder(clock event.Clock, format Format, opts ...SpanOption) *JobEncoder {
	cfg := spanConfig{scopeVersion: metadata.ScopeVersion, linkMemory: DefaultLinkMemory}
	for _, o := range opts {
		o(&cfg)
	}
	e := &JobEncoder{
		clock:    clock,
		cfg:      cfg,
		format:   format,
		tenants:  make(map[uint32]int),
		free:     make(chan *TraceBatch, batchesKept),
		emitted:  newRecent[event.FenceKey, spanRef](cfg.linkMemory, hashFence),
		exeNames: newRecent[uint32, string](maxRememberedProcesses, hashPID),
		ids:      newIDGuard(),
	}
	e.idBytes.format, e.kv.format, e.stageAttrs.format = format, format, format
	e.jobNameKind = spanNameKind(format, JobSpanName)
	for i := range e.stageNameKinds {
		e.stageNameKinds[i] = spanNameKind(format, assemble.Stage(i).String())
	}
	e.span.kv = &e.kv
	if format == FormatJSON {
		e.span.times = &e.times
	}
	e.cur = e.newBatch()
	return e
}

// Format is the encoder's format.
func (e *JobEncoder) Format() Format { return e.format }

// Len is the number of jobs in the current batch.
func (e *JobEncoder) Len() int { return e.cur.jobs }

// RenamedIDs is SpanBuilder.RenamedIDs. Safe to call while Append runs.
func (e *JobEncoder) RenamedIDs() uint64 { return e.ids.renamed.Load() }

// Take returns the current batch and starts a new one. Release the batch once written.
func (e *JobEncoder) Take() *TraceBatch {
	b := e.cur
	e.cur = e.newBatch()
	clear(e.tenants)
	return b
}

func (e *JobEncoder) newBatch() *TraceBatch {
	select {
	case b := <-e.free:
		b.reset()
		return b
	default:
		return &TraceBatch{format: e.format, scopeVersion: e.cfg.scopeVersion, free: e.free}
	}
}

// tenantOf returns the current batch's tenant of job j (SpanBuilder.tenantOf's rules).
func (e *JobEncoder) tenantOf(j *assemble.Job) *batchTenant {
	learnExecutableName(e.exeNames, j)
	b := e.cur
	if i, ok := e.tenants[j.PID]; ok {
		t := &b.tenants[i]
		t.complete(e.exeNames, j)
		return t
	}
	if b.n == len(b.tenants) {
		b.tenants = append(b.tenants, batchTenant{})
	}
	t := &b.tenants[b.n]
	e.tenants[j.PID] = b.n
	b.n++
	t.res, t.named, t.spans, t.count = pcommon.NewMap(), false, t.spans[:0], 0
	t.fill(&e.cfg, e.exeNames, j)
	return t
}

// Append encodes job j: its span, its stage children and its links.
func (e *JobEncoder) Append(j *assemble.Job) { e.AppendSampled(j, Sampled{}) }

// AppendSampled encodes job j, which the sampler kept with decision smp
// (SpanBuilder.AppendSampled).
func (e *JobEncoder) AppendSampled(j *assemble.Job, smp Sampled) {
	stages := j.Stages
	if e.cfg.noStages {
		stages = nil
	}
	traceID, spanID, parentID, renamed := sampledJobIDs(e.cfg.salt, j, e.ids, smp.Detach)
	t := e.tenantOf(j)

	s := &e.span
	e.idBytes.set(traceID, spanID, parentID, sampledTraceState(smp, renamed, e.cfg.salt, j))
	s.head, s.headMore, s.ids = e.idBytes.job, e.idBytes.jobMore, e.idBytes.job
	s.name, s.nameKind, s.attrsEnc = JobSpanName, e.jobNameKind, nil
	s.start, s.end = spanInterval(e.clock, j.Start, j.End)
	e.attrs = jobAttrs(e.attrs[:0], j)
	s.attrs = e.attrs
	s.statusMsg, s.statusErr = jobStatus(j)
	e.links = e.jobLinks(e.links[:0], j, smp.Detach)
	s.links = e.links
	t.spans = s.appendTo(t.spans, e.format, t.count > 0)
	t.count++

	s.attrs, s.links, s.statusMsg, s.statusErr = nil, nil, "", false
	s.headMore = e.idBytes.stageMore
	for i := range stages {
		st := &stages[i]
		ids := e.idBytes.forStage(stageSpanID(spanID, st.Stage))
		s.head, s.ids = ids, ids
		s.name, s.nameKind = "", nil
		if int(st.Stage) < len(e.stageNameKinds) {
			s.nameKind = e.stageNameKinds[st.Stage]
		} else {
			s.name = st.Stage.String()
		}
		s.start, s.end = spanInterval(e.clock, st.Start, st.End)
		s.attrsEnc = e.stageAttrs.get(stageKey{src: st.Src, rule: st.Rule})
		t.spans = s.appendTo(t.spans, e.format, true)
		t.count++
	}
	e.cur.spans += 1 + len(stages)

	if !j.Finished.IsZero() {
		e.emitted.put(j.Finished, spanRef{traceID, spanID})
	}
	e.cur.jobs++
}

// jobLinks appends j's links (SpanBuilder.appendLinks's rules).
func (e *JobEncoder) jobLinks(dst []linkData, j *assemble.Job, detach bool) []linkData {
	if detach {
		l := linkData{trace: j.TraceID, span: j.SpanID}
		l.n = len(appendOwnAttrs(l.attrs[:0], parentLinkAttributes[:], j))
		dst = append(dst, l)
	}
	for i := range j.Deps {
		d := &j.Deps[i]
		if !linked(j, d) {
			continue
		}
		ref := linkTarget(e.emitted, e.cfg.salt, d)
		l := linkData{trace: ref.trace, span: ref.span}
		l.n = len(appendOwnAttrs(l.attrs[:0], linkAttributes[:], d))
		dst = append(dst, l)
	}
	return dst
}
