// Span links from a job to the jobs whose fences it waited on.
//
// Dependencies on other jobs (same or other tenants) are causal but not parental: the spec's
// form for them is a link. A link needs the other span's trace id, which is the other
// application's trace when that job carried an app context. The builder remembers the ids
// of recently emitted jobs (WithLinkMemory) and uses them; a dependency normally finished
// before the dependent job ran, so it was emitted first. When it is not remembered, the
// link falls back to the derived ids: the span id is then right (ids.go derives it from
// the finished fence alone) and the trace id is right unless that job had an app context.

package emit

import (
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/ghostdriver/ghostdriver/internal/assemble"
)

// appendLinks adds one link per dependency that is another job the assembler saw, with
// spanmodel.go's link attributes.
// A detached job (Sampled.Detach) links first to its application span.
func (b *SpanBuilder) appendLinks(sp ptrace.Span, j *assemble.Job, detach bool) {
	n := 0
	if detach {
		n++
	}
	for i := range j.Deps {
		if linked(j, &j.Deps[i]) {
			n++
		}
	}
	if n == 0 {
		return
	}
	links := sp.Links()
	links.EnsureCapacity(n)
	if detach {
		l := links.AppendEmpty()
		l.SetTraceID(j.TraceID)
		l.SetSpanID(j.SpanID)
		b.attrs = appendOwnAttrs(b.attrs[:0], parentLinkAttributes[:], j)
		putOwnAttrs(l.Attributes(), b.attrs)
	}
	for i := range j.Deps {
		d := &j.Deps[i]
		if !linked(j, d) {
			continue
		}
		ref := linkTarget(b.emitted, b.cfg.salt, d)
		l := links.AppendEmpty()
		l.SetTraceID(ref.trace)
		l.SetSpanID(ref.span)
		b.attrs = appendOwnAttrs(b.attrs[:0], linkAttributes[:], d)
		a := l.Attributes()
		a.EnsureCapacity(len(b.attrs))
		putOwnAttrs(a, b.attrs)
	}
}
