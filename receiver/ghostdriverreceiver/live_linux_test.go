// The receiver's configuration as the graph turns it into the probe's.
package ghostdriverreceiver

import (
	"slices"
	"testing"

	"go.opentelemetry.io/collector/component"

	"github.com/ghostdriver/ghostdriver/internal/graph"
	"github.com/ghostdriver/ghostdriver/internal/metadata"
)

// The kernel reads only the in-kernel tiers, in their configured relative order.
func TestProbeConfigContextTiers(t *testing.T) {
	cfg, err := loadConfig(t, "config.yaml", component.NewIDWithName(metadata.Type, "live").String())
	if err != nil {
		t.Fatal(err)
	}
	spec, err := specOf(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if pc := graph.ProbeConfig(spec); !slices.Equal(pc.ContextTiers, []string{"otep4947"}) || pc.OBIMapPath != cfg.Context.OBIMapPath {
		t.Errorf("probe config: tiers %v obi %q", pc.ContextTiers, pc.OBIMapPath)
	}
}
