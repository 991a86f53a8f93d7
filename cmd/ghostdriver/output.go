// Output plumbing shared by the CLI commands: OTLP/JSON line files in the collector file
// exporter's format, and the pipeline settings exposed as flags.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/ghostdriver/ghostdriver/internal/assemble"
	"github.com/ghostdriver/ghostdriver/internal/emit"
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
}

func addPipelineFlags(fs *flag.FlagSet) *pipelineFlags {
	d := receiverDefaults() // the collector's defaults: both run the same pipeline
	pf := &pipelineFlags{}
	fs.DurationVar(&pf.jobTimeout, "job-timeout", d.JobTimeout, "evict jobs without progress for this long (capture clock)")
	fs.IntVar(&pf.maxPending, "max-pending-jobs", d.MaxPendingJobs, "cap on unfinished jobs held")
	fs.DurationVar(&pf.reorderWindow, "reorder-window", d.ReorderWindow, "hold finished jobs this long for late events")
	fs.DurationVar(&pf.flushInterval, "flush-interval", d.FlushInterval, "how often spans are written")
	fs.DurationVar(&pf.collectEvery, "collection-interval", d.CollectionInterval, "how often metrics are written")
	fs.BoolVar(&pf.noStageSpans, "no-stage-spans", !d.StageSpans, "one span per job, without its stage child spans (stages stay in the metrics)")
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

// jsonLines writes one JSON document per line, as the collector's file exporter does.
type jsonLines struct {
	f *os.File
	w *bufio.Writer
}

func createJSONLines(path string) (*jsonLines, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	return &jsonLines{f: f, w: bufio.NewWriterSize(f, 1<<20)}, nil
}

func (j *jsonLines) write(b []byte) error {
	if _, err := j.w.Write(b); err != nil {
		return err
	}
	return j.w.WriteByte('\n')
}

func (j *jsonLines) close() error {
	return errors.Join(j.w.Flush(), j.f.Close())
}

func fileOutputs(tracesPath, metricsPath string) (pipeline.Outputs, func() error, error) {
	var outs pipeline.Outputs
	var closers []func() error
	if tracesPath != "" {
		jl, err := createJSONLines(tracesPath)
		if err != nil {
			return outs, nil, fmt.Errorf("--output: %w", err)
		}
		closers = append(closers, jl.close)
		var m ptrace.JSONMarshaler
		outs.Traces = func(_ context.Context, td ptrace.Traces) error {
			b, err := m.MarshalTraces(td)
			if err != nil {
				return err
			}
			return jl.write(b)
		}
	}
	if metricsPath != "" {
		jl, err := createJSONLines(metricsPath)
		if err != nil {
			for _, c := range closers {
				_ = c()
			}
			return outs, nil, fmt.Errorf("--metrics-output: %w", err)
		}
		closers = append(closers, jl.close)
		var m pmetric.JSONMarshaler
		outs.Metrics = func(_ context.Context, md pmetric.Metrics) error {
			b, err := m.MarshalMetrics(md)
			if err != nil {
				return err
			}
			return jl.write(b)
		}
	}
	return outs, func() error {
		var errs []error
		for _, c := range closers {
			errs = append(errs, c())
		}
		return errors.Join(errs...)
	}, nil
}
