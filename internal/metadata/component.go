// Component identity of the receiver, as mdatagen would describe it from metadata.yaml
// (written by hand: mdatagen is not available to this project).
package metadata

import "go.opentelemetry.io/collector/component"

var (
	// Type is the receiver's component type.
	Type = component.MustNewType("ghostdriver")
	// ScopeName is the instrumentation scope of everything the receiver emits.
	ScopeName = "github.com/ghostdriver/ghostdriver/receiver/ghostdriverreceiver"
)

// Stability of each signal.
const (
	TracesStability  = component.StabilityLevelDevelopment
	MetricsStability = component.StabilityLevelDevelopment
)
