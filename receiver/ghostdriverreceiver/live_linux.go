// The live sources' Linux parts the receiver needs: the probe's defaults for the
// configuration, and the CUDA source's counts for the stop log (the sources themselves are
// opened by internal/graph).

package ghostdriverreceiver

import (
	"go.uber.org/zap"

	"github.com/ghostdriver/ghostdriver/internal/graph"
	"github.com/ghostdriver/ghostdriver/internal/probe"
)

func defaultLiveConfig() LiveConfig {
	d := probe.DefaultConfig()
	return LiveConfig{
		DRMMajors:             d.DRMMajors,
		BOValidationFunctions: d.BOValidationFuncs,
		RunJobFunctions:       d.RunJobFuncs,
		RingBufferSize:        d.RingBufferBytes,
		PollInterval:          d.PollInterval,
		IRQNames:              d.IRQNames,
		MountTracefs:          true,
		CUDA:                  defaultCUDAConfig(),
	}
}

// cudaSourceFields are the CUDA source's own counts, logged when the pipeline stops.
func cudaSourceFields(g *graph.Graph) []zap.Field {
	src := g.CUDASource()
	if src == nil {
		return nil
	}
	st := src.Stats()
	return []zap.Field{zap.Uint64("records_lost", st.Lost), zap.Uint64("returns_missed", st.StaleFrames),
		zap.Uint64("entry_points_refused", st.EntryPointsRefused), zap.Uint64("maps_reads_cut", st.MapsTruncated),
		zap.Uint64("thread_contexts_unreadable", st.ContextUnreadable)}
}
