// `ghostdriver spans FILE`: print job spans from an OTLP/JSON lines file (this CLI's
// --output, or the collector file exporter's) as trees, one job with its stage children.

package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

func cmdSpans(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("spans", flag.ContinueOnError)
	fs.SetOutput(stderr)
	limit := fs.Int("limit", 5, "print at most this many jobs (0: all)")
	completedOnly := fs.Bool("completed", false, "only jobs whose status is not an error")
	if code, done := parseArgs(fs, reorderFlags(fs, args), stdout, stderr); done {
		return code
	}
	if fs.NArg() != 1 {
		return usageError(stderr, fs, "exactly one FILE is needed, got %d arguments", fs.NArg())
	}
	if *limit < 0 {
		return usageError(stderr, fs, "--limit %d: want 0 (all) or more", *limit)
	}
	f, err := os.Open(fs.Arg(0))
	if err != nil {
		fmt.Fprintf(stderr, "ghostdriver spans: %v\n", err)
		return 1
	}
	defer f.Close()

	type job struct {
		span ptrace.Span
		kids []ptrace.Span
	}
	var jobs []*job
	byID := map[pcommon.SpanID]*job{}
	var orphans []ptrace.Span
	var um ptrace.JSONUnmarshaler
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 256<<20)
	line := 0
	for sc.Scan() {
		line++
		td, err := um.UnmarshalTraces(sc.Bytes())
		if err != nil {
			fmt.Fprintf(stderr, "ghostdriver spans: line %d is not OTLP/JSON traces: %v\n", line, err)
			return 1
		}
		rs := td.ResourceSpans()
		for i := 0; i < rs.Len(); i++ {
			ss := rs.At(i).ScopeSpans()
			for j := 0; j < ss.Len(); j++ {
				sp := ss.At(j).Spans()
				for k := 0; k < sp.Len(); k++ {
					s := ptrace.NewSpan()
					sp.At(k).CopyTo(s)
					if s.Name() == "gpu.job" {
						jb := &job{span: s}
						jobs = append(jobs, jb)
						byID[s.SpanID()] = jb
					} else {
						orphans = append(orphans, s)
					}
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintf(stderr, "ghostdriver spans: %v\n", err)
		return 1
	}
	for _, s := range orphans {
		if jb, ok := byID[s.ParentSpanID()]; ok {
			jb.kids = append(jb.kids, s)
		}
	}
	printed := 0
	for _, jb := range jobs {
		if *completedOnly && jb.span.Status().Code() == ptrace.StatusCodeError {
			continue
		}
		if *limit > 0 && printed >= *limit {
			break
		}
		printed++
		printJob(stdout, jb.span, jb.kids)
	}
	fmt.Fprintf(stdout, "%d gpu.job spans in %s, %d printed\n", len(jobs), fs.Arg(0), printed)
	return 0
}

func printJob(w io.Writer, s ptrace.Span, kids []ptrace.Span) {
	a := s.Attributes()
	str := func(k string) string {
		if v, ok := a.Get(k); ok {
			return v.AsString()
		}
		return "?"
	}
	status := "ok"
	if s.Status().Code() == ptrace.StatusCodeError {
		status = "error: " + s.Status().Message()
	}
	parent := "root span"
	if !s.ParentSpanID().IsEmpty() {
		parent = "child of app span " + s.ParentSpanID().String()
	}
	fmt.Fprintf(w, "gpu.job  %s/%s  fence %s:%s  pid %s tid %s (%s)  %s  trace %s, %s  [%s]\n",
		str("ghostdriver.driver"), str("ghostdriver.ring"), str("ghostdriver.fence.context"), str("ghostdriver.fence.seqno"),
		str("process.pid"), str("thread.id"), str("thread.name"), dur(s), s.TraceID(), parent, status)
	sort.SliceStable(kids, func(i, j int) bool { return kids[i].StartTimestamp() < kids[j].StartTimestamp() })
	t0 := s.StartTimestamp()
	for i, k := range kids {
		branch := "├─"
		if i == len(kids)-1 {
			branch = "└─"
		}
		src, _ := k.Attributes().Get("ghostdriver.stage.source")
		rule, _ := k.Attributes().Get("ghostdriver.stage.rule")
		fmt.Fprintf(w, "  %s %-17s +%-10s %-10s %-9s %s\n", branch, k.Name(),
			time.Duration(k.StartTimestamp()-t0), dur(k), src.AsString(), rule.AsString())
	}
	for l := 0; l < s.Links().Len(); l++ {
		fmt.Fprintf(w, "  ↪ link to span %s (waited on its fence)\n", s.Links().At(l).SpanID())
	}
}

func dur(s ptrace.Span) string {
	return time.Duration(s.EndTimestamp() - s.StartTimestamp()).String()
}
