//go:build linux

// Command syscallfallback measures what the submit-ioctl hooks cost every other syscall of
// the host, by rung: a getppid loop with nothing attached ("none"), with the live source
// on the syscall tracepoints ("tracepoint": tracefs mounted, by the loader where it was
// not) and with the raw_tp sys_enter/sys_exit fallback ("raw_tp": tracefs unmounted and
// its mount forbidden). Conditions run in interleaved rounds, their order rotated each
// round; each run is one locked thread's CPU time (CLOCK_THREAD_CPUTIME_ID: the programs
// run in the caller's context) and wall time per call. Needs root and a host where tracefs
// is not mounted (the raw_tp condition waits for it to be unmounted). Output: one TSV row per (round, condition); BENCHMARKS.md.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"
	"golang.org/x/sys/unix"

	"github.com/ghostdriver/ghostdriver/internal/probe"
)

func main() {
	rounds := flag.Int("rounds", 7, "interleaved rounds")
	calls := flag.Int("calls", 2_000_000, "getppid calls per round and condition")
	out := flag.String("out", "", "TSV output (default stdout)")
	majors := flag.String("majors", "226", "the ioctl filter's device majors (a major other than 226 keeps fentry drm_ioctl out where the host has it: the syscall rungs are what is measured)")
	flag.Parse()
	for _, m := range strings.Split(*majors, ",") {
		v, err := strconv.ParseUint(m, 10, 32)
		if err != nil {
			fmt.Fprintf(os.Stderr, "syscallfallback: -majors: %q is not a number\n", m)
			os.Exit(2)
		}
		drmMajors = append(drmMajors, uint32(v))
	}
	if err := run(*rounds, *calls, *out); err != nil {
		fmt.Fprintln(os.Stderr, "syscallfallback:", err)
		os.Exit(1)
	}
}

var (
	conditions = []string{"none", "tracepoint", "raw_tp"}
	drmMajors  []uint32
)

func run(rounds, calls int, out string) error {
	w := io.Writer(os.Stdout)
	if out != "" {
		f, err := os.Create(out)
		if err != nil {
			return err
		}
		defer f.Close()
		w = f
	}
	fmt.Fprintln(w, "round\tcondition\tioctl_hook\tcalls\tcpu_ns_per_call\twall_ns_per_call")
	res := map[string][]float64{}
	for r := 0; r < rounds; r++ {
		for i := range conditions {
			cond := conditions[(i+r)%len(conditions)]
			hook, cpu, wall, err := runCondition(cond, calls)
			if err != nil {
				return fmt.Errorf("round %d %s: %w", r, cond, err)
			}
			res[cond] = append(res[cond], cpu)
			fmt.Fprintf(w, "%d\t%s\t%s\t%d\t%.1f\t%.1f\n", r, cond, hook, calls, cpu, wall)
		}
	}
	base := median(res["none"])
	for _, c := range conditions {
		m := median(res[c])
		fmt.Fprintf(os.Stderr, "%-10s median %.1f ns/call CPU (%+.1f ns, %.2fx none) over %d rounds\n", c, m, m-base, m/base, len(res[c]))
	}
	return nil
}

// runCondition opens the live source as the condition says (nothing for "none") and
// times the loop.
func runCondition(cond string, calls int) (string, float64, float64, error) {
	hook := "-"
	if cond == "raw_tp" {
		// Other ghostdriver processes on the host (tests) mount tracefs for their own run:
		// wait for it to be gone again.
		for end := time.Now().Add(2 * time.Minute); probe.HaveTracefs() == nil; time.Sleep(time.Second) {
			if time.Now().After(end) {
				return "", 0, 0, errors.New("tracefs stayed mounted (another process holds it)")
			}
		}
	}
	if cond != "none" {
		cfg := probe.DefaultConfig()
		cfg.DRMMajors = drmMajors
		cfg.NoTracefsMount = cond == "raw_tp"
		l, rep, err := probe.Open(cfg, zap.NewNop())
		if err != nil {
			return "", 0, 0, err
		}
		defer l.Close()
		for _, e := range rep.Attached() {
			if e.Stage == probe.StageIoctl && strings.Contains(e.Hook, "enter") {
				hook = e.Hook
			}
		}
		want := map[string]string{"tracepoint": "tracepoint/syscalls/sys_enter_ioctl", "raw_tp": "raw_tp/sys_enter"}[cond]
		if hook != want {
			return "", 0, 0, fmt.Errorf("ioctl hooked with %q, want %q", hook, want)
		}
	}
	cpu, wall := getppidLoop(calls)
	return hook, cpu, wall, nil
}

// getppidLoop runs n getppid on one locked thread: thread CPU and wall ns per call.
func getppidLoop(n int) (float64, float64) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var c0, c1 unix.Timespec
	unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &c0)
	t0 := time.Now()
	for i := 0; i < n; i++ {
		unix.RawSyscall(unix.SYS_GETPPID, 0, 0, 0)
	}
	wall := time.Since(t0)
	unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &c1)
	cpu := (c1.Sec-c0.Sec)*1e9 + (c1.Nsec - c0.Nsec)
	return float64(cpu) / float64(n), float64(wall.Nanoseconds()) / float64(n)
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
