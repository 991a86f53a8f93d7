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

// tenant is one process's ResourceSpans in the current batch.
type tenant struct {
	res   pcommon.Map
	spans ptrace.SpanSlice
	named bool // process.executable.name is set
}

// tenantOf returns the tenant of job j, creating its ResourceSpans on first use.
func (b *SpanBuilder) tenantOf(j *assemble.Job) *tenant {
	if name := executableName(j); name != "" {
		b.exeNames.put(j.PID, name)
	}
	t, ok := b.tenants[j.PID]
	if !ok {
		rs := b.traces.ResourceSpans().AppendEmpty()
		ss := rs.ScopeSpans().AppendEmpty()
		ss.Scope().SetName(metadata.ScopeName)
		ss.Scope().SetVersion(b.cfg.scopeVersion)
		t = &tenant{res: rs.Resource().Attributes(), spans: ss.Spans()}
		if n := b.sizes[j.PID]; n > 0 {
			t.spans.EnsureCapacity(n)
		}
		b.fillResource(t, j)
		b.tenants[j.PID] = t
		return t
	}
	if !t.named && j.PID != 0 {
		// A later job of the batch taught us the name (main thread): complete the
		// resource without undoing what the hook set.
		if name, ok := b.exeNames.get(j.PID); ok {
			t.res.PutStr(metadata.AttrProcessExecutableName, name)
			if v, ok := t.res.Get(metadata.AttrServiceName); ok && v.Str() == unknownService {
				t.res.PutStr(metadata.AttrServiceName, name)
			}
			t.named = true
		}
	}
	return t
}

func (b *SpanBuilder) fillResource(t *tenant, j *assemble.Job) {
	service := unknownService
	if j.PID != 0 {
		t.res.PutInt(metadata.AttrProcessPID, int64(j.PID))
		if name, ok := b.exeNames.get(j.PID); ok {
			t.res.PutStr(metadata.AttrProcessExecutableName, name)
			service = name
			t.named = true
		}
	}
	t.res.PutStr(metadata.AttrServiceName, service)
	if b.cfg.hostName != "" {
		t.res.PutStr(metadata.AttrHostName, b.cfg.hostName)
	}
	if len(j.Resource) > 0 {
		putAttrs(t.res, j.Resource)
		if _, ok := t.res.Get(metadata.AttrProcessExecutableName); ok {
			t.named = true
		}
	}
	if b.cfg.resource != nil {
		b.cfg.resource(j, t.res)
		if _, ok := t.res.Get(metadata.AttrProcessExecutableName); ok {
			t.named = true
		}
	}
}
