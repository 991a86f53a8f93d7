// Command gencapture writes a large ftrace text capture shaped like the real ones
// (package internal/testcapture): amdgpu 4.11 trace-cmd report text or 6.17+ tracefs text.
//
//	gencapture -style 6.17 -jobs 1000000 -rings 4 -procs 8 -o big.txt[.gz]
package main

import (
	"compress/gzip"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/ghostdriver/ghostdriver/internal/testcapture"
)

func main() {
	var o testcapture.Options
	flag.StringVar(&o.Style, "style", "6.17", "4.11 (amdgpu trace-cmd report) or 6.17 (tracefs, drm_sched_job_queue/run/done)")
	flag.IntVar(&o.Jobs, "jobs", 100000, "jobs")
	flag.IntVar(&o.Rings, "rings", 4, "rings (each runs its jobs serially)")
	flag.IntVar(&o.Procs, "procs", 8, "submitting processes")
	flag.Float64Var(&o.Rate, "rate", 0, "jobs per second of capture time (0: rings ≈ 80% busy)")
	flag.BoolVar(&o.Pending, "pending", false, "jobs are queued and never finish")
	flag.Uint64Var(&o.Seed, "seed", 1, "random seed (engine times, markers)")
	out := flag.String("o", "-", "output file (.gz: gzip); - for stdout")
	flag.Parse()
	if err := run(o, *out); err != nil {
		fmt.Fprintln(os.Stderr, "gencapture:", err)
		os.Exit(1)
	}
}

func run(o testcapture.Options, out string) error {
	var w io.Writer = os.Stdout
	if out != "-" {
		f, err := os.Create(out)
		if err != nil {
			return err
		}
		defer f.Close()
		w = f
		if strings.HasSuffix(out, ".gz") {
			zw := gzip.NewWriter(f)
			defer zw.Close()
			w = zw
		}
	}
	return testcapture.Write(w, o)
}
