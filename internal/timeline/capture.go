// A capture (ftrace or `trace-cmd report` text) read straight into jobs: the replay graph
// (internal/graph, the one the receiver and `ghostdriver replay` build), keeping the spans
// it emits.

package timeline

import (
	"context"
	"fmt"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/ghostdriver/ghostdriver/internal/graph"
	"github.com/ghostdriver/ghostdriver/internal/pipeline"
	"github.com/ghostdriver/ghostdriver/internal/replay"
)

// Capture replays the capture at path with cfg (Lossless is forced: a finite input loses
// nothing) and returns its jobs. each, when not nil, also sees every span batch.
func Capture(ctx context.Context, rc replay.Config, cfg pipeline.Config, each func(ptrace.Traces)) (*Set, pipeline.Stats, error) {
	cfg.Lossless = true
	g, err := graph.Open(graph.Spec{Replay: &rc, Pipeline: cfg}, nil)
	if err != nil {
		return nil, pipeline.Stats{}, err
	}
	defer g.Close()
	b := NewBuilder()
	out := pipeline.Outputs{Traces: func(_ context.Context, td ptrace.Traces) error {
		b.Add(td)
		if each != nil {
			each(td)
		}
		return nil
	}}
	p := g.Pipeline(out, nil)
	runErr := p.Run(ctx)
	st := p.Stats()
	if runErr != nil {
		return nil, st, runErr
	}
	if st.DroppedJobs > 0 {
		return nil, st, fmt.Errorf("%d job spans dropped", st.DroppedJobs)
	}
	return b.Finish(), st, nil
}
