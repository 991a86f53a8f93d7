// The live sources' Linux part the receiver needs: the CUDA source's counts for the stop
// log (the sources themselves are opened by internal/graph; the defaults are
// graph.DefaultSpec's on every platform).

package ghostdriverreceiver

import (
	"go.uber.org/zap"

	"github.com/ghostdriver/ghostdriver/internal/graph"
)

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
