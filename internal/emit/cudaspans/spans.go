// Builder: one `cuda.submission` span per submission, one child per top-level call, and
// the synchronize call as `cuda.sync`.
//
// Spans are Internal, like gpu.job, and reported under the submitting process's resource.
// A submission with an application context (Submission.CtxTier, from the kernel's read at
// the calls or TRACEPARENT) is a child of that application span, in its trace; without one
// it is the root of a trace of its own. ghostdriver.context.tier says which.

package cudaspans

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/ghostdriver/ghostdriver/internal/ctxtier"
	"github.com/ghostdriver/ghostdriver/internal/cuda"
	"github.com/ghostdriver/ghostdriver/internal/emit/ids"
	"github.com/ghostdriver/ghostdriver/internal/event"
	"github.com/ghostdriver/ghostdriver/internal/metadata"
	"github.com/ghostdriver/ghostdriver/internal/sample"
)

// ResourceFunc completes the resource of a process's spans (and gives the Recorder its
// dimension values): called with the PID after the defaults (process.pid,
// process.executable.name, service.name, host.name) are set. The live wiring resolves the
// PID with internal/tenant (service.name from the process, container, pod, MIG instance).
type ResourceFunc func(pid uint32, attrs pcommon.Map)

// Option configures a Builder or a Recorder.
type Option func(*config)

type config struct {
	salt         uint64
	hostName     string
	scopeVersion string
	resource     ResourceFunc
	loss         LossFunc
}

// LossFunc reports the source's losses, cumulative: calls the ring buffer had no room
// for, whose return was never seen, or whose return came without an entry frame
// (ghostdriver.cuda.lost_calls), and learned entry points never examined
// (ghostdriver.cuda.entry_points.dropped).
type LossFunc func() cuda.Losses

// WithLossFunc makes the Recorder report the source's lost calls.
func WithLossFunc(f LossFunc) Option { return func(c *config) { c.loss = f } }

// WithIDSalt mixes a per-boot value into every id (the receiver passes the boot id's).
func WithIDSalt(salt uint64) Option { return func(c *config) { c.salt = salt } }

// WithHostName sets host.name on every resource.
func WithHostName(name string) Option { return func(c *config) { c.hostName = name } }

// WithResourceFunc sets the resource hook.
func WithResourceFunc(f ResourceFunc) Option { return func(c *config) { c.resource = f } }

func newConfig(opts []Option) config {
	c := config{scopeVersion: metadata.ScopeVersion}
	for _, o := range opts {
		o(&c)
	}
	return c
}

// maxRememberedProcesses bounds the PID → executable name memory.
const maxRememberedProcesses = 4096

// unknownService is service.name when nothing better is known (OTel SDK convention).
const unknownService = "unknown_service"

// Builder buffers the spans of submissions until Take. Not safe for concurrent use.
type Builder struct {
	clock event.Clock
	cfg   config

	traces  ptrace.Traces
	tenants map[uint32]*tenant // this batch, by PID
	n       int
	names   processNames
}

// NewBuilder returns a builder converting CLOCK_MONOTONIC timestamps with clock.
func NewBuilder(clock event.Clock, opts ...Option) *Builder {
	return &Builder{clock: clock, cfg: newConfig(opts), traces: ptrace.NewTraces(),
		tenants: map[uint32]*tenant{}}
}

// Len is the number of submissions buffered since the last Take.
func (b *Builder) Len() int { return b.n }

// Take returns the buffered spans and starts a new batch.
func (b *Builder) Take() ptrace.Traces {
	td := b.traces
	b.traces = ptrace.NewTraces()
	clear(b.tenants)
	b.n = 0
	return td
}

// tenant is one process's ResourceSpans in the current batch.
type tenant struct {
	res   pcommon.Map
	spans ptrace.SpanSlice
}

