// Pipeline settings exposed as flags, shared by the CLI commands (the output files are
// otlpfile.go's).

package main

import (
	"errors"
	"flag"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ghostdriver/ghostdriver/internal/assemble"
	"github.com/ghostdriver/ghostdriver/internal/emit"
	"github.com/ghostdriver/ghostdriver/internal/graph"
	"github.com/ghostdriver/ghostdriver/internal/metadata"
	"github.com/ghostdriver/ghostdriver/internal/pipeline"
	"github.com/ghostdriver/ghostdriver/internal/sample"
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

	samplerFlags
}

// samplerFlags set the sampler (internal/sample): on for live unless --no-sample, off for
// a replay unless --sample or one of its settings is given.
type samplerFlags struct {
	replay           bool
	sample, noSample bool
	sampling         sample.Config
	sampleNoParent   bool
	fs               *flag.FlagSet
}

// samplingFlags are the flags that set the sampler (giving one turns it on for a replay).
var samplingFlags = []string{"sample-budget", "sample-probability", "sample-no-parent",
	"keep-slowest-window", "keep-latency-above", "keep-dependency-wait-above"}

func addPipelineFlags(fs *flag.FlagSet) *pipelineFlags {
	d := defaultSpec() // the collector's defaults too: both run the same pipeline
	pf := &pipelineFlags{cmd: fs.Name()}
	fs.DurationVar(&pf.jobTimeout, "job-timeout", d.Pipeline.Assemble.JobTimeout, "evict jobs without progress for this long (capture clock)")
	fs.IntVar(&pf.maxPending, "max-pending-jobs", d.Pipeline.Assemble.MaxPendingJobs, "cap on unfinished jobs held")
	fs.DurationVar(&pf.reorderWindow, "reorder-window", d.Pipeline.Assemble.ReorderWindow, "hold finished jobs this long for late events")
	fs.DurationVar(&pf.flushInterval, "flush-interval", d.Pipeline.FlushInterval, "how often spans are written")
	fs.DurationVar(&pf.collectEvery, "collection-interval", d.Pipeline.CollectionInterval, "how often metrics are written")
	fs.BoolVar(&pf.noStageSpans, "no-stage-spans", !graph.DefaultStageSpans, "one span per job, without its stage child spans (stages stay in the metrics)")
	pf.samplerFlags.add(fs, true)
	return pf
}

// add registers the sampler's flags on fs; jobs: the DRM keep rule of dependency waits
// applies (a CUDA submission has no dependency stage).
func (sf *samplerFlags) add(fs *flag.FlagSet, jobs bool) {
	sd := sample.DefaultConfig()
	sf.sampling, sf.fs = sd, fs
	fs.BoolVar(&sf.sample, "sample", false, "sample the spans of a replay too (default: a replay writes every job's spans, live samples them)")
	fs.BoolVar(&sf.noSample, "no-sample", false, "every job's spans, without the sampler (live)")
	fs.Float64Var(&sf.sampling.SpansPerSecond, "sample-budget", sd.SpansPerSecond, "sampler: spans a second (capture clock) kept beside what keep rules and sampled parents force")
	fs.Float64Var(&sf.sampling.Probability, "sample-probability", sd.Probability, "sampler: the probability share's ceiling, in (0, 1]")
	fs.BoolVar(&sf.sampleNoParent, "sample-no-parent", !sd.ParentBased, "sampler: do not follow the application span's sampled flag")
	fs.DurationVar(&sf.sampling.Keep.SlowestWindow, "keep-slowest-window", sd.Keep.SlowestWindow, "sampler: keep the slowest job of each ring (CUDA: of each process) per window this long (0: off)")
	fs.DurationVar(&sf.sampling.Keep.LatencyAbove, "keep-latency-above", sd.Keep.LatencyAbove, "sampler: keep every job longer than this (0: off)")
	if jobs {
		fs.DurationVar(&sf.sampling.Keep.DependencyWaitAbove, "keep-dependency-wait-above", sd.Keep.DependencyWaitAbove, "sampler: keep every job whose dependency wait is longer (0: off)")
	}
}

// samplingConfig is the sampler's configuration of the flags (nil: off), or the error
// that names the flag at fault.
func (sf *samplerFlags) samplingConfig() (*sample.Config, error) {
	given := false
	sf.fs.Visit(func(f *flag.Flag) {
		if slices.Contains(samplingFlags, f.Name) {
			given = true
		}
	})
	var on *bool
	switch {
	case sf.sample && sf.noSample:
		return nil, errors.New("--sample and --no-sample: give one")
	case sf.noSample && given:
		return nil, errors.New("--no-sample with sampler settings: drop one")
	case sf.sample || given:
		on = &sf.sample
		sf.sample = true
	case sf.noSample:
		off := false
		on = &off
	}
	if !graph.SamplingOn(on, sf.replay) {
		return nil, nil
	}
	c := sf.sampling
	c.ParentBased = !sf.sampleNoParent
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("%v (flags: --sample-budget, --sample-probability, --keep-…)", err)
	}
	return &c, nil
}

// config is the pipeline's configuration of the flags (a sampler that samplingConfig
// refuses is left out: callers check samplingConfig first).
func (pf *pipelineFlags) config() pipeline.Config {
	smp, _ := pf.samplingConfig()
	return pipeline.Config{
		Sampling: smp,
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
