//go:build linux

// Command cudatrace runs the CUDA source alone (no pipeline, no enrich stage, no OTLP)
// around one command and writes what it saw as JSON: the capability report, the source's
// counters, the tracer's own CPU and every submission. It is a measuring tool (the
// validation of VALIDATION.md, "NVIDIA H200", and the hook-cost rounds of BENCHMARKS.md);
// tracing a workload is `ghostdriver cuda`, which runs the same source in the collector's
// graph.
//
//	cudatrace [-lib PATH]... [-out FILE] -- COMMAND [ARGS...]
//
// The hook-cost levers (cuda.Config) are flags: -layers, -launches-at-entry,
// -uprobe-multi; -floor and -bpf-stats are for measuring them (BENCHMARKS.md).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/cilium/ebpf"
	"go.uber.org/zap"
	"golang.org/x/sys/unix"

	"github.com/ghostdriver/ghostdriver/internal/cuda"
)

type libs []string

func (l *libs) String() string     { return strings.Join(*l, ",") }
func (l *libs) Set(s string) error { *l = append(*l, s); return nil }

type opOut struct {
	API    string   `json:"api"`
	Start  int64    `json:"start"`
	End    int64    `json:"end"`
	TID    uint32   `json:"tid"`
	Stream uint64   `json:"stream,omitempty"`
	Bytes  uint64   `json:"bytes,omitempty"`
	Inner  []string `json:"inner,omitempty"`
}

type subOut struct {
	PID      uint32  `json:"pid"`
	Scope    string  `json:"scope"`
	Stream   uint64  `json:"stream"`
	Outcome  string  `json:"outcome"`
	Start    int64   `json:"start"`
	End      int64   `json:"end"`
	Launches int     `json:"launches"`
	NOps     int     `json:"n_ops"`
	Sync     *opOut  `json:"sync,omitempty"`
	Xids     int     `json:"xids,omitempty"`
	Ops      []opOut `json:"ops,omitempty"`
}