func (b *Builder) spansOf(s *cuda.Submission) ptrace.SpanSlice {
	b.names.learn(s)
	if t, ok := b.tenants[s.PID]; ok {
		// A later submission of the batch (from the main thread) taught the name:
		// complete the resource without undoing what the hook set.
		if _, named := t.res.Get(metadata.AttrProcessExecutableName); !named {
			if name, ok := b.names.m[s.PID]; ok {
				t.res.PutStr(metadata.AttrProcessExecutableName, name)
				if v, ok := t.res.Get(metadata.AttrServiceName); ok && v.Str() == unknownService {
					t.res.PutStr(metadata.AttrServiceName, name)
				}
			}
		}
		return t.spans
	}
	rs := b.traces.ResourceSpans().AppendEmpty()
	fillResource(rs.Resource().Attributes(), s.PID, &b.names, &b.cfg)
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName(metadata.ScopeName)
	ss.Scope().SetVersion(b.cfg.scopeVersion)
	b.tenants[s.PID] = &tenant{res: rs.Resource().Attributes(), spans: ss.Spans()}
	return ss.Spans()
}

// fillResource writes the defaults and calls the hook.
func fillResource(m pcommon.Map, pid uint32, names *processNames, cfg *config) {
	service := unknownService
	if pid != 0 {
		m.PutInt(metadata.AttrProcessPID, int64(pid))
		if name, ok := names.m[pid]; ok {
			m.PutStr(metadata.AttrProcessExecutableName, name)
			service = name
		}
	}
	m.PutStr(metadata.AttrServiceName, service)
	if cfg.hostName != "" {
		m.PutStr(metadata.AttrHostName, cfg.hostName)
	}
	if cfg.resource != nil {
		cfg.resource(pid, m)
	}
}

// processNames remembers each process's name: the comm of a call made by its main
// thread (TID = PID); another thread's comm is that thread's name ("pt_autograd_0").
type processNames struct{ m map[uint32]string }

func (p *processNames) learn(s *cuda.Submission) {
	if p.m == nil {
		p.m = map[uint32]string{}
	}
	if _, ok := p.m[s.PID]; ok {
		return
	}
	name := ""
	if s.Sync != nil && s.Sync.TID == s.PID {
		name = s.Sync.Comm
	}
	for i := 0; name == "" && i < len(s.Ops); i++ {
		if s.Ops[i].TID == s.PID {
			name = s.Ops[i].Comm
		}
	}
	if name == "" {
		return
	}
	if len(p.m) >= maxRememberedProcesses {
		clear(p.m)
	}
	p.m[s.PID] = name
}

// Append renders submission s.
func (b *Builder) Append(s *cuda.Submission) { b.AppendSampled(s, sample.Sampled{}) }

// RootTraceID is the trace id submission s's spans carry when they are the root of their
// own trace: what the sampler draws its randomness from.
func RootTraceID(salt uint64, s *cuda.Submission) [16]byte {
	trace, _ := submissionIDs(salt, s)
	return trace
}

// Skip tells the builder of a submission the sampler left out: it still learns the
// process's name from it (the resources of the kept ones are those they would be).
func (b *Builder) Skip(s *cuda.Submission) { b.names.learn(s) }

// SpanEstimate is about how many spans Append makes of s (the GPU timeline's children
// counted as three): the sampler's budget unit.
func SpanEstimate(s *cuda.Submission) int {
	n := 1 + len(s.Ops)
	if s.Sync != nil {
		n++
	}
	if s.GPU != nil && s.GPU.KernelCount > 0 {
		n += 3
	}
	return n
}

// Salt is the builder's id salt (RootTraceID's).
func (b *Builder) Salt() uint64 { return b.cfg.salt }

// Linked reports whether s carries an application context its spans become children of.
func Linked(s *cuda.Submission) bool {
	return s.CtxTier != 0 && s.TraceID != [16]byte{} && s.SpanID != [8]byte{}
}

