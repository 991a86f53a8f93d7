// `ghostdriver live`: the eBPF source without a collector, through the same graph as the
// receiver (internal/graph).

package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/ghostdriver/ghostdriver/internal/enrich"
	"github.com/ghostdriver/ghostdriver/internal/graph"
	"github.com/ghostdriver/ghostdriver/internal/probe"
)

// uintList is a repeatable numeric flag (--drm-major 226 --drm-major 1).
type uintList []uint32

func (u *uintList) String() string { return fmt.Sprint(*u) }
func (u *uintList) Set(s string) error {
	v, err := strconv.ParseUint(s, 0, 32)
	if err != nil {
		return err
	}
	*u = append(*u, uint32(v))
	return nil
}

// stringList is a repeatable string flag.
type stringList []string

func (l *stringList) String() string     { return fmt.Sprint(*l) }
func (l *stringList) Set(s string) error { *l = append(*l, s); return nil }

func cmdLive(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("live", flag.ContinueOnError)
	fs.SetOutput(stderr)
	duration := fs.Duration("duration", 0, "stop after this long (0: until interrupted)")
	output := fs.String("output", "", "write spans as OTLP/JSON lines to this file")
	metricsOut := fs.String("metrics-output", "", "write metrics as OTLP/JSON lines to this file")
	clockOut := fs.String("clock-out", "", "write the CLOCK_MONOTONIC→wall offset used (ns) to this file")
	quiet := fs.Bool("quiet", false, "do not print the summary table")
	readyFile := fs.String("ready-file", "", "create this file once the programs are attached (for scripts that start a workload)")
	verbose := fs.Bool("verbose", false, "log the loader's details (verifier logs at debug level)")
	var majors uintList
	fs.Var(&majors, "drm-major", "device major whose ioctls are followed (repeatable; default 226)")
	var boFuncs, runJobFuncs stringList
	fs.Var(&boFuncs, "bo-func", "another kernel function bounding buffer-object validation (repeatable; added to the defaults)")
	fs.Var(&runJobFuncs, "run-job-func", "another driver run_job callback (repeatable; added to the defaults)")
	defaults := defaultSpec()
	tiers := fs.String("context-tiers", strings.Join(defaults.Context.Tiers, ","), "application trace-context tiers in lookup order (otep4947,obi,traceparent; empty: none)")
	obiMap := fs.String("obi-map-path", defaults.Context.OBIMapPath, "where OBI pins its traces_ctx_v1 map")
	noTenant := fs.Bool("no-tenant", false, "do not read /proc and /sys for tenant attribution (no traceparent/OTEP 4947 context then)")
	procRoot := fs.String("proc-root", defaults.ProcRoot, "the host's procfs")
	sysRoot := fs.String("sys-root", defaults.SysRoot, "the host's sysfs")
	classic := fs.Bool("classic-tracepoints", false, "hook the gpu_scheduler and driver events with classic tracepoints decoded from their tracefs formats, even where tp_btf/raw_tp would attach")
	records := fs.String("records", "", "how the scheduler and dma_fence hooks report: events (one record per hook run) or jobs (one record per completed job, aggregated in the kernel; not with --classic-tracepoints or --fence-filter); default "+probe.DefaultRecords)
	noMount := fs.Bool("no-tracefs-mount", false, "do not mount tracefs where it is not mounted: the submit ioctls then fall back to raw_tp sys_enter/sys_exit, which run for every syscall of the host")
	sendJobless := fs.Bool("send-jobless-ioctls", false, "send the records of every followed ioctl; by default an ioctl of a known process with nothing of its thread recorded inside (no job queued) is counted in the kernel (ghostdriver.source.kernel_drops{reason=ioctl_without_job}) instead")
	fenceFilter := fs.Bool("fence-filter", false, "send dma_fence events only for fence contexts seen in GPU jobs (the others are counted in ghostdriver.source.kernel_drops)")
	pf := addPipelineFlags(fs)
	if code, done := parseArgs(fs, args, stdout, stderr); done {
		return code
	}
	if fs.NArg() != 0 {
		return usageError(stderr, fs, "takes no arguments, got %q", fs.Args())
	}
	log := zap.NewNop()
	if *verbose {
		log, _ = zap.NewDevelopment()
	}
	tierList := []string{}
	if *tiers != "" {
		tierList = strings.Split(*tiers, ",")
	}
	if err := enrich.ValidateTiers(tierList); err != nil {
		return usageError(stderr, fs, "--context-tiers: %v", err)
	}
	if _, err := pf.samplingConfig(); err != nil {
		return usageError(stderr, fs, "%v", err)
	}
	d := probe.DefaultConfig()
	spec := graph.Spec{
		Live: &graph.LiveSpec{
			BOValidationFuncs:  append(d.BOValidationFuncs, boFuncs...),
			RunJobFuncs:        append(d.RunJobFuncs, runJobFuncs...),
			ClassicTracepoints: *classic,
			NoTracefsMount:     *noMount,
			FenceFilter:        *fenceFilter,
			SendJoblessIoctls:  *sendJobless,
			Records:            *records,
		},
		Enrich:   !*noTenant,
		ProcRoot: *procRoot,
		SysRoot:  *sysRoot,
		Context:  graph.ContextSpec{Tiers: tierList, OBIMapPath: *obiMap},
		Pipeline: pf.config(),
	}
	if len(majors) > 0 {
		spec.Live.DRMMajors = majors
	}
	g, err := graph.Open(spec, log)
	for _, rep := range g.Reports {
		fmt.Fprint(stderr, rep.Text())
	}
	if err != nil {
		fmt.Fprintf(stderr, "ghostdriver live: %v\n", err)
		return 1
	}
	defer g.Close()
	if *clockOut != "" {
		if err := os.WriteFile(*clockOut, []byte(fmt.Sprintf("mono_to_wall_offset_ns=%d\n", g.Live().ClockOffset())), 0o644); err != nil {
			fmt.Fprintf(stderr, "ghostdriver live: --clock-out: %v\n", err)
			return 1
		}
	}
	if *readyFile != "" {
		if err := os.WriteFile(*readyFile, []byte(g.Reports[0].Summary()+"\n"), 0o644); err != nil {
			fmt.Fprintf(stderr, "ghostdriver live: --ready-file: %v\n", err)
			return 1
		}
	}
	ctx, stop := runContext(*duration)
	defer stop()
	start := time.Now()
	code := runPipeline(ctx, g, pf, *output, *metricsOut, !*quiet, stdout, stderr)
	fmt.Fprintf(stderr, "ghostdriver live: ran %v\n", time.Since(start).Round(time.Millisecond))
	return code
}
