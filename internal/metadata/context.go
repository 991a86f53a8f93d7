// Names of the enrich stage's own metrics (internal/enrich): jobs held for their
// process's first read, and re-discoveries of a process's OTEP 4947 thread context.

package metadata

const (
	MetricContextHeldJobs      = "ghostdriver.context.held_jobs"
	MetricContextRediscoveries = "ghostdriver.context.rediscoveries"

	// ghostdriver.context.held_jobs: how a job that found its process's read in flight went on.
	AttrHoldOutcome = "ghostdriver.hold.outcome"
	// ghostdriver.context.rediscoveries: how a trigger for a re-discovery ended.
	AttrRediscoveryOutcome = "ghostdriver.rediscovery.outcome"
)

// HoldOutcomes are AttrHoldOutcome's values, in the order of enrich.HoldOutcome.
var HoldOutcomes = []string{"read_landed", "max_wait", "max_held", "shutdown"}

// RediscoveryOutcomes are AttrRediscoveryOutcome's values, in the order of
// enrich.RediscoveryOutcome.
var RediscoveryOutcomes = []string{"found", "not_found", "rate_limited"}
