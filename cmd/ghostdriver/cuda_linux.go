// `ghostdriver cuda`: the CUDA source (uprobes on libcuda/libcudart, the NVIDIA Xid
// tracepoint) without a collector, through the same graph as the receiver
// (internal/graph): submissions as OTLP/JSON span lines, and a summary.
// With a COMMAND, it traces while the command runs and stops when it exits.

package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"

	"github.com/ghostdriver/ghostdriver/internal/cuda"
	"github.com/ghostdriver/ghostdriver/internal/cupti"
	"github.com/ghostdriver/ghostdriver/internal/emit"
	"github.com/ghostdriver/ghostdriver/internal/emit/cudaspans"
	"github.com/ghostdriver/ghostdriver/internal/graph"
	"github.com/ghostdriver/ghostdriver/internal/metadata"
	"github.com/ghostdriver/ghostdriver/internal/pipeline"
	"github.com/ghostdriver/ghostdriver/internal/summary"
)

func cmdCUDA(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("cuda", flag.ContinueOnError)
	defaults := defaultSpec()
	fs.SetOutput(stderr)
	duration := fs.Duration("duration", 0, "stop after this long (0: until interrupted, or until COMMAND exits)")
	output := fs.String("output", "", "write spans as OTLP/JSON lines to this file")
	metricsOut := fs.String("metrics-output", "", "write metrics as OTLP/JSON lines to this file")
	rescan := fs.Duration("rescan-interval", defaults.CUDA.RescanInterval, "scan /proc/*/maps for new CUDA libraries this often (0: only at start)")
	noEntryPoints := fs.Bool("no-entry-points", false, "do not hook driver entry points learnt from cuGetProcAddress")
	noXid := fs.Bool("no-xid", false, "do not attach the nvidia:nvidia_dev_xid tracepoint")
	readyFile := fs.String("ready-file", "", "create this file once the uprobes are attached")
	quiet := fs.Bool("quiet", false, "do not print the summary")
	verbose := fs.Bool("verbose", false, "log the loader's details")
	noTenant := fs.Bool("no-tenant", false, "do not read /proc for the processes (resource: service.name, container, pod; thread-context recipes; TRACEPARENT)")
	obiMap := fs.String("obi-map", defaults.Context.OBIMapPath, "where OBI pins traces_ctx_v1 (the OBI context tier)")
	flushEvery := fs.Duration("flush-interval", defaults.Pipeline.FlushInterval, "how often spans are written")
	collectEvery := fs.Duration("collection-interval", defaults.Pipeline.CollectionInterval, "how often metrics are written")
	ringBytes := fs.Int("ring-buffer-size", defaults.CUDA.RingBufferBytes, "bytes of the CUDA source's ring buffer (a power of two, at least a page)")
	layers := fs.String("layers", defaults.CUDA.Layers, "hook the API functions of: both (runtime and driver), driver or runtime")
	atEntry := fs.Bool("launches-at-entry", defaults.CUDA.LaunchesAtEntry, "record launches at entry with no return probe (no duration, no result code)")
	multi := fs.Bool("uprobe-multi", defaults.CUDA.UprobeMulti, "attach with uprobe_multi links where the kernel has them (6.6+)")
	wakeups := fs.Bool("sync-wakeups", defaults.CUDA.SyncWakeups, "follow wake-ups and nvidia interrupts: split a blocking sync's wait (interrupt, wake-up, return)")
	timeline := fs.String("timeline", "off", "the GPU's own timeline from processes that loaded the injection library: off, on or duty")
	onFor := fs.Duration("timeline-on-for", 2*time.Second, "with --timeline duty: how long it is on in each period")
	every := fs.Duration("timeline-every", 60*time.Second, "with --timeline duty: the period")
	inject := fs.String("inject", "", "with COMMAND: load this injection library (libghostdriver_cupti.so) into it through CUDA_INJECTION64_PATH")
	var libs stringList
	fs.Var(&libs, "library", "a CUDA library file to hook at start (repeatable; globs allowed)")
	var sf samplerFlags // live: on unless --no-sample, as the receiver's live.cuda
	sf.add(fs, false)
	if code, done := parseArgs(fs, args, stdout, stderr); done {
		return code
	}
	command := fs.Args()
	smp, err := sf.samplingConfig()
	if err != nil {
		fmt.Fprintf(stderr, "ghostdriver cuda: %v\n", err)
		return 2
	}
	policy := cupti.Policy{Mode: cupti.Mode(*timeline), OnFor: *onFor, Every: *every}
	if err := policy.Validate(); err != nil {
		fmt.Fprintf(stderr, "ghostdriver cuda: --timeline: %v\n", err)
		return 2
	}
	if *inject != "" {
		if len(command) == 0 {
			fmt.Fprintln(stderr, "ghostdriver cuda: --inject needs a COMMAND to load the library into")
			return 2
		}
		if _, err := os.Stat(*inject); err != nil {
			fmt.Fprintf(stderr, "ghostdriver cuda: --inject: %v\n", err)
			return 2
		}
	}
	log := zap.NewNop()
	if *verbose {
		log, _ = zap.NewDevelopment()
	}
	g, err := graph.Open(graph.Spec{
		CUDA: &graph.CUDASpec{Libraries: libs, RescanInterval: *rescan, IgnoreEntryPoints: *noEntryPoints, NoXid: *noXid, RingBufferBytes: *ringBytes,
			Layers: *layers, LaunchesAtEntry: *atEntry, UprobeMulti: *multi, SyncWakeups: *wakeups, Timeline: policy},
		// The receiver's enrich stage: processes read at their first CUDA call, their
		// OTEP 4947 recipes pushed into the source's kernel table, TRACEPARENT as fallback.
		Enrich:  !*noTenant,
		Context: graph.ContextSpec{OBIMapPath: *obiMap},
		Pipeline: pipeline.Config{
			Sampling:           smp,
			Metrics:            metadata.DefaultMetricsConfig(),
			FlushInterval:      *flushEvery,
			CollectionInterval: *collectEvery,
		},
	}, log)
	if err != nil {
		fmt.Fprintf(stderr, "ghostdriver cuda: %v\n", err)
		return 1
	}
	defer g.Close()
	for _, rep := range g.Reports {
		fmt.Fprint(stderr, rep.Text())
	}
	if *readyFile != "" {
		if err := os.WriteFile(*readyFile, []byte(g.Reports[0].Summary()+"\n"), 0o644); err != nil {
			fmt.Fprintf(stderr, "ghostdriver cuda: --ready-file: %v\n", err)
			return 1
		}
	}

	outs, closeOuts, err := fileOutputs(*output, *metricsOut)
	if err != nil {
		fmt.Fprintf(stderr, "ghostdriver cuda: %v\n", err)
		return 1
	}
	// Spans counted at the output, whichever form it takes (encoded batches, or pdata):
	// one exporter goroutine, no race.
	var spansWritten int
	if write := outs.Traces; write != nil {
		outs.Traces = func(ctx context.Context, td ptrace.Traces) error {
			spansWritten += td.SpanCount()
			return write(ctx, td)
		}
	}
	if write := outs.Encoded; write != nil {
		outs.Encoded = func(ctx context.Context, b *emit.TraceBatch) error {
			spansWritten += b.SpanCount()
			return write(ctx, b)
		}
	}
	var sum cudaSummary
	g.OnSubmission(sum.add)
	runner := g.Pipeline(outs, nil)

	ctx, stop := runContext(*duration)
	defer stop()
	ctx, cancelRun := context.WithCancel(ctx)
	defer cancelRun()
	start := time.Now()
	runErr := make(chan error, 1)
	go func() { runErr <- runner.Run(ctx) }()

	code := 0
	if len(command) > 0 {
		cmd := exec.Command(command[0], command[1:]...)
		cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, stdout, stderr
		if *inject != "" {
			cmd.Env = append(os.Environ(), "CUDA_INJECTION64_PATH="+*inject)
		}
		if err := cmd.Start(); err != nil {
			fmt.Fprintf(stderr, "ghostdriver cuda: %v\n", err)
			code = 1
		} else {
			waited := make(chan error, 1)
			go func() { waited <- cmd.Wait() }()
			select {
			case err := <-waited:
				if err != nil {
					fmt.Fprintf(stderr, "ghostdriver cuda: %s: %v\n", command[0], err)
					code = 1
				}
				// The child's last records are in the ring buffer (it has exited, so it
				// committed them all): cancelRun below makes the source read the ring to
				// its end before Run returns (cuda.Source.Run), no wait needed here.
			case <-ctx.Done():
				_ = cmd.Process.Signal(syscall.SIGTERM)
				<-waited
			}
		}
		cancelRun()
	}
	if err := <-runErr; err != nil {
		fmt.Fprintf(stderr, "ghostdriver cuda: %v\n", err)
		code = 1
	}
	if err := closeOuts(); err != nil {
		fmt.Fprintf(stderr, "ghostdriver cuda: %v\n", err)
		code = 1
	}
	if !*quiet {
		sum.print(stdout, runner.Stats(), g.CUDASource().Stats(), time.Since(start))
		if enr := g.CUDAEnricher(); enr != nil {
			es := enr.Stats()
			fmt.Fprintf(stdout, "processes read: %d (slowest %v); %d lookups answered before their process was read\n",
				es.Loads, es.SlowestLoad.Round(time.Microsecond), es.WaitedOut)
		}
		if tl := g.Timeline(); tl != nil {
			printTimeline(stdout, tl.Stats(), runner.Stats())
		}
		if st := runner.Stats(); st.Sampling != nil {
			summary.WriteSampling(stdout, *st.Sampling)
		}
		if *output != "" {
			fmt.Fprintf(stdout, "spans written: %d to %s\n", spansWritten, *output)
		}
	}
	return code
}

