// `ghostdriver doctor`: which hook each stage would use on this host, or why none, and
// a one-line verdict: can this host follow GPU jobs, and what is missing.

package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"

	"go.uber.org/zap"

	"github.com/ghostdriver/ghostdriver/internal/capability"
	"github.com/ghostdriver/ghostdriver/internal/probe"
	"github.com/ghostdriver/ghostdriver/internal/sample"
)

// doctorJSON is `doctor --json`: the verdict and the hook table.
type doctorJSON struct {
	Verdict probe.Verdict      `json:"verdict"`
	Hooks   []capability.Entry `json:"hooks"`
}

func cmdDoctor(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("doctor", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, `print {"verdict": {...}, "hooks": [{"stage","hook","status","reason"}...]}`)
	classic := fs.Bool("classic-tracepoints", false, "report what `live --classic-tracepoints` would attach")
	noMount := fs.Bool("no-tracefs-mount", false, "do not mount tracefs where it is not mounted (what `live --no-tracefs-mount` would attach)")
	if code, done := parseArgs(fs, args, stdout, stderr); done {
		return code
	}
	if fs.NArg() != 0 {
		return usageError(stderr, fs, "takes no arguments, got %q", fs.Args())
	}
	cfg := probe.DefaultConfig()
	cfg.ClassicTracepoints = *classic
	cfg.NoTracefsMount = *noMount
	rep := probe.Doctor(cfg, zap.NewNop())
	v := probe.Assess(rep, probe.ProbeHost("/dev", "/sys"))
	if *asJSON {
		hooks := rep.Entries
		if hooks == nil {
			hooks = []capability.Entry{}
		}
		b, err := json.MarshalIndent(doctorJSON{Verdict: v, Hooks: hooks}, "", "  ")
		if err != nil {
			return fail(stderr, "doctor", err)
		}
		fmt.Fprintln(stdout, string(b))
		return 0
	}
	fmt.Fprint(stdout, rep.String())
	fmt.Fprintln(stdout)
	if rep.Tracefs != "" {
		fmt.Fprintln(stdout, "tracefs: "+rep.Tracefs)
	}
	for _, f := range v.Follows {
		fmt.Fprintln(stdout, f)
	}
	fmt.Fprintln(stdout, "sampling (live default; every job in the metrics): "+sample.DefaultConfig().String())
	fmt.Fprintln(stdout, v.Line)
	return 0
}
