//go:build linux

// Command cudahook measures what the CUDA source's uprobes cost per launch on the stub
// libraries (internal/cuda/testdata/stub), with and without the levers of issue 15:
// hooking one layer (cuda.Config.Layers) and recording launches at entry without a return
// probe (cuda.Config.LaunchesAtEntry), and uprobe_multi links instead of one perf-event
// uprobe per function (cuda.Config.UprobeMulti). Each condition runs the same launch-bound loop
// (launchloop.c: N back-to-back cudaLaunchKernel, each reaching the stub driver's table
// launch) in interleaved rounds; it prints the median CPU time of the loop process per
// launch (user + system: the uprobe traps and BPF programs run in it, so other load on
// the host does not count), the added cost over no tracer, and the launches the source counted (which must equal N under every lever;
// for the floor, a program that only counts, its hits).
// Needs root and gcc.
//
//	go run ./bench/cudahook [-n 100000] [-rounds 3]
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/ghostdriver/ghostdriver/internal/cuda"
)

type condition struct {
	name           string
	traced         bool
	layers         string
	atEntry, multi bool
	// floor: the driver launches hooked at entry with a program that only counts
	// (cuda.Config.FloorLaunches): the uprobe trap alone; "launches counted" is its hits.
	floor bool
}

var conditions = []condition{
	{name: "no tracer"},
	{name: "both layers, entry+return (default)", traced: true},
	{name: "driver only, entry+return", traced: true, layers: cuda.LayersDriver},
	{name: "both layers, driver launch at entry", traced: true, atEntry: true},
	{name: "driver only, launch at entry", traced: true, layers: cuda.LayersDriver, atEntry: true},
	{name: "runtime only, entry+return", traced: true, layers: cuda.LayersRuntime},
	{name: "runtime only, launch at entry", traced: true, layers: cuda.LayersRuntime, atEntry: true},
	{name: "both layers, entry+return, uprobe_multi", traced: true, multi: true},
	{name: "driver only, launch at entry, uprobe_multi", traced: true, layers: cuda.LayersDriver, atEntry: true, multi: true},
	{name: "floor: the same hooks, program only counts", traced: true, layers: cuda.LayersDriver, multi: true, floor: true},
}

// discard is a sink that keeps only the launch count.
type discard struct{ launches, pid uint64 }

func (d *discard) Calls(b []cuda.Call) {
	for i := range b {
		if uint64(b[i].PID) == d.pid && b[i].Info().Class == cuda.ClassLaunch && b[i].Depth == 0 {
			d.launches++
		}
	}
}
func (d *discard) Xid(cuda.Xid)             {}
func (d *discard) ProcessGone(uint32, bool) {}
func (d *discard) Watermark(int64)          {}

func main() {
	n := flag.Int("n", 100000, "launches per run")
	rounds := flag.Int("rounds", 3, "interleaved rounds")
	flag.Parse()
	dir, err := os.MkdirTemp("", "cudahook")
	check(err)
	defer os.RemoveAll(dir)
	stub := "internal/cuda/testdata/stub"
	run("sh", filepath.Join(stub, "build.sh"), dir)
	loop := filepath.Join(dir, "launchloop")
	run("gcc", "-O2", "-o", loop, filepath.Join(stub, "launchloop.c"), "-L"+dir, "-Wl,--no-as-needed", "-l:libcudart.so.12", "-l:libcuda.so.1",
		"-Wl,-rpath,"+dir)

	ns := make([][]float64, len(conditions))
	counted := make([]uint64, len(conditions))
	for r := 0; r < *rounds; r++ {
		for i, c := range conditions {
			v, launches := once(c, dir, loop, *n)
			ns[i] = append(ns[i], v)
			counted[i] = launches
		}
	}
	base := median(ns[0])
	fmt.Printf("%d launches per run, %d rounds; median CPU ns per launch of the loop process (stub launch spins 2000 ns)\n", *n, *rounds)
	fmt.Printf("%-40s %10s %10s %10s  %s\n", "condition", "ns/launch", "added ns", "ratio", "launches counted")
	for i, c := range conditions {
		m := median(ns[i])
		count := "-"
		if c.traced {
			count = fmt.Sprint(counted[i])
		}
		fmt.Printf("%-40s %10.1f %10.1f %10.3f  %s\n", c.name, m, m-base, m/base, count)
	}
}

// once runs the loop under condition c and returns its CPU ns per launch and the top-level
// launches the source counted.
func once(c condition, dir, loop string, n int) (float64, uint64) {
	var (
		src  *cuda.Source
		sink = &discard{}
		stop = func() {}
	)
	if c.traced {
		var err error
		src, _, err = cuda.Open(cuda.Config{RescanInterval: -1, NoXid: true, Layers: c.layers, LaunchesAtEntry: c.atEntry, UprobeMulti: c.multi, FloorLaunches: c.floor,
			ContextTiers: []string{}, ExtraLibraries: []string{filepath.Join(dir, "libcuda.so.1"), filepath.Join(dir, "libcudart.so.12")}}, nil)
		check(err)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); check(src.Run(ctx, sink)) }()
		stop = func() { cancel(); <-done; src.Close() }
	}
	cmd := exec.Command(loop, fmt.Sprint(n))
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	check(cmd.Start())
	sink.pid = uint64(cmd.Process.Pid)
	rd := bufio.NewReader(stdout)
	line, err := rd.ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "ready") {
		panic(fmt.Sprintf("loop said %q: %v", line, err))
	}
	if c.traced && c.layers != cuda.LayersRuntime {
		// the runtime reaches the driver through the learned table entry: hooked first
		for deadline := time.Now().Add(10 * time.Second); src.Stats().EntryPointHooks < 1; time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				panic("entry point not hooked")
			}
		}
	}
	io.WriteString(stdin, "go\n")
	line, err = rd.ReadString('\n')
	check(err)
	check(cmd.Wait())
	if c.floor {
		hits, err := src.FloorHits()
		check(err)
		sink.launches = hits
	}
	stop()
	var v float64
	var wall float64
	if _, err := fmt.Sscanf(line, "ns_per_launch %f %f", &wall, &v); err != nil {
		panic(fmt.Sprintf("loop said %q", line))
	}
	if c.traced {
		if st := src.Stats(); st.Lost != 0 {
			panic(fmt.Sprintf("%s: %d records lost", c.name, st.Lost))
		}
	}
	return v, sink.launches
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return s[len(s)/2]
}

func run(name string, args ...string) {
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		panic(fmt.Sprintf("%s %v: %v\n%s", name, args, err, out))
	}
}

func check(err error) {
	if err != nil {
		panic(err)
	}
}
