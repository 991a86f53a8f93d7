// `ghostdriver replay`: a capture in, OTLP spans (the collector file exporter's formats:
// OTLP/JSON lines, or length-prefixed protobuf) and a per-ring/per-stage summary out.
// Replay is lossless: the reader waits for the output file, nothing is dropped.

package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"sync/atomic"

	"github.com/ghostdriver/ghostdriver/internal/assemble"
	"github.com/ghostdriver/ghostdriver/internal/graph"
	"github.com/ghostdriver/ghostdriver/internal/replay"
	"github.com/ghostdriver/ghostdriver/internal/summary"
)

func cmdReplay(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("replay", flag.ContinueOnError)
	fs.SetOutput(stderr)
	epoch := fs.String("epoch", "", "wall-clock time of capture timestamp 0: unix ns or RFC 3339 (default: anchor the capture to now)")
	speed := fs.Float64("speed", 0, "0 = as fast as possible, 1 = real time")
	output := fs.String("output", "", "write spans to this file (OTLP/JSON lines, or see --output-format)")
	metricsOut := fs.String("metrics-output", "", "write metrics to this file (in --output-format)")
	quiet := fs.Bool("quiet", false, "do not print the summary table")
	traceJSON := fs.String("trace-json", "", "also write the jobs as Chrome trace-event JSON (Perfetto UI, chrome://tracing) to this file")
	cfgFlags := addPipelineFlags(fs)
	cfgFlags.lossless = true // a capture has no live source to protect: wait for the output
	cfgFlags.replay = true   // and is read to see every job: no sampler unless asked
	fs.StringVar(&cfgFlags.outputFormat, "output-format", formatJSON,
		"json: OTLP/JSON, one request per line; proto: OTLP protobuf, each request preceded by its length (4 bytes, big-endian), as the collector's file exporter writes them")
	if code, done := parseArgs(fs, reorderFlags(fs, args), stdout, stderr); done {
		return code
	}
	if fs.NArg() != 1 {
		return usageError(stderr, fs, "exactly one CAPTURE file is needed, got %d arguments", fs.NArg())
	}
	if *speed < 0 || math.IsNaN(*speed) || math.IsInf(*speed, 0) {
		return usageError(stderr, fs, "--speed %v: want 0 (as fast as possible) or a positive factor", *speed)
	}
	if f := cfgFlags.outputFormat; f != formatJSON && f != formatProto {
		return usageError(stderr, fs, "--output-format %q: want %q or %q", f, formatJSON, formatProto)
	}
	if _, err := cfgFlags.samplingConfig(); err != nil {
		return usageError(stderr, fs, "%v", err)
	}
	rc := replay.Config{Path: fs.Arg(0), Speed: *speed}
	if *epoch != "" {
		ep, err := replay.ParseEpoch(*epoch)
		if err != nil {
			return usageError(stderr, fs, "--epoch: %v", err)
		}
		rc.Epoch, rc.HasEpoch = ep, true
	}
	g, err := graph.Open(graph.Spec{Replay: &rc, Pipeline: cfgFlags.config()}, nil)
	if err != nil {
		return fail(stderr, "replay", err)
	}
	defer g.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var tj *traceJSONOutput // export.go
	if *traceJSON != "" {
		if tj, err = newTraceJSONOutput(*traceJSON); err != nil {
			return fail(stderr, "replay", err)
		}
	}
	return runPipeline(ctx, g, cfgFlags, *output, *metricsOut, !*quiet, stdout, stderr, tj)
}

// runPipeline is shared by replay and live: run the graph's pipeline to its end, write
// the files, print the summary; pictures (replay --trace-json) are written after the run.
func runPipeline(ctx context.Context, g *graph.Graph, pf *pipelineFlags, output, metricsOut string, printSummary bool, stdout, stderr io.Writer, pictures ...*traceJSONOutput) int {
	// A file that cannot be written ends the run (the rest would be lost as well).
	// Only a write failure is an abort: the end of a live --duration (the parent's
	// deadline) or Ctrl-C is the normal end of a run.
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var aborted atomic.Pointer[error]
	abort := func(err error) {
		aborted.CompareAndSwap(nil, &err)
		cancel(err)
	}
	// Span files are encoded from the jobs, unless the pictures read the spans too.
	withPictures := false
	for _, pic := range pictures {
		withPictures = withPictures || pic != nil
	}
	outs, closeOuts, err := fileOutputsAs(output, metricsOut, pf.outputFormat, withPictures, abort)
	if err != nil {
		return fail(stderr, pf.cmd, err)
	}
	for _, pic := range pictures {
		if pic != nil {
			outs.Traces = pic.tee(outs.Traces)
		}
	}
	sum := summary.New()
	if printSummary {
		// The table's exact percentiles keep every duration (80 bytes a job): only
		// when it is printed.
		outs.Job = func(j *assemble.Job) { sum.Add(j) }
	}
	p := g.Pipeline(outs, warnLogger(stderr))
	runErr := p.Run(ctx)
	closeErr := closeOuts()
	st := p.Stats()
	if printSummary {
		sum.Write(stdout, st.Source)
		summary.WriteAssembly(stdout, st.Assembler)
		if st.Sampling != nil {
			summary.WriteSampling(stdout, *st.Sampling)
		}
	}
	for _, pic := range pictures {
		if pic != nil && runErr == nil {
			if err := pic.write(stdout, printSummary); err != nil {
				return fail(stderr, pf.cmd, err)
			}
		}
	}
	if runErr != nil {
		return fail(stderr, pf.cmd, runErr)
	}
	if p := aborted.Load(); p != nil && *p != nil {
		cause := *p
		return fail(stderr, pf.cmd, fmt.Errorf("%w (the run stopped there)", cause))
	}
	if closeErr != nil {
		return fail(stderr, pf.cmd, closeErr)
	}
	if st.DroppedJobs > 0 || st.ExportErrors > 0 {
		return fail(stderr, pf.cmd, fmt.Errorf("%d job spans dropped, %d export errors", st.DroppedJobs, st.ExportErrors))
	}
	return 0
}
