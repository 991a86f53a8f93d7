// The sampler's metrics (internal/sample): spans kept and sampled out by reason and kind,
// and the probability share's probability. Written by the pipeline beside both branches'
// metrics, since one sampler serves both.

package emit

import (
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/ghostdriver/ghostdriver/internal/metadata"
	"github.com/ghostdriver/ghostdriver/internal/sample"
)

// AppendSamplingMetrics appends the sampler's metrics (cumulative since start) to md, in
// a resource of their own with the receiver's scope; nothing when none is enabled.
func AppendSamplingMetrics(md pmetric.Metrics, cfg metadata.MetricsConfig, start, now time.Time, st sample.Stats) {
	spans, prob := cfg.Enabled(metadata.MetricSamplingSpans), cfg.Enabled(metadata.MetricSamplingProbability)
	if !spans && !prob {
		return
	}
	sm := md.ResourceMetrics().AppendEmpty().ScopeMetrics().AppendEmpty()
	sm.Scope().SetName(metadata.ScopeName)
	sm.Scope().SetVersion(metadata.ScopeVersion)
	c := collection{start: pcommon.NewTimestampFromTime(start), now: pcommon.NewTimestampFromTime(now), ms: sm.Metrics()}
	for i := range metadata.Metrics {
		d := &metadata.Metrics[i]
		switch {
		case d.Name == metadata.MetricSamplingSpans && spans:
			dps := c.metric(d).Sum().DataPoints()
			for k := range sample.NumKinds {
				for r := range sample.NumReasons {
					for _, p := range [...]struct {
						decision string
						n        uint64
					}{{metadata.SamplingKept, st.SpansKept[k][r]}, {metadata.SamplingSampledOut, st.SpansDropped[k][r]}} {
						if p.n == 0 {
							continue
						}
						a := c.sumPoint(dps, p.n).Attributes()
						a.PutStr(metadata.AttrSamplingDecision, p.decision)
						a.PutStr(metadata.AttrSamplingReason, sample.ReasonNames[r])
						a.PutStr(metadata.AttrSamplingKind, sample.KindNames[k])
					}
				}
			}
		case d.Name == metadata.MetricSamplingProbability && prob:
			dp := c.metric(d).Gauge().DataPoints().AppendEmpty()
			dp.SetTimestamp(c.now)
			dp.SetDoubleValue(st.Probability)
		}
	}
	c.ms.RemoveIf(func(x pmetric.Metric) bool { return dataPoints(x) == 0 })
}