// AppendSampled renders submission s, which the sampler kept with decision smp: every
// span of it carries smp's tracestate; detached, it is the root of its own trace and links
// to the application span.
func (b *Builder) AppendSampled(s *cuda.Submission, smp sample.Sampled) {
	spans := b.spansOf(s)
	first := spans.Len()
	traceID, spanID := submissionIDs(b.cfg.salt, s)
	linked := Linked(s) && !smp.Detach
	if linked {
		traceID = s.TraceID
	}

	sp := spans.AppendEmpty()
	sp.SetTraceID(traceID)
	sp.SetSpanID(spanID)
	if linked {
		sp.SetParentSpanID(s.SpanID)
	}
	if smp.Detach && Linked(s) {
		l := sp.Links().AppendEmpty()
		l.SetTraceID(s.TraceID)
		l.SetSpanID(s.SpanID)
		l.Attributes().PutBool(metadata.AttrSamplingUnsampledParent, true)
	}
	if smp.TraceState != "" {
		defer func() {
			for i := first; i < spans.Len(); i++ {
				spans.At(i).TraceState().FromRaw(smp.TraceState)
			}
		}()
	}
	sp.SetName(metadata.SpanCUDASubmission)
	sp.SetKind(ptrace.SpanKindInternal)
	start, end := b.interval(s.Start, s.End)
	sp.SetStartTimestamp(start)
	sp.SetEndTimestamp(end)
	putSubmissionAttributes(sp.Attributes(), s)
	putGPUAttributes(sp.Attributes(), s.GPU)
	for _, x := range s.Xids {
		ev := sp.Events().AppendEmpty()
		ev.SetName(metadata.EventNvidiaXid)
		ev.SetTimestamp(pcommon.Timestamp(max(0, b.clock.WallNanos(x.Time))))
		a := ev.Attributes()
		a.PutInt(metadata.AttrNvidiaXidCode, int64(x.Code))
		if x.Msg != "" {
			a.PutStr(metadata.AttrNvidiaXidMessage, x.Msg)
		}
		if x.Device != "" {
			a.PutStr(metadata.AttrNvidiaXidDevice, x.Device)
		}
	}
	switch {
	case len(s.Xids) > 0:
		x := s.Xids[0]
		sp.Status().SetCode(ptrace.StatusCodeError)
		sp.Status().SetMessage(fmt.Sprintf("Xid %d: %s", x.Code, x.Msg))
	case s.Sync != nil && s.Sync.Ret != 0:
		sp.Status().SetCode(ptrace.StatusCodeError)
		sp.Status().SetMessage(fmt.Sprintf("%s returned %d", s.Sync.Name(), s.Sync.Ret))
	}

	for i := range s.Ops {
		b.appendCall(spans, traceID, spanID, childID(spanID, ids.TagOp, i), &s.Ops[i])
	}
	if s.Sync != nil {
		b.appendCall(spans, traceID, spanID, childID(spanID, ids.TagSync, 0), s.Sync)
	}
	if s.GPU != nil {
		b.appendGPU(spans, traceID, spanID, s)
	}
	b.n++
}

func (b *Builder) appendCall(spans ptrace.SpanSlice, traceID pcommon.TraceID, parent, id pcommon.SpanID, op *cuda.Op) {
	info := op.Info()
	c := spans.AppendEmpty()
	c.SetTraceID(traceID)
	c.SetSpanID(id)
	c.SetParentSpanID(parent)
	c.SetName(spanName(info.Class))
	c.SetKind(ptrace.SpanKindInternal)
	start, end := b.interval(op.Start, op.End)
	c.SetStartTimestamp(start)
	c.SetEndTimestamp(end)
	putCallAttributes(c.Attributes(), op, info)
	if op.Ret != 0 {
		c.Status().SetCode(ptrace.StatusCodeError)
		c.Status().SetMessage(fmt.Sprintf("%s returned %d", info.Name, op.Ret))
	}
}

func (b *Builder) interval(start, end int64) (pcommon.Timestamp, pcommon.Timestamp) {
	s, e := b.clock.WallNanos(start), b.clock.WallNanos(end)
	if s < 0 {
		s = 0
	}
	if e < s {
		e = s
	}
	return pcommon.Timestamp(s), pcommon.Timestamp(e)
}

// spanName is the child span name of an API class.
func spanName(c cuda.Class) string {
	switch c {
	case cuda.ClassLaunch:
		return metadata.SpanCUDALaunch
	case cuda.ClassMemcpy:
		return metadata.SpanCUDAMemcpy
	case cuda.ClassMemset:
		return metadata.SpanCUDAMemset
	case cuda.ClassEventRecord:
		return metadata.SpanCUDAEventRecord
	case cuda.ClassAlloc:
		return metadata.SpanCUDAAlloc
	case cuda.ClassFree:
		return metadata.SpanCUDAFree
	case cuda.ClassSync:
		return metadata.SpanCUDASync
	}
	return "cuda." + c.String() // not reached: proc-address calls never join a submission
}

// SyncScope is the ghostdriver.cuda.sync.scope value of a submission.
func SyncScope(s *cuda.Submission) string {
	if s.Sync == nil {
		return metadata.CUDASyncScopeNone
	}
	switch s.Scope {
	case cuda.ScopeStream:
		return metadata.CUDASyncScopeStream
	case cuda.ScopeEvent:
		return metadata.CUDASyncScopeEvent
	case cuda.ScopeContext:
		return metadata.CUDASyncScopeContext
	}
	return metadata.CUDASyncScopeNone
}