// cudaSummary is what the summary prints, gathered on the source goroutine.
type cudaSummary struct {
	submissions, synced, launches int
	waits                         []int64 // sync wait per synchronized submission, ns
	scopes                        map[string]int
	xidCodes                      map[uint32]int // Xid events attached to submissions, by code
	tiers                         [4]int         // submissions by application-context tier
}

func (c *cudaSummary) add(s *cuda.Submission) {
	if c.scopes == nil {
		c.scopes, c.xidCodes = map[string]int{}, map[uint32]int{}
	}
	c.submissions++
	c.launches += s.Launches
	if int(s.CtxTier) < len(c.tiers) {
		c.tiers[s.CtxTier]++
	}
	c.scopes[cudaspans.SyncScope(s)]++
	if s.Sync != nil {
		c.synced++
		c.waits = append(c.waits, s.Sync.End-s.Sync.Start)
	}
	for _, x := range s.Xids {
		c.xidCodes[x.Code]++
	}
}

func (c *cudaSummary) print(w io.Writer, ps pipeline.Stats, src cuda.Stats, ran time.Duration) {
	var st pipeline.CUDAStats
	if ps.CUDA != nil {
		st = *ps.CUDA
	}
	fmt.Fprintf(w, "ran %v\n", ran.Round(time.Millisecond))
	fmt.Fprintf(w, "submissions: %d (%d synchronized, %d unsynchronized)", c.submissions, c.synced, c.submissions-c.synced)
	if len(c.scopes) > 0 {
		var parts []string
		for _, k := range []string{metadata.CUDASyncScopeStream, metadata.CUDASyncScopeEvent, metadata.CUDASyncScopeContext, metadata.CUDASyncScopeNone} {
			if n := c.scopes[k]; n > 0 {
				parts = append(parts, fmt.Sprintf("%s %d", k, n))
			}
		}
		fmt.Fprintf(w, " by scope: %s", strings.Join(parts, ", "))
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "launches: %d in submissions; top-level launch calls %d, nested %d\n",
		c.launches, at(st.TopLevel, cuda.ClassLaunch), at(st.Nested, cuda.ClassLaunch))
	fmt.Fprintf(w, "syncs: %d (nested driver syncs %d)", at(st.TopLevel, cuda.ClassSync), at(st.Nested, cuda.ClassSync))
	if len(c.waits) > 0 {
		w2 := slices.Clone(c.waits)
		slices.Sort(w2)
		fmt.Fprintf(w, "; wait p50 %v p99 %v max %v", cudaDur(quantile(w2, 0.5)), cudaDur(quantile(w2, 0.99)), cudaDur(w2[len(w2)-1]))
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "calls: memcpy %d, memset %d, event_record %d, alloc %d, free %d\n",
		at(st.TopLevel, cuda.ClassMemcpy), at(st.TopLevel, cuda.ClassMemset), at(st.TopLevel, cuda.ClassEventRecord),
		at(st.TopLevel, cuda.ClassAlloc), at(st.TopLevel, cuda.ClassFree))
	fmt.Fprintf(w, "Xids: %d", st.Xids)
	if len(c.xidCodes) > 0 {
		var parts []string
		for code, n := range c.xidCodes {
			parts = append(parts, fmt.Sprintf("code %d on %d submissions", code, n))
		}
		slices.Sort(parts)
		fmt.Fprintf(w, " (%s)", strings.Join(parts, ", "))
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "application context: otep4947 %d, obi %d, traceparent %d, none %d submissions; %d calls carried an in-kernel context, %d could not read it (thread memory unmapped at that instant); %d recipes pushed\n",
		c.tiers[1], c.tiers[2], c.tiers[3], c.tiers[0], src.WithContext, src.ContextUnreadable, src.Recipes)
	fmt.Fprintf(w, "source: %d calls, %d libraries, %d entry-point hooks (%d refused, %d dropped: hook queue full), %d records lost, %d malformed, %d returns missed, %d returns without a frame, %d maps reads cut at their bound\n",
		src.Calls, src.Libraries, src.EntryPointHooks, src.EntryPointsRefused, src.EntryPointsDropped, src.Lost, src.Malformed, src.StaleFrames, src.ReturnsWithoutFrame, src.MapsTruncated)
	if st.DroppedSubmissions > 0 || ps.ExportErrors > 0 {
		fmt.Fprintf(w, "spans dropped (buffer full): %d, export errors: %d\n", st.DroppedSubmissions, ps.ExportErrors)
	}
}

