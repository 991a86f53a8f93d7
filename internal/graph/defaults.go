// The one default configuration of the graph, read by the collector receiver's
// createDefaultConfig and by the CLI's flag defaults, so that `ghostdriver replay` and
// `source: replay` (or `live`) give the same spans for the same input.

package graph

import (
	"slices"
	"time"

	"github.com/ghostdriver/ghostdriver/internal/assemble"
	"github.com/ghostdriver/ghostdriver/internal/ctxtier"
	"github.com/ghostdriver/ghostdriver/internal/cuda"
	"github.com/ghostdriver/ghostdriver/internal/cupti"
	"github.com/ghostdriver/ghostdriver/internal/enrich"
	"github.com/ghostdriver/ghostdriver/internal/metadata"
	"github.com/ghostdriver/ghostdriver/internal/pipeline"
	"github.com/ghostdriver/ghostdriver/internal/probe"
	"github.com/ghostdriver/ghostdriver/internal/tenant"
)

// DefaultStageSpans: a job's span has its stage child spans unless told otherwise.
const DefaultStageSpans = true

// DefaultSpec is the Spec of a user who sets nothing, with every live source's defaults
// filled in (Live and CUDA given; Replay needs a capture and stays nil). The same on
// every platform: configurations validate alike where the live sources do not run.
func DefaultSpec() Spec {
	live := probe.DefaultConfig()
	ten := tenant.DefaultConfig()
	return Spec{
		Live: &LiveSpec{
			DRMMajors:         live.DRMMajors,
			BOValidationFuncs: live.BOValidationFuncs,
			RunJobFuncs:       live.RunJobFuncs,
			RingBufferBytes:   live.RingBufferBytes,
			PollInterval:      live.PollInterval,
			IRQNames:          live.IRQNames,
		},
		CUDA: &CUDASpec{
			RescanInterval:  cuda.DefaultRescanInterval,
			RingBufferBytes: cuda.DefaultRingBufferBytes,
			Layers:          cuda.LayersBoth,
			Timeline:        cupti.Policy{Mode: cupti.ModeOff, OnFor: 2 * time.Second, Every: time.Minute},
		},
		Enrich:   true,
		ProcRoot: ten.ProcRoot,
		SysRoot:  ten.SysRoot,
		Context: ContextSpec{
			Tiers:      slices.Clone(enrich.DefaultTiers),
			OBIMapPath: ctxtier.OBIMapPath,
			MaxWait:    enrich.DefaultMaxWait,
		},
		Pipeline: pipeline.Config{
			Assemble:           assemble.DefaultConfig(),
			Metrics:            metadata.DefaultMetricsConfig(),
			FlushInterval:      200 * time.Millisecond,
			CollectionInterval: 10 * time.Second,
		},
	}
}

// SamplingOn reports whether the sampler runs (internal/sample): as asked when enabled is
// set, else on for the live sources and off for a replay, which reads a capture to see
// every job in it (the budget protects a backend from a node's live rate; a capture's
// source-clock rate says nothing of the backend).
func SamplingOn(enabled *bool, replay bool) bool {
	if enabled != nil {
		return *enabled
	}
	return !replay
}
