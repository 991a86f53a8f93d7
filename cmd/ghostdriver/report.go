// `ghostdriver report`: one self-contained HTML file (no network: script, style and data
// inline) with the per-ring timeline and the busy/stage/tenant tables, from an OTLP span
// file or straight from a capture.

package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/ghostdriver/ghostdriver/internal/report"
	"github.com/ghostdriver/ghostdriver/internal/timeline"
)

func cmdReport(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	output := fs.String("output", "report.html", "write the HTML report to this file")
	smiPath := fs.String("nvidia-smi", "", "nvidia-smi utilization samples to set beside the GPU timeline's coverage: the output of\n"+
		"nvidia-smi --query-gpu=timestamp,index,utilization.gpu --format=csv,noheader,nounits -lms 100")
	smiTZ := fs.String("nvidia-smi-tz", "Local", "the time zone nvidia-smi printed its timestamps in (an IANA name, Local or UTC)")
	if code, done := parseArgs(fs, reorderFlags(fs, args), stdout, stderr); done {
		return code
	}
	if fs.NArg() != 1 {
		return usageError(stderr, fs, "exactly one SPANS file or CAPTURE is needed, got %d arguments", fs.NArg())
	}
	in := fs.Arg(0)
	format, err := timeline.Sniff(in)
	if err != nil {
		return fail(stderr, "report", err)
	}
	set, err := loadJobs(in, true)
	if err != nil {
		return fail(stderr, "report", err)
	}
	source := "spans from " + filepath.Base(in)
	if format == timeline.NotOTLP {
		source = "replayed from the capture " + filepath.Base(in) + " (capture clock)"
	}
	opt := report.Options{Title: filepath.Base(in), Source: source}
	if *smiPath != "" {
		loc, err := time.LoadLocation(*smiTZ)
		if err != nil {
			return usageError(stderr, fs, "--nvidia-smi-tz %q: %v", *smiTZ, err)
		}
		sf, err := os.Open(*smiPath)
		if err != nil {
			return fail(stderr, "report", err)
		}
		samples, skipped, err := report.ReadSMI(sf, loc)
		sf.Close()
		if err != nil {
			return fail(stderr, "report", fmt.Errorf("%s: %w", *smiPath, err))
		}
		if len(samples) == 0 {
			return fail(stderr, "report", fmt.Errorf("%s: no utilization.gpu sample in it (%d lines skipped)", *smiPath, skipped))
		}
		opt.SMI, opt.SMIFrom = samples, fmt.Sprintf("%d samples from %s", len(samples), filepath.Base(*smiPath))
	}
	f, err := os.Create(*output)
	if err != nil {
		return fail(stderr, "report", err)
	}
	sum, err := report.Write(f, set, opt)
	if err = errors.Join(err, f.Close()); err != nil {
		return fail(stderr, "report", err)
	}
	fmt.Fprintf(stdout, "%s: %d jobs on %d rings; open it in a browser (it fetches nothing)\n", *output, sum.Jobs, len(sum.Rings))
	for _, r := range sum.Rings {
		if r.Window > 0 {
			fmt.Fprintf(stdout, "  %-24s reported busy %5.1f %%  executing %5.1f %%  of %s\n", r.Ring,
				100*float64(r.Busy)/float64(r.Window), 100*float64(r.Shares[timeline.CategoryExecuting])/float64(r.Window),
				fmtWindow(r.Window))
		}
	}
	for _, g := range sum.GPU {
		sm, smi := "–", "–"
		if g.SMKnown {
			sm = fmt.Sprintf("%.1f %%", 100*g.SMCoverage())
		}
		if g.SMISamples > 0 {
			smi = fmt.Sprintf("%.1f %% (%d samples)", 100*g.SMI, g.SMISamples)
		}
		fmt.Fprintf(stdout, "  GPU %-3s %-28s kernel coverage %5.1f %%  SM-weighted %s  nvidia-smi %s  of %s, %d kernels\n",
			g.Devices, g.Process, 100*g.Coverage(), sm, smi, fmtWindow(g.Window), g.Kernels)
	}
	return 0
}

func fmtWindow(ns int64) string { return time.Duration(ns).Round(time.Microsecond).String() }
