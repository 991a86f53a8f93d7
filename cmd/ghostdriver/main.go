// Command ghostdriver runs the receiver's pipeline without a collector:
//
//	ghostdriver replay  CAPTURE          a ftrace / trace-cmd capture in, spans and a summary out
//	ghostdriver live                     the eBPF source (the virtual GPU rig's guest uses it)
//	ghostdriver record                   write a capture that replay reads, with tracefs alone
//	ghostdriver cuda    [-- COMMAND]     CUDA applications through uprobes (NVIDIA has no DRM scheduler)
//	ghostdriver doctor                   what the live source can attach on this host, and a verdict
//	ghostdriver spans   FILE             job spans of an OTLP/JSON file as trees
//	ghostdriver export  SPANS|CAPTURE    jobs as trace-event JSON (Perfetto UI, chrome://tracing)
//	ghostdriver report  SPANS|CAPTURE    one self-contained HTML report: timeline, busy split, stages, tenants
//	ghostdriver version                  the version (also --version)
//
// The synopsis of each command (synopses below) is what `ghostdriver --help` prints and
// what README.md shows; a test keeps both equal to the flags each command defines.
package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/ghostdriver/ghostdriver/internal/version"
)

// synopses are the usage lines, one entry per command, in --help order. Continuation
// lines start with spaces.
var synopses = []struct{ cmd, text string }{
	{"replay", `ghostdriver replay [--epoch N|RFC3339] [--speed X] [--output FILE] [--metrics-output FILE] [--output-format json|proto] [--quiet]
                   [--job-timeout D] [--max-pending-jobs N] [--reorder-window D] [--flush-interval D]
                   [--collection-interval D] [--no-stage-spans] [--trace-json FILE]
                   [--sample] [--no-sample] [--sample-budget N] [--sample-probability P] [--sample-no-parent]
                   [--keep-slowest-window D] [--keep-latency-above D] [--keep-dependency-wait-above D] CAPTURE`},
	{"live", `ghostdriver live   [--duration D] [--output FILE] [--metrics-output FILE] [--clock-out FILE] [--ready-file FILE]
                   [--quiet] [--verbose] [--drm-major N]... [--bo-func F]... [--run-job-func F]...
                   [--context-tiers otep4947,obi,traceparent] [--obi-map-path PATH] [--no-tenant] [--proc-root DIR]
                   [--sys-root DIR] [--classic-tracepoints] [--records events|jobs] [--no-tracefs-mount] [--fence-filter] [--send-jobless-ioctls]
                   [--job-timeout D] [--max-pending-jobs N] [--reorder-window D] [--flush-interval D]
                   [--collection-interval D] [--no-stage-spans]
                   [--sample] [--no-sample] [--sample-budget N] [--sample-probability P] [--sample-no-parent]
                   [--keep-slowest-window D] [--keep-latency-above D] [--keep-dependency-wait-above D]`},
	{"record", `ghostdriver record [--duration D] [--output FILE] [--buffer-kb N] [--list] [--ready-file FILE] [--quiet]`},
	{"cuda", `ghostdriver cuda   [--duration D] [--output FILE] [--metrics-output FILE] [--library PATH]... [--rescan-interval D]
                   [--no-entry-points] [--no-xid] [--no-tenant] [--obi-map PATH] [--ready-file FILE] [--quiet]
                   [--verbose] [--flush-interval D] [--collection-interval D] [--ring-buffer-size N]
                   [--layers both|driver|runtime] [--launches-at-entry] [--uprobe-multi] [--sync-wakeups]
                   [--timeline off|on|duty] [--timeline-on-for D] [--timeline-every D] [--inject PATH]
                   [--sample] [--no-sample] [--sample-budget N] [--sample-probability P] [--sample-no-parent]
                   [--keep-slowest-window D] [--keep-latency-above D] [-- COMMAND [ARGS...]]`},
	{"doctor", `ghostdriver doctor [--json] [--classic-tracepoints] [--no-tracefs-mount]`},
	{"spans", `ghostdriver spans  [--limit N] [--completed] FILE`},
	{"export", `ghostdriver export [--format trace-json] [--output FILE] SPANS|CAPTURE`},
	{"report", `ghostdriver report [--output FILE] [--nvidia-smi CSV [--nvidia-smi-tz ZONE]] SPANS|CAPTURE`},
	{"version", `ghostdriver version`},
}

// usage is the text of `ghostdriver --help`.
func usage() string {
	var b strings.Builder
	b.WriteString("usage:\n")
	for _, s := range synopses {
		b.WriteString("  " + strings.ReplaceAll(s.text, "\n", "\n  ") + "\n")
	}
	b.WriteString("  ghostdriver --version\n\n`ghostdriver COMMAND --help` lists a command's flags with their defaults.\n")
	return b.String()
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is the whole CLI. Exit codes: 0 done (and every --help), 1 a runtime failure,
// 2 a usage error (unknown command or flag, bad flag value, missing argument).
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage())
		return 2
	}
	switch args[0] {
	case "replay":
		return cmdReplay(args[1:], stdout, stderr)
	case "live":
		return cmdLive(args[1:], stdout, stderr)
	case "record":
		return cmdRecord(args[1:], stdout, stderr)
	case "cuda":
		return cmdCUDA(args[1:], stdout, stderr)
	case "doctor":
		return cmdDoctor(args[1:], stdout, stderr)
	case "spans":
		return cmdSpans(args[1:], stdout, stderr)
	case "export":
		return cmdExport(args[1:], stdout, stderr)
	case "report":
		return cmdReport(args[1:], stdout, stderr)
	case "version":
		return cmdVersion(args[1:], stdout, stderr)
	case "--version", "-version", "-v":
		fmt.Fprintln(stdout, version.Full("ghostdriver"))
		return 0
	case "-h", "--help", "-help", "help":
		fmt.Fprint(stdout, usage())
		return 0
	}
	fmt.Fprintf(stderr, "ghostdriver: unknown command %q\n%s", args[0], usage())
	return 2
}
