// One ResourceSpans per tenant (submitting process) and batch.
//
// Defaults: process.pid, process.executable.name and service.name = the executable name
// ("unknown_service" when the job does not tell it), host.name when configured; then the
// enricher's Job.Resource (the process's own resource and tenancy: live source only);
// then the ResourceFunc hook. The executable name is only learnt from jobs submitted by the
// process's main thread (see executableName) and remembered per PID across batches, so a
// process keeps one service.name once it is known.

package emit

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/ghostdriver/ghostdriver/internal/assemble"
	"github.com/ghostdriver/ghostdriver/internal/metadata"
)

// unknownService is service.name when nothing better is known (OTel SDK convention).
const unknownService = "unknown_service"

// maxPresizedSpans caps the capacity a tenant's span slice starts with (8 bytes each).
const maxPresizedSpans = 1 << 16

// tenantResource is one process's resource in the current batch (the span builder's and
// the job encoder's: both name tenants the same way).
type tenantResource struct {
	res   pcommon.Map
	named bool // process.executable.name is set
}

// tenant is one process's ResourceSpans in the current batch.
type tenant struct {
	tenantResource
	spans ptrace.SpanSlice
}

// tenantOf returns the tenant of job j, creating its ResourceSpans on first use.
func (b *SpanBuilder) tenantOf(j *assemble.Job) *tenant {
	learnExecutableName(b.exeNames, j)
	t, ok := b.tenants[j.PID]
	if !ok {
		rs := b.traces.ResourceSpans().AppendEmpty()
		ss := rs.ScopeSpans().AppendEmpty()
		ss.Scope().SetName(metadata.ScopeName)
		ss.Scope().SetVersion(b.cfg.scopeVersion)
		t = &tenant{tenantResource: tenantResource{res: rs.Resource().Attributes()}, spans: ss.Spans()}
		if n := b.sizes[j.PID]; n > 0 {
			t.spans.EnsureCapacity(n)
		}
		t.fill(&b.cfg, b.exeNames, j)
		b.tenants[j.PID] = t
		return t
	}
	t.complete(b.exeNames, j)
	return t
}

// learnExecutableName remembers j's process name when j tells it.
func learnExecutableName(names *recent[uint32, string], j *assemble.Job) {
	if name := executableName(j); name != "" {
		names.put(j.PID, name)
	}
}

// complete is called for every later job of the tenant in the batch: when a later job
// taught us the name (main thread), complete the resource without undoing what the hook
// set.
func (t *tenantResource) complete(names *recent[uint32, string], j *assemble.Job) {
	if t.named || j.PID == 0 {
		return
	}
	if name, ok := names.get(j.PID); ok {
		t.res.PutStr(metadata.AttrProcessExecutableName, name)
		if v, ok := t.res.Get(metadata.AttrServiceName); ok && v.Str() == unknownService {
			t.res.PutStr(metadata.AttrServiceName, name)
		}
		t.named = true
	}
}

// fill sets the resource of the tenant whose first job in the batch is j.
func (t *tenantResource) fill(cfg *spanConfig, names *recent[uint32, string], j *assemble.Job) {
	service := unknownService
	if j.PID != 0 {
		t.res.PutInt(metadata.AttrProcessPID, int64(j.PID))
		if name, ok := names.get(j.PID); ok {
			t.res.PutStr(metadata.AttrProcessExecutableName, name)
			service = name
			t.named = true
		}
	}
	t.res.PutStr(metadata.AttrServiceName, service)
	if cfg.hostName != "" {
		t.res.PutStr(metadata.AttrHostName, cfg.hostName)
	}
	if len(j.Resource) > 0 {
		putAttrs(t.res, j.Resource)
		if _, ok := t.res.Get(metadata.AttrProcessExecutableName); ok {
			t.named = true
		}
	}
	if cfg.resource != nil {
		cfg.resource(j, t.res)
		if _, ok := t.res.Get(metadata.AttrProcessExecutableName); ok {
			t.named = true
		}
	}
}