func main() {
	var (
		extra   libs
		out     = flag.String("out", "", "write the JSON here (default stdout)")
		noEP    = flag.Bool("no-entry-points", false, "do not follow cuGetProcAddress")
		withOps = flag.Bool("ops", false, "include every op of every submission")
		rescan  = flag.Duration("rescan", 500*time.Millisecond, "library rescan interval")
		debug   = flag.Bool("debug", false, "debug logging")
		layers  = flag.String("layers", "", "hook the functions of: both (default), driver or runtime")
		atEntry = flag.Bool("launches-at-entry", false, "record the innermost hooked layer's launches at entry, no return probe")
		multi   = flag.Bool("uprobe-multi", false, "attach with uprobe_multi links (kernel 6.6+)")
		floor   = flag.Bool("floor", false, "measuring only: launches hooked at entry run a program that counts and returns (no launch is recorded)")
		bpfStat = flag.Bool("bpf-stats", false, "turn on the kernel's BPF run-time statistics while the command runs and report the uprobe programs' runs and ns")
	)
	flag.Var(&extra, "lib", "a library file to hook at start (repeatable; globs allowed)")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: cudatrace [flags] -- COMMAND [ARGS...]")
		os.Exit(2)
	}
	log := zap.NewNop()
	if *debug {
		log, _ = zap.NewDevelopment()
	}
	t0 := time.Now()
	src, _, err := cuda.Open(cuda.Config{ExtraLibraries: extra, IgnoreEntryPoints: *noEP, RescanInterval: *rescan,
		Layers: *layers, LaunchesAtEntry: *atEntry, UprobeMulti: *multi, FloorLaunches: *floor}, log)
	if err != nil {
		fmt.Fprintln(os.Stderr, "cudatrace:", err)
		os.Exit(1)
	}
	openTime := time.Since(t0)
	var (
		mu   sync.Mutex
		subs []subOut
		xids []cuda.Xid
	)
	conv := func(o cuda.Op) opOut {
		r := opOut{API: o.Name(), Start: o.Start, End: o.End, TID: o.TID, Stream: o.Stream, Bytes: o.Bytes}
		for _, in := range o.Inner {
			n := in.Name()
			if in.EntryPoint {
				n += "@entry_point"
			}
			r.Inner = append(r.Inner, n)
		}
		return r
	}
	asm := cuda.NewAssembler(cuda.AssemblerConfig{}, func(s *cuda.Submission) {
		so := subOut{PID: s.PID, Stream: s.Stream, Outcome: s.Outcome.String(), Start: s.Start, End: s.End,
			Launches: s.Launches, NOps: len(s.Ops) + s.Dropped, Xids: len(s.Xids)}
		so.Scope = map[cuda.Scope]string{cuda.ScopeStream: "stream", cuda.ScopeEvent: "event", cuda.ScopeContext: "context"}[s.Scope]
		if s.Sync != nil {
			o := conv(*s.Sync)
			so.Sync = &o
		}
		if *withOps {
			for _, o := range s.Ops {
				so.Ops = append(so.Ops, conv(o))
			}
		}
		mu.Lock()
		subs = append(subs, so)
		mu.Unlock()
	})
	xsink := &xidTap{Assembler: asm, xids: &xids, mu: &mu}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- src.Run(ctx, xsink) }()

	if *bpfStat {
		stats, err := ebpf.EnableStats(uint32(unix.BPF_STATS_RUN_TIME))
		if err != nil {
			fmt.Fprintln(os.Stderr, "cudatrace: -bpf-stats:", err)
			os.Exit(1)
		}
		defer stats.Close()
	}
	cmd := exec.Command(flag.Arg(0), flag.Args()[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stderr, os.Stderr
	cpu0 := selfCPU()
	start := time.Now()
	runErr := cmd.Run()
	wall := time.Since(start)
	time.Sleep(100 * time.Millisecond)
	// This process's CPU while the command ran (the ring reader, decoder, assembler and
	// hook worker; not the uprobes, which run in the traced threads).
	tracerCPU := selfCPU() - cpu0
	var progStats []cuda.ProgramStat
	if *bpfStat {
		if progStats, err = src.ProgramStats(); err != nil {
			fmt.Fprintln(os.Stderr, "cudatrace: -bpf-stats:", err)
		}
	}
	var floorHits uint64
	if *floor {
		if floorHits, err = src.FloorHits(); err != nil {
			fmt.Fprintln(os.Stderr, "cudatrace: -floor:", err)
		}
	}
	cancel()
	if err := <-done; err != nil {
		fmt.Fprintln(os.Stderr, "cudatrace: run:", err)
	}
	asm.Flush()
	st := src.Stats()
	rep := src.Report()
	src.Close()

	counts := map[string]uint64{}
	nested := map[string]uint64{}
	for _, a := range []cuda.Class{cuda.ClassLaunch, cuda.ClassMemcpy, cuda.ClassMemset, cuda.ClassEventRecord,
		cuda.ClassSync, cuda.ClassAlloc, cuda.ClassFree, cuda.ClassProcAddress} {
		counts[a.String()] = asm.Counts[a]
		nested[a.String()] = asm.NestedCounts[a]
	}
	res := map[string]any{
		"command": flag.Args(), "command_error": fmt.Sprint(runErr), "command_wall_ns": wall.Nanoseconds(),
		"open_ns": openTime.Nanoseconds(), "report": rep.Entries, "stats": st,
		"tracer_cpu_ns": tracerCPU.Nanoseconds(), "program_stats": progStats, "floor_hits": floorHits,
		"top_level_counts": counts, "nested_counts": nested, "submissions": subs, "xids": xids,
	}
	b, _ := json.MarshalIndent(res, "", " ")
	if *out != "" {
		if err := os.WriteFile(*out, b, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	} else {
		os.Stdout.Write(b)
	}
	fmt.Fprintf(os.Stderr, "cudatrace: %s; calls=%d top-level=%v nested=%v entry_points=%d refused=%d lost=%d submissions=%d\n",
		rep.Summary(), st.Calls, counts, nested, st.EntryPointHooks, st.EntryPointsRefused, st.Lost, len(subs))
	if runErr != nil {
		os.Exit(1)
	}
}

// selfCPU is this process's user + system time (its children excluded).
func selfCPU() time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

type xidTap struct {
	*cuda.Assembler
	xids *[]cuda.Xid
	mu   *sync.Mutex
}

func (x *xidTap) Xid(v cuda.Xid) {
	x.mu.Lock()
	*x.xids = append(*x.xids, v)
	x.mu.Unlock()
	x.Assembler.Xid(v)
}
