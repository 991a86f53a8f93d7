// SpanBuilder: one `gpu.job` span per assembled job, with one child span per stage.
//
// Span kind: both the job span and its stage children are Internal. The job is work the
// application's span caused but did not perform, which could argue for Consumer; but
// Consumer (with Producer) is the messaging convention, makes service-graph and span-metrics
// tooling treat the span as an entry point of an asynchronous hop between two services, and
// asks for messaging.* attributes. Here the span is reported under the submitting process's
// own resource (service.name of the application), as a deeper part of the application's
// own operation, which is what Internal means; no edge between services is implied.

package emit

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/ghostdriver/ghostdriver/internal/assemble"
	"github.com/ghostdriver/ghostdriver/internal/event"
	"github.com/ghostdriver/ghostdriver/internal/metadata"
)

// JobSpanName is the name of the span of a GPU job; stage children are named by
// assemble.Stage.String().
const JobSpanName = "gpu.job"

// DefaultLinkMemory is how many recently emitted jobs the builder remembers for links.
const DefaultLinkMemory = 4096

// maxRememberedProcesses bounds the PID → executable name memory of resources.
const maxRememberedProcesses = 4096

// ResourceFunc adds or overrides resource attributes of a tenant's ResourceSpans. It is
// called once per tenant (process) and batch, with the first job of that tenant in the
// batch, after the defaults (process.pid, process.executable.name, service.name,
// host.name) are set. The tenant enricher uses it for OTEL_SERVICE_NAME, OTEP 4719
// process context, container and pod attributes.
type ResourceFunc func(job *assemble.Job, attrs pcommon.Map)

// SpanOption configures a SpanBuilder.
type SpanOption func(*spanConfig)

type spanConfig struct {
	resource     ResourceFunc
	scopeVersion string
	hostName     string
	salt         uint64
	linkMemory   int
	noStages     bool
}

// WithResourceFunc sets the hook that completes each tenant's resource.
func WithResourceFunc(f ResourceFunc) SpanOption { return func(c *spanConfig) { c.resource = f } }

// WithScopeVersion sets the instrumentation scope version (default metadata.ScopeVersion).
func WithScopeVersion(v string) SpanOption { return func(c *spanConfig) { c.scopeVersion = v } }

// WithHostName sets host.name on every resource (default: not set).
func WithHostName(name string) SpanOption { return func(c *spanConfig) { c.hostName = name } }

// WithIDSalt mixes salt into every derived id. Fence keys repeat across boots: pass a
// per-boot value (boot_id) so that jobs of different boots never share ids.
func WithIDSalt(salt uint64) SpanOption { return func(c *spanConfig) { c.salt = salt } }

// WithStageSpans turns the stage child spans on (the default) or off. Off, a job is one
// gpu.job span (its attributes, status and links unchanged) and the stages are only in the
// stage duration metric: a sixth to an eighth of the spans, 1.3–1.6× the user-space
// throughput (BENCHMARKS.md), for hosts whose job rate makes child spans too many to store.
func WithStageSpans(on bool) SpanOption { return func(c *spanConfig) { c.noStages = !on } }

// StageSpans reports whether opts leave the stage child spans on (they are by default).
func StageSpans(opts ...SpanOption) bool {
	var c spanConfig
	for _, o := range opts {
		o(&c)
	}
	return !c.noStages
}

// WithLinkMemory sets how many recently emitted jobs are remembered so that a link to
// one of them carries its real trace id (default DefaultLinkMemory; 0 disables).
func WithLinkMemory(n int) SpanOption { return func(c *spanConfig) { c.linkMemory = n } }

// SpanBuilder buffers the spans of assembled jobs until Take. It is not safe for
// concurrent use.
type SpanBuilder struct {
	clock event.Clock
	cfg   spanConfig

	traces  ptrace.Traces
	tenants map[uint32]*tenant // by PID (0: submitter's process unknown), this batch
	jobs    int
	// sizes is each tenant's span count in the previous batch: its span slice starts at
	// that capacity, so a steady stream does not regrow (and copy) it batch after batch.
	sizes map[uint32]int

	emitted  *recent[event.FenceKey, spanRef] // finished fence → ids, across batches
	ids      *idGuard                         // span ids handed out recently (ids.go)
	exeNames *recent[uint32, string]          // PID → executable name, across batches

	attrs []spanAttr // scratch: the attributes of the span being built
	stage stageKey   // scratch: the stage span's key (a pointer to it does not escape)
}

// spanRef is where a job's span lives.
type spanRef struct {
	trace pcommon.TraceID
	span  pcommon.SpanID
}

