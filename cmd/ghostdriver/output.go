// Pipeline settings exposed as flags, shared by the CLI commands (the output files are
// otlpfile.go's).

package main

import (
	"flag"
	"strings"
	"time"

	"github.com/ghostdriver/ghostdriver/internal/assemble"
	"github.com/ghostdriver/ghostdriver/internal/emit"
	"github.com/ghostdriver/ghostdriver/internal/graph"
	"github.com/ghostdriver/ghostdriver/internal/metadata"
	"github.com/ghostdriver/ghostdriver/internal/pipeline"
)

type pipelineFlags struct {
	jobTimeout    time.Duration
	maxPending    int
	reorderWindow time.Duration
	flushInterval time.Duration
	collectEvery  time.Duration
	noStageSpans  bool
	spanOptions   []emit.SpanOption
	enricher      pipeline.Enricher // live only
	// lossless: the source waits for the output instead of dropping spans (replay).
	lossless     bool
	outputFormat string // formatJSON (default) or formatProto
	cmd          string // the command's name, for its one-prefix error lines
}

func addPipelineFlags(fs *flag.FlagSet) *pipelineFlags {
	d := defaultSpec() // the collector's defaults too: both run the same pipeline
	pf := &pipelineFlags{cmd: fs.Name()}
	fs.DurationVar(&pf.jobTimeout, "job-timeout", d.Pipeline.Assemble.JobTimeout, "evict jobs without progress for this long (capture clock)")
	fs.IntVar(&pf.maxPending, "max-pending-jobs", d.Pipeline.Assemble.MaxPendingJobs, "cap on unfinished jobs held")
	fs.DurationVar(&pf.reorderWindow, "reorder-window", d.Pipeline.Assemble.ReorderWindow, "hold finished jobs this long for late events")
	fs.DurationVar(&pf.flushInterval, "flush-interval", d.Pipeline.FlushInterval, "how often spans are written")
	fs.DurationVar(&pf.collectEvery, "collection-interval", d.Pipeline.CollectionInterval, "how often metrics are written")
	fs.BoolVar(&pf.noStageSpans, "no-stage-spans", !graph.DefaultStageSpans, "one span per job, without its stage child spans (stages stay in the metrics)")
	return pf
}

func (pf *pipelineFlags) config() pipeline.Config {
	return pipeline.Config{
		Assemble: assemble.Config{
			JobTimeout:     pf.jobTimeout,
			MaxPendingJobs: pf.maxPending,
			ReorderWindow:  pf.reorderWindow,
		},
		Metrics:            metadata.DefaultMetricsConfig(),
		FlushInterval:      pf.flushInterval,
		CollectionInterval: pf.collectEvery,
		SpanOptions:        append([]emit.SpanOption{emit.WithStageSpans(!pf.noStageSpans)}, pf.spanOptions...),
		Enricher:           pf.enricher,
		Lossless:           pf.lossless,
	}
}

// reorderFlags lets flags follow the positional argument (`replay CAPTURE --output x`).
func reorderFlags(fs *flag.FlagSet, args []string) []string {
	var flags, pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			pos = append(pos, args[i+1:]...)
			break
		}
		if strings.HasPrefix(a, "-") && len(a) > 1 {
			flags = append(flags, a)
			name := strings.TrimLeft(a, "-")
			if strings.Contains(name, "=") {
				continue
			}
			if f := fs.Lookup(name); f != nil {
				if bf, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && bf.IsBoolFlag() {
					continue
				}
				if i+1 < len(args) {
					flags = append(flags, args[i+1])
					i++
				}
			}
			continue
		}
		pos = append(pos, a)
	}
	return append(flags, pos...)
}