func at(v []uint64, c cuda.Class) uint64 {
	if int(c) < len(v) {
		return v[c]
	}
	return 0
}

// quantile of sorted values (nearest rank).
func quantile(sorted []int64, q float64) int64 {
	i := int(q*float64(len(sorted))+0.5) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

func cudaDur(ns int64) time.Duration { return time.Duration(ns).Round(time.Microsecond / 10) }

// printTimeline is the GPU timeline's part of the summary: what the libraries did and
// dropped, what the decoder met, and how the records joined the submissions.
func printTimeline(w io.Writer, ts cupti.PollerStats, ps pipeline.Stats) {
	t := ts.Total
	fmt.Fprintf(w, "GPU timeline: %d channels seen; library: %d records written, %d dropped (ring full), %d dropped by CUPTI, %d refused (layout), %d buffer requests refused, %d API records of non-launch calls left out, %d enables, %d disables, %d back-offs\n",
		ts.Opened, t.Counters.RecordsWritten, t.Counters.DroppedRingFull, t.Counters.DroppedCUPTI, t.Counters.RefusedLayout,
		t.Counters.BuffersRefused, t.Counters.APIFiltered, t.Counters.Enables, t.Counters.Disables, t.Counters.Backoffs)
	fmt.Fprintf(w, "GPU timeline: decoded %d kernels, %d API records, %d batches; %d corrupt, %d without a clock\n",
		t.Decoder.Kernels, t.Decoder.APIs, t.Decoder.Batches, t.Decoder.Corrupt+t.Ring.Corrupt, t.Decoder.NoClock)
	for _, c := range ts.Channels {
		fmt.Fprintf(w, "GPU timeline: pid %d: %s (%s)\n", c.PID, c.State, c.StateMsg)
	}
	if ps.CUDA != nil && ps.CUDA.GPU != nil {
		f := ps.CUDA.GPU
		fmt.Fprintf(w, "GPU timeline: submissions fused %d (%d incomplete), not covered %d; launches matched %d, unmatched %d; kernels attributed %d, unattributed %d; clock rule violations %d\n",
			f.Fused, f.Incomplete, f.Uncovered, f.LaunchesMatched, f.LaunchesUnmatched, f.KernelsAttributed, f.KernelsUnattributed, f.ClockRuleViolations)
	}
}
