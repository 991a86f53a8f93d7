// The live spec's tracefs and fence-filter switches reach the probe's configuration.
package graph

import "testing"

func TestProbeConfigCarriesTracefsAndFenceFilter(t *testing.T) {
	g := &Graph{spec: Spec{Live: &LiveSpec{}}}
	if pc := g.probeConfig(); pc.NoTracefsMount || pc.FenceFilter {
		t.Errorf("zero spec: NoTracefsMount %v, FenceFilter %v", pc.NoTracefsMount, pc.FenceFilter)
	}
	g.spec.Live = &LiveSpec{NoTracefsMount: true, FenceFilter: true}
	if pc := g.probeConfig(); !pc.NoTracefsMount || !pc.FenceFilter {
		t.Errorf("set: NoTracefsMount %v, FenceFilter %v", pc.NoTracefsMount, pc.FenceFilter)
	}
}
