// The enrich stage for the CUDA path (Linux only, like internal/cuda): the same
// Enricher, fed by CUDA calls instead of submit ioctls, with the CUDA source's kernel
// table (cuda.Source.SetProcess) for the OTEP 4947 recipes.

package enrich

import (
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/ghostdriver/ghostdriver/internal/attr/attrpdata"
	"github.com/ghostdriver/ghostdriver/internal/cuda"
)

// CUDA adapts an Enricher to CUDA submissions (pipeline.CUDAEnricher; Resource is a
// cudaspans.ResourceFunc). Sight and Gone are the Enricher's own.
type CUDA struct{ *Enricher }

// Submission chooses the submission's application context by the configured tiers: the
// context the kernel read at its calls, or the process's TRACEPARENT.
func (c CUDA) Submission(s *cuda.Submission) {
	tp, _ := c.Lookup(s.PID)
	s.TraceID, s.SpanID, s.TraceFlags, s.CtxTier = c.ChooseContext(s.CtxTier, s.TraceID, s.SpanID, s.TraceFlags, tp)
}

// Resource completes a CUDA process's resource like a DRM job's: the process's own
// service.name and resource, container, pod, MIG instance.
func (c CUDA) Resource(pid uint32, attrs pcommon.Map) {
	if _, res := c.Lookup(pid); res != nil {
		attrpdata.Put(attrs, res)
	}
}