func putSubmissionAttributes(a pcommon.Map, s *cuda.Submission) {
	a.EnsureCapacity(10)
	if s.PID != 0 {
		a.PutInt(metadata.AttrProcessPID, int64(s.PID))
	}
	if s.Sync != nil {
		a.PutInt(metadata.AttrThreadID, int64(s.Sync.TID))
		if s.Sync.Comm != "" {
			a.PutStr(metadata.AttrThreadName, s.Sync.Comm)
		}
	}
	// The stream is known for stream syncs and unsynchronized work (which is per stream);
	// an event sync knows it only when the event's record was seen (then it took work).
	if s.Sync == nil || s.Scope == cuda.ScopeStream || (s.Scope == cuda.ScopeEvent && len(s.Ops) > 0) {
		putUint(a, metadata.AttrCUDAStream, s.Stream)
	}
	a.PutStr(metadata.AttrCUDASyncScope, SyncScope(s))
	a.PutStr(metadata.AttrCUDASubmissionOutcome, s.Outcome.String())
	a.PutInt(metadata.AttrCUDALaunchCount, int64(s.Launches))
	a.PutInt(metadata.AttrCUDAOpCount, int64(len(s.Ops)+s.Dropped))
	if s.Dropped > 0 {
		a.PutInt(metadata.AttrCUDAOpsDropped, int64(s.Dropped))
	}
	tier := s.CtxTier
	if s.TraceID == [16]byte{} || s.SpanID == [8]byte{} {
		tier = 0
	}
	a.PutStr(metadata.AttrContextTier, ctxtier.Name(tier))
}

func putCallAttributes(a pcommon.Map, op *cuda.Op, info cuda.API) {
	a.EnsureCapacity(8)
	a.PutStr(metadata.AttrCUDAAPI, info.Name)
	a.PutStr(metadata.AttrCUDALayer, info.Layer.String())
	a.PutInt(metadata.AttrThreadID, int64(op.TID))
	if op.EntryPoint {
		a.PutBool(metadata.AttrCUDAEntryPoint, true)
	}
	if op.Ret != 0 {
		a.PutInt(metadata.AttrCUDAResult, int64(op.Ret))
	}
	if len(op.Inner) > 0 {
		names := make([]string, 0, len(op.Inner))
		for i := range op.Inner {
			names = append(names, op.Inner[i].Name())
		}
		a.PutStr(metadata.AttrCUDAInnerAPI, strings.Join(names, ","))
	}
	if info.Class == cuda.ClassSync {
		putWakeAttributes(a, op)
	}
	if op.ArgFault {
		return // the arguments could not be read: leave them out rather than write zeros
	}
	switch info.Class {
	case cuda.ClassSync:
		switch info.Scope {
		case cuda.ScopeStream:
			putUint(a, metadata.AttrCUDAStream, op.Stream)
		case cuda.ScopeEvent:
			putUint(a, metadata.AttrCUDAEvent, op.Stream) // an event sync's "stream" argument is the event
		}
		return
	case cuda.ClassLaunch:
		putUint(a, metadata.AttrCUDAFunction, op.Handle)
	case cuda.ClassEventRecord:
		putUint(a, metadata.AttrCUDAEvent, op.Handle)
	case cuda.ClassFree:
		putUint(a, metadata.AttrCUDAPointer, op.Handle)
	case cuda.ClassMemcpy:
		if info.Handle != 0 { // the runtime's cudaMemcpyKind argument
			a.PutInt(metadata.AttrCUDAMemcpyKind, int64(op.Handle))
		}
	}
	if info.Async() {
		putUint(a, metadata.AttrCUDAStream, op.Stream)
	}
	if info.Bytes != 0 && op.Bytes != 0 {
		putUint(a, metadata.AttrCUDABytes, op.Bytes)
	}
}

// putUint stores a uint64 as an int when it fits, else as its exact decimal string.
func putUint(m pcommon.Map, key string, v uint64) {
	if v > math.MaxInt64 {
		m.PutStr(key, strconv.FormatUint(v, 10))
		return
	}
	m.PutInt(key, int64(v))
}