// NewSpanBuilder returns a builder converting source timestamps with clock. The clock is
// consulted at Append time, so it may become valid after construction.
func NewSpanBuilder(clock event.Clock, opts ...SpanOption) *SpanBuilder {
	cfg := spanConfig{scopeVersion: metadata.ScopeVersion, linkMemory: DefaultLinkMemory}
	for _, o := range opts {
		o(&cfg)
	}
	return &SpanBuilder{
		clock:    clock,
		cfg:      cfg,
		traces:   ptrace.NewTraces(),
		tenants:  make(map[uint32]*tenant),
		sizes:    make(map[uint32]int),
		emitted:  newRecent[event.FenceKey, spanRef](cfg.linkMemory, hashFence),
		exeNames: newRecent[uint32, string](maxRememberedProcesses, hashPID),
		ids:      newIDGuard(),
	}
}

// RenamedIDs is how many jobs got another derivation of their ids because a recent span
// had them already (two jobs of one identity: ids.go). Safe to call while Append runs.
func (b *SpanBuilder) RenamedIDs() uint64 { return b.ids.renamed.Load() }

// Len is the number of jobs buffered since the last Take.
func (b *SpanBuilder) Len() int { return b.jobs }

// Take returns the buffered spans and starts a new batch. The ids of the jobs taken are
// still remembered for links.
func (b *SpanBuilder) Take() ptrace.Traces {
	td := b.traces
	b.traces = ptrace.NewTraces()
	clear(b.sizes)
	for pid, t := range b.tenants {
		b.sizes[pid] = min(t.spans.Len(), maxPresizedSpans)
	}
	clear(b.tenants)
	b.jobs = 0
	return td
}

// Append renders job j: its span, its stage children and its links.
func (b *SpanBuilder) Append(j *assemble.Job) { b.AppendSampled(j, Sampled{}) }

// AppendSampled renders job j, which the sampler kept with decision smp.
func (b *SpanBuilder) AppendSampled(j *assemble.Job, smp Sampled) {
	stages := j.Stages
	if b.cfg.noStages {
		stages = nil
	}
	traceID, spanID, parentID, renamed := sampledJobIDs(b.cfg.salt, j, b.ids, smp.Detach)
	ts := sampledTraceState(smp, renamed, b.cfg.salt, j)
	spans := b.tenantOf(j).spans // presized from the previous batch, then grows by append

	sp := spans.AppendEmpty()
	sp.SetTraceID(traceID)
	sp.SetSpanID(spanID)
	if ts != "" {
		sp.TraceState().FromRaw(ts)
	}
	if !parentID.IsEmpty() {
		sp.SetParentSpanID(parentID)
	}
	sp.SetName(JobSpanName)
	sp.SetKind(ptrace.SpanKindInternal)
	start, end := b.interval(j.Start, j.End)
	sp.SetStartTimestamp(start)
	sp.SetEndTimestamp(end)
	b.putJobAttributes(sp.Attributes(), j)
	if msg, isErr := jobStatus(j); isErr {
		sp.Status().SetCode(ptrace.StatusCodeError)
		sp.Status().SetMessage(msg)
	}
	b.appendLinks(sp, j, smp.Detach)

	for i := range stages {
		st := &stages[i]
		c := spans.AppendEmpty()
		c.SetTraceID(traceID)
		c.SetSpanID(stageSpanID(spanID, st.Stage))
		if ts != "" {
			c.TraceState().FromRaw(ts)
		}
		c.SetParentSpanID(spanID)
		c.SetName(st.Stage.String())
		c.SetKind(ptrace.SpanKindInternal)
		s, e := b.interval(st.Start, st.End)
		c.SetStartTimestamp(s)
		c.SetEndTimestamp(e)
		b.stage = stageKey{src: st.Src, rule: st.Rule}
		b.attrs = appendOwnAttrs(b.attrs[:0], stageAttributes[:], &b.stage)
		a := c.Attributes()
		a.EnsureCapacity(len(b.attrs))
		putOwnAttrs(a, b.attrs)
	}

	if !j.Finished.IsZero() {
		b.emitted.put(j.Finished, spanRef{traceID, spanID})
	}
	b.jobs++
}

// interval converts a source-clock interval to span timestamps; an end before the start
// (clock re-sync between the two conversions, or an inverted bound) collapses to the start.
func (b *SpanBuilder) interval(start, end int64) (pcommon.Timestamp, pcommon.Timestamp) {
	return spanInterval(b.clock, start, end)
}

// spanInterval is SpanBuilder.interval with the clock as an argument (JobEncoder's too).
func spanInterval(clock event.Clock, start, end int64) (pcommon.Timestamp, pcommon.Timestamp) {
	s, e := clock.WallNanos(start), clock.WallNanos(end)
	if s < 0 {
		s = 0
	}
	if e < s {
		e = s
	}
	return pcommon.Timestamp(s), pcommon.Timestamp(e)
}

// putJobAttributes sets the attributes of a gpu.job span: the table's (spanmodel.go),
// then the tenant's, which may replace them.
func (b *SpanBuilder) putJobAttributes(a pcommon.Map, j *assemble.Job) {
	b.attrs = appendOwnAttrs(b.attrs[:0], jobAttributes[:], j)
	a.EnsureCapacity(len(b.attrs) + len(j.Attrs))
	putOwnAttrs(a, b.attrs)
	putAttrs(a, j.Attrs)
}
