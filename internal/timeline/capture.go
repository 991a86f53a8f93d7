// A capture (ftrace or `trace-cmd report` text) read straight into jobs: the replay source
// through the receiver's pipeline, keeping the spans it emits.
package timeline

import (
	"context"
	"fmt"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/ghostdriver/ghostdriver/internal/pipeline"
	"github.com/ghostdriver/ghostdriver/internal/replay"
)

// Capture replays the capture at path with cfg (Lossless is forced: a finite input loses
// nothing) and returns its jobs. each, when not nil, also sees every span batch.
func Capture(ctx context.Context, rc replay.Config, cfg pipeline.Config, each func(ptrace.Traces)) (*Set, pipeline.Stats, error) {
	src, err := replay.New(rc)
	if err != nil {
		return nil, pipeline.Stats{}, err
	}
	cfg.Lossless = true
	b := NewBuilder()
	out := pipeline.Outputs{Traces: func(_ context.Context, td ptrace.Traces) error {
		b.Add(td)
		if each != nil {
			each(td)
		}
		return nil
	}}
	p := pipeline.New(cfg, src, out, nil)
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
