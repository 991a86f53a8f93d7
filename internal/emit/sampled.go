// How the sampler's decision (internal/sample) shows in a kept job's spans: the tracestate
// every span of the job carries, and, for a job kept under an application span that was
// not sampled, a trace of its own with a link to that span.

package emit

import (
	"github.com/ghostdriver/ghostdriver/internal/assemble"
	"github.com/ghostdriver/ghostdriver/internal/metadata"
	"github.com/ghostdriver/ghostdriver/internal/sample"
)

// Sampled is the sampler's decision for a kept job (sample.Sampled; the zero value: no
// sampler).
type Sampled = sample.Sampled

// sampledTraceState is s's tracestate for job j's spans. A job the id guard renamed
// carries another trace id than the one the sampler drew its randomness from
// (RootTraceID): its tracestate then names that randomness (rv), so that samplers
// downstream use it too.
func sampledTraceState(s Sampled, renamed bool, salt uint64, j *assemble.Job) string {
	if !renamed || s.TraceState == "" {
		return s.TraceState
	}
	return sample.WithRandomness(s.TraceState, RootTraceID(salt, j))
}

// parentLinkAttributes are the attributes of a detached job's link to its application span.
var parentLinkAttributes = [...]ownAttr[assemble.Job]{
	{newAttrKey(metadata.AttrSamplingUnsampledParent), func(*assemble.Job) ownValue { return trueValue(true) }},
}

// Linked reports whether job j carries an application context (both ids non-zero): its
// spans are children of the application span unless the sampler detaches them.
func Linked(j *assemble.Job) bool { return hasAppContext(j) }

// RootTraceID is the package's RootTraceID with the builder's salt.
func (b *SpanBuilder) RootTraceID(j *assemble.Job) [16]byte { return RootTraceID(b.cfg.salt, j) }

// RootTraceID is the package's RootTraceID with the encoder's salt.
func (e *JobEncoder) RootTraceID(j *assemble.Job) [16]byte { return RootTraceID(e.cfg.salt, j) }

// Skip tells the builder of a job the sampler left out: it still learns what the job
// says of its process (the executable's name), so that the resources of the jobs it keeps
// are those they would be without sampling.
func (b *SpanBuilder) Skip(j *assemble.Job) { learnExecutableName(b.exeNames, j) }

// Skip is SpanBuilder.Skip.
func (e *JobEncoder) Skip(j *assemble.Job) { learnExecutableName(e.exeNames, j) }
