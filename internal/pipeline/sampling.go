// The sampler's place in the pipeline: after a job's (or submission's) metrics, before
// its spans. One sampler serves both branches, under the pipeline's lock, so the budget is
// the node's whatever kind of work fills it.

package pipeline

import (
	"github.com/ghostdriver/ghostdriver/internal/assemble"
	"github.com/ghostdriver/ghostdriver/internal/emit"
	"github.com/ghostdriver/ghostdriver/internal/sample"
)

// w3cSampled is the sampled bit of the W3C trace flags.
const w3cSampled = 0x01

// jobItem is what the sampler is told of DRM job j whose spans would be spans many and,
// as a root, carry trace id root.
func jobItem(j *assemble.Job, root [16]byte, spans int) sample.Item {
	it := sample.Item{
		Kind:          sample.KindJob,
		Root:          root,
		Trace:         j.TraceID,
		Linked:        emit.Linked(j),
		ParentSampled: j.TraceFlags&w3cSampled != 0,
		Spans:         spans,
		End:           j.End,
		Latency:       j.End - j.Start,
		// DRM jobs carry no failure of their own: fence errors are in no event
		// (assemble/deps.go); an error status is an incomplete or evicted job.
		Incomplete: j.Outcome != assemble.Completed,
		Lost:       j.Loss.Windows > 0,
		Group:      sample.Group{A: j.Driver, B: j.Device, C: j.Ring},
	}
	if st, ok := j.Stage(assemble.StageFenceDependency); ok {
		it.DependencyWait = st.End - st.Start
	}
	return it
}

// sampleJob decides job j's spans (under p.mu): whether they are built, and how.
func (p *Pipeline) sampleJob(j *assemble.Job) (sample.Sampled, bool) {
	if p.sampler == nil {
		return sample.Sampled{}, true
	}
	var root [16]byte
	if p.enc != nil {
		root = p.enc.RootTraceID(j)
	} else {
		root = p.spans.RootTraceID(j)
	}
	spans := 1
	if p.stageSpans {
		spans += len(j.Stages)
	}
	it := jobItem(j, root, spans)
	d := p.sampler.Decide(&it)
	if !d.Keep {
		if p.enc != nil {
			p.enc.Skip(j)
		} else {
			p.spans.Skip(j)
		}
	}
	return d.Sampled, d.Keep
}
