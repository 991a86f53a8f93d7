// live.mount_tracefs and live.fence_filter reach the probe: through the receiver's spec
// (specOf) into the graph, whose probeConfig hands them to the live source.
package ghostdriverreceiver

import (
	"testing"

	"go.opentelemetry.io/collector/confmap"
)

func TestMountTracefsAndFenceFilterReachTheSpec(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	if !cfg.Live.MountTracefs || cfg.Live.FenceFilter {
		t.Fatalf("defaults: mount_tracefs %v, fence_filter %v; want true, false", cfg.Live.MountTracefs, cfg.Live.FenceFilter)
	}
	spec, err := specOf(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if spec.Live.NoTracefsMount || spec.Live.FenceFilter {
		t.Errorf("defaults in the spec: %+v", *spec.Live)
	}
	cm := confmap.NewFromStringMap(map[string]any{"live": map[string]any{"mount_tracefs": false, "fence_filter": true}})
	if err := cm.Unmarshal(cfg); err != nil {
		t.Fatal(err)
	}
	if spec, err = specOf(cfg); err != nil {
		t.Fatal(err)
	}
	if !spec.Live.NoTracefsMount || !spec.Live.FenceFilter {
		t.Errorf("mount_tracefs: false, fence_filter: true gave %+v", *spec.Live)
	}
}
