// Command ghostdriver runs the receiver's pipeline without a collector:
//
//	ghostdriver replay [--epoch N] [--speed X] [--output FILE] [--metrics-output FILE] [--no-stage-spans] CAPTURE
//	ghostdriver live   [--duration D] [--output FILE] [--clock-out FILE] [--drm-major N]... [--context-tiers LIST] [--obi-map-path P] [--no-tenant] [--classic-tracepoints]
//	ghostdriver cuda   [--duration D] [--output FILE] [--library PATH]... [-- COMMAND [ARGS...]]
//	ghostdriver doctor [--json] [--classic-tracepoints]
//	ghostdriver spans  [--limit N] [--completed] FILE
//
// replay is the offline analysis tool for people who already have trace-cmd captures;
// live runs the eBPF source where no collector is wanted (the virtual GPU rig's guest);
// cuda traces CUDA applications with uprobes (NVIDIA GPUs have no DRM scheduler events);
// doctor prints what the live source can attach on this host; spans prints job spans
// from an OTLP/JSON file as trees.
package main

import (
	"fmt"
	"io"
	"os"
)

const usage = `usage:
  ghostdriver replay [--epoch N|RFC3339] [--speed X] [--output FILE] [--metrics-output FILE] [--no-stage-spans] [--quiet] CAPTURE
  ghostdriver live   [--duration D] [--output FILE] [--metrics-output FILE] [--clock-out FILE] [--drm-major N]...
                     [--context-tiers otep4947,obi,traceparent] [--obi-map-path PATH] [--no-tenant] [--proc-root DIR] [--sys-root DIR]
                     [--classic-tracepoints] [--no-stage-spans]
  ghostdriver cuda   [--duration D] [--output FILE] [--metrics-output FILE] [--library PATH]... [--rescan-interval D]
                     [--no-entry-points] [--no-xid] [--no-tenant] [--ready-file FILE] [--quiet] [-- COMMAND [ARGS...]]
  ghostdriver doctor [--json] [--classic-tracepoints]
  ghostdriver spans  [--limit N] [--completed] FILE
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "replay":
		return cmdReplay(args[1:], stdout, stderr)
	case "live":
		return cmdLive(args[1:], stdout, stderr)
	case "cuda":
		return cmdCUDA(args[1:], stdout, stderr)
	case "doctor":
		return cmdDoctor(args[1:], stdout, stderr)
	case "spans":
		return cmdSpans(args[1:], stdout, stderr)
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "ghostdriver: unknown command %q\n%s", args[0], usage)
	return 2
}
