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
	set, err := loadJobs(in)
	if err != nil {
		return fail(stderr, "report", err)
	}
	source := "spans from " + filepath.Base(in)
	if format == timeline.NotOTLP {
		source = "replayed from the capture " + filepath.Base(in) + " (capture clock)"
	}
	f, err := os.Create(*output)
	if err != nil {
		return fail(stderr, "report", err)
	}
	sum, err := report.Write(f, set, report.Options{Title: filepath.Base(in), Source: source})
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
	return 0
}

func fmtWindow(ns int64) string { return time.Duration(ns).Round(time.Microsecond).String() }
