// `ghostdriver export`: jobs as a picture file. --format trace-json writes Chrome
// trace-event JSON (the Perfetto UI and chrome://tracing open it) from an OTLP span file
// (JSON lines or length-prefixed proto) or straight from a capture. `replay --trace-json`
// writes the same file during a replay (traceJSONOutput).

package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/ghostdriver/ghostdriver/internal/replay"
	"github.com/ghostdriver/ghostdriver/internal/timeline"
	"github.com/ghostdriver/ghostdriver/internal/tracejson"
)

const formatTraceJSON = "trace-json"

func cmdExport(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("export", flag.ContinueOnError)
	format := fs.String("format", formatTraceJSON, "trace-json: Chrome trace-event JSON for the Perfetto UI and chrome://tracing")
	output := fs.String("output", "-", "write to this file (- is stdout)")
	if code, done := parseArgs(fs, reorderFlags(fs, args), stdout, stderr); done {
		return code
	}
	if fs.NArg() != 1 {
		return usageError(stderr, fs, "exactly one SPANS file or CAPTURE is needed, got %d arguments", fs.NArg())
	}
	if *format != formatTraceJSON {
		return usageError(stderr, fs, "--format %q: want %q", *format, formatTraceJSON)
	}
	set, err := loadJobs(fs.Arg(0), false)
	if err != nil {
		return fail(stderr, "export", err)
	}
	st, err := writeTraceJSON(*output, stdout, set)
	if err != nil {
		return fail(stderr, "export", err)
	}
	if *output != "-" {
		fmt.Fprintf(stdout, "%s: %s (open it in https://ui.perfetto.dev or chrome://tracing)\n", *output, describeTraceJSON(st, set))
	}
	return 0
}

// loadJobs reads the jobs of an OTLP span file, or replays a capture (its timestamps as
// they are: the capture's clock) through the pipeline with the CLI's defaults. A span file
// with no gpu.job is refused unless gpu is set and it holds the NVIDIA GPU timeline
// (cuda.gpu_* spans: the report's coverage table).
func loadJobs(path string, gpu bool) (*timeline.Set, error) {
	format, err := timeline.Sniff(path)
	if err != nil {
		return nil, err
	}
	if format != timeline.NotOTLP {
		set, err := timeline.ReadFile(path)
		if err == nil && len(set.Jobs) == 0 && !(gpu && len(set.GPU) > 0) {
			err = fmt.Errorf("%s has no gpu.job spans (%d other spans)", path, set.OtherSpans+set.OrphanStages)
		}
		return set, err
	}
	pf := addPipelineFlags(flag.NewFlagSet("defaults", flag.ContinueOnError))
	pf.replay = true
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	set, st, err := timeline.Capture(ctx, replay.Config{Path: path, HasEpoch: true}, pf.config(), nil)
	if err != nil {
		return nil, fmt.Errorf("%s is not an OTLP span file; replaying it as a capture: %w", path, err)
	}
	if len(set.Jobs) == 0 {
		var events uint64
		for _, n := range st.Source.Events {
			events += n
		}
		return nil, fmt.Errorf("%s is not an OTLP span file, and as a capture it has no GPU jobs (%d events decoded, %d malformed lines)",
			path, events, st.Source.Malformed)
	}
	return set, nil
}

// writeTraceJSON writes set to path ("-": w).
func writeTraceJSON(path string, w io.Writer, set *timeline.Set) (tracejson.Stats, error) {
	if path == "-" {
		bw := bufio.NewWriter(w)
		st, err := tracejson.Write(bw, set)
		return st, errors.Join(err, bw.Flush())
	}
	f, err := os.Create(path)
	if err != nil {
		return tracejson.Stats{}, err
	}
	st, err := tracejson.Write(f, set)
	return st, errors.Join(err, f.Close())
}

func describeTraceJSON(st tracejson.Stats, set *timeline.Set) string {
	s := fmt.Sprintf("%d jobs, %d slices, %d submit→execution flows", st.Jobs, st.Slices, st.Flows)
	if st.Unnested > 0 {
		s += fmt.Sprintf(", %d stage slices on lanes of their own (they overlap a sibling)", st.Unnested)
	}
	if set.OtherSpans > 0 || set.OrphanStages > 0 {
		s += fmt.Sprintf("; not drawn: %d spans that are not GPU jobs, %d stage spans without their job", set.OtherSpans, set.OrphanStages)
	}
	return s
}

// traceJSONOutput collects a replay's spans for --trace-json and writes the file at the end.
type traceJSONOutput struct {
	path string
	b    *timeline.Builder
}

func newTraceJSONOutput(path string) (*traceJSONOutput, error) {
	// Fail before the replay, not after it, when the file cannot be written.
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--trace-json: %w", err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("--trace-json: %w", err)
	}
	return &traceJSONOutput{path: path, b: timeline.NewBuilder()}, nil
}

// tee returns a Traces output that feeds t and then next (which may be nil).
func (t *traceJSONOutput) tee(next func(context.Context, ptrace.Traces) error) func(context.Context, ptrace.Traces) error {
	return func(ctx context.Context, td ptrace.Traces) error {
		t.b.Add(td)
		if next != nil {
			return next(ctx, td)
		}
		return nil
	}
}

// write writes the file; say prints what it holds on stdout.
func (t *traceJSONOutput) write(stdout io.Writer, say bool) error {
	set := t.b.Finish()
	st, err := writeTraceJSON(t.path, nil, set)
	if err != nil {
		return fmt.Errorf("--trace-json: %w", err)
	}
	if say {
		fmt.Fprintf(stdout, "\ntrace-event JSON: %s: %s\n", t.path, describeTraceJSON(st, set))
	}
	return nil
}
