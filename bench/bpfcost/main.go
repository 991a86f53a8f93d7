//go:build linux

// Command bpfcost measures the kernel side of ghostdriver against its floor, from the
// kernel's own BPF run-time statistics (kernel.bpf_stats_enabled), in one interleaved run:
//
//	bpfcost cost [flags]   per-program ns/run: empty programs on the same hooks ("floor"),
//	                       ghostdriver with each --drm-major setting ("gd-226", "gd-1")
//	bpfcost loss [flags]   ring-buffer loss of the live source + pipeline at sustained rates
//
// The floor is built from ghostdriver's own capability report: for every hook the loader
// attached here (classic tracepoint, tp_btf, raw_tp, fentry/fexit) an empty program of
// the same type is attached to the same hook, so that "floor" and "gd" differ only in the
// program bodies. The same binary runs on the host (ioctl + fork/exec workload) and in
// the virtual GPU guest (-workload: the vgpu test app).
//
// Output: one TSV row per (round, condition, hook) on stdout or -out; see BENCHMARKS.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/link"
	"github.com/cilium/ebpf/rlimit"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"golang.org/x/sys/unix"

	"github.com/ghostdriver/ghostdriver/internal/assemble"
	"github.com/ghostdriver/ghostdriver/internal/capability"
	"github.com/ghostdriver/ghostdriver/internal/event"
	"github.com/ghostdriver/ghostdriver/internal/metadata"
	"github.com/ghostdriver/ghostdriver/internal/pipeline"
	"github.com/ghostdriver/ghostdriver/internal/probe"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: bpfcost cost|loss [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "cost":
		err = cmdCost(os.Args[2:])
	case "loss":
		err = cmdLoss(os.Args[2:])
	default:
		err = fmt.Errorf("unknown mode %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bpfcost:", err)
		os.Exit(1)
	}
}

// ---- cost -------------------------------------------------------------------------

func cmdCost(args []string) error {
	fs := flag.NewFlagSet("cost", flag.ExitOnError)
	rounds := fs.Int("rounds", 5, "interleaved rounds (floor, gd-<major>..., floor, ...)")
	ioctls := fs.Int("ioctls", 1_000_000, "ioctl(TCGETS) on /dev/null per round and condition (0: none)")
	execs := fs.Int("execs", 200, "fork+exec of /bin/true per round and condition (sched_process_exec/exit)")
	majors := fs.String("majors", "226,1", "ghostdriver conditions: the device majors per condition, several joined by '+' (226 = filter miss on this host, 1 = /dev/null's major: filter hit, 226+195+238 = with NVIDIA's majors, 226+241 = with a major of unknown ioctl types)")
	workload := fs.String("workload", "", "shell command run per round and condition instead of the ioctl/exec loops (guest: the vgpu app)")
	units := fs.Float64("units", 0, "work units per workload run (e.g. jobs) for the per-unit sum; default: ioctls")
	out := fs.String("out", "", "TSV output (default stdout)")
	fs.Parse(args)

	if err := rlimit.RemoveMemlock(); err != nil {
		return err
	}
	stats, err := ebpf.EnableStats(uint32(unix.BPF_STATS_RUN_TIME))
	if err != nil {
		return fmt.Errorf("enabling BPF run-time stats: %w", err)
	}
	defer stats.Close()

	w := io.Writer(os.Stdout)
	if *out != "" {
		f, err := os.Create(*out)
		if err != nil {
			return err
		}
		defer f.Close()
		w = f
	}
	fmt.Fprintln(w, "round\tcondition\thook\truns\tns_per_run\ttotal_ns\tunits\twall_ns_per_ioctl")

	var conds []string
	conds = append(conds, "floor")
	for _, m := range strings.Split(*majors, ",") {
		conds = append(conds, "gd-"+strings.TrimSpace(m))
	}
	// The hooks ghostdriver attaches here decide the floor's hooks.
	hooks, err := attachedHooks(226)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "bpfcost: hooks attached here: %s\n", strings.Join(hooks, " "))

	u := *units
	if u == 0 {
		u = float64(*ioctls)
	}
	for r := 1; r <= *rounds; r++ {
		for _, c := range conds {
			res, wall, err := runCondition(c, hooks, func() (float64, error) {
				if *workload != "" {
					cmd := exec.Command("/bin/sh", "-c", *workload)
					cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
					return 0, cmd.Run()
				}
				wall := ioctlLoop(*ioctls)
				for i := 0; i < *execs; i++ {
					if err := exec.Command("/bin/true").Run(); err != nil {
						return 0, err
					}
				}
				return wall, nil
			})
			if err != nil {
				return fmt.Errorf("round %d %s: %w", r, c, err)
			}
			var sum float64
			for _, h := range res {
				per := 0.0
				if h.runs > 0 {
					per = float64(h.ns) / float64(h.runs)
				}
				sum += float64(h.ns)
				fmt.Fprintf(w, "%d\t%s\t%s\t%d\t%.1f\t%d\t%.0f\t%.1f\n", r, c, h.hook, h.runs, per, h.ns, u, wall)
			}
			fmt.Fprintf(w, "%d\t%s\t%s\t%d\t%.1f\t%.0f\t%.0f\t%.1f\n", r, c, "SUM_per_unit", 0, sum/u, sum, u, wall)
			fmt.Fprintf(os.Stderr, "bpfcost: round %d %-6s sum %.1f ns/unit, wall %.1f ns/ioctl\n", r, c, sum/u, wall)
		}
	}
	return nil
}

type hookStat struct {
	hook string
	runs uint64
	ns   uint64
}

// attachedHooks asks the loader what it attaches here (the doctor report).
func attachedHooks(major uint32) ([]string, error) {
	cfg := probe.DefaultConfig()
	cfg.DRMMajors = []uint32{major}
	rep := probe.Doctor(cfg, nil)
	var hooks []string
	for _, e := range rep.Attached() {
		if strings.HasPrefix(e.Hook, "map/") {
			continue
		}
		hooks = append(hooks, e.Hook)
	}
	if len(hooks) == 0 {
		return nil, fmt.Errorf("ghostdriver attaches nothing here:\n%s", rep.String())
	}
	return hooks, nil
}

// runCondition sets a condition up, runs the workload and returns each program's runs
// and run time during the workload.
func runCondition(cond string, hooks []string, work func() (float64, error)) ([]hookStat, float64, error) {
	var progs []*ebpf.Program
	var names []string
	var cleanup func()
	switch {
	case cond == "floor":
		var links []link.Link
		cleanup = func() {
			for _, l := range links {
				l.Close()
			}
			for _, p := range progs {
				p.Close()
			}
		}
		for _, h := range hooks {
			p, l, err := attachEmpty(h)
			if err != nil {
				cleanup()
				return nil, 0, fmt.Errorf("floor on %s: %w", h, err)
			}
			progs, links, names = append(progs, p), append(links, l), append(names, h)
		}
	case strings.HasPrefix(cond, "gd-"):
		// gd-226, or several majors joined by '+': gd-226+195+238 is the receiver's filter
		// with live.cuda on an NVIDIA host (ioctl types known: the type gate stays on),
		// gd-226+241 one with a major of unknown types (nvidia-caps: the gate is off).
		before := programIDs()
		cfg := probe.DefaultConfig()
		cfg.DRMMajors = nil
		cfg.IoctlTypes = map[uint32][]uint8{}
		for _, f := range strings.Split(strings.TrimPrefix(cond, "gd-"), "+") {
			m, err := strconv.ParseUint(f, 10, 32)
			if err != nil {
				return nil, 0, err
			}
			cfg.DRMMajors = append(cfg.DRMMajors, uint32(m))
			if t, ok := nvidiaTypes[uint32(m)]; ok {
				cfg.IoctlTypes[uint32(m)] = t
			}
		}
		l, rep, err := probe.Open(cfg, nil)
		if err != nil {
			return nil, 0, fmt.Errorf("%v\n%s", err, rep.String())
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { l.Run(ctx, discard{}); close(done) }()
		cleanup = func() {
			cancel()
			<-done
			if lost := l.Stats().Lost; lost > 0 {
				fmt.Fprintf(os.Stderr, "bpfcost: %s: %d records lost\n", cond, lost)
			}
			l.Close()
			for _, p := range progs {
				p.Close()
			}
		}
		progs, names, err = ghostdriverPrograms(before, rep)
		if err != nil {
			cleanup()
			return nil, 0, err
		}
	default:
		return nil, 0, fmt.Errorf("unknown condition %q", cond)
	}
	defer cleanup()

	before := make([]*ebpf.ProgramStats, len(progs))
	for i, p := range progs {
		s, err := p.Stats()
		if err != nil {
			return nil, 0, err
		}
		before[i] = s
	}
	wall, err := work()
	if err != nil {
		return nil, 0, err
	}
	res := make([]hookStat, len(progs))
	for i, p := range progs {
		s, err := p.Stats()
		if err != nil {
			return nil, 0, err
		}
		res[i] = hookStat{hook: names[i], runs: s.RunCount - before[i].RunCount, ns: uint64(s.Runtime - before[i].Runtime)}
	}
	return res, wall, nil
}

// attachEmpty attaches `return 0` of the hook's program type to the hook.
func attachEmpty(hook string) (*ebpf.Program, link.Link, error) {
	kind, target, _ := strings.Cut(hook, "/")
	spec := &ebpf.ProgramSpec{
		Name:         "floor",
		License:      "GPL",
		Instructions: asm.Instructions{asm.Mov.Imm(asm.R0, 0), asm.Return()},
	}
	switch kind {
	case "tracepoint":
		spec.Type = ebpf.TracePoint
	case "raw_tp":
		spec.Type = ebpf.RawTracepoint
	case "tp_btf":
		spec.Type, spec.AttachType, spec.AttachTo = ebpf.Tracing, ebpf.AttachTraceRawTp, target
	case "fentry":
		spec.Type, spec.AttachType, spec.AttachTo = ebpf.Tracing, ebpf.AttachTraceFEntry, target
	case "fexit":
		spec.Type, spec.AttachType, spec.AttachTo = ebpf.Tracing, ebpf.AttachTraceFExit, target
	default:
		return nil, nil, fmt.Errorf("no floor for hook kind %q", kind)
	}
	p, err := ebpf.NewProgram(spec)
	if err != nil {
		return nil, nil, err
	}
	var l link.Link
	switch kind {
	case "tracepoint":
		group, name, _ := strings.Cut(target, "/")
		l, err = link.Tracepoint(group, name, p, nil)
	case "raw_tp":
		l, err = link.AttachRawTracepoint(link.RawTracepointOptions{Name: target, Program: p})
	default:
		l, err = link.AttachTracing(link.TracingOptions{Program: p})
	}
	if err != nil {
		p.Close()
		return nil, nil, err
	}
	return p, l, nil
}

func programIDs() map[ebpf.ProgramID]bool {
	ids := map[ebpf.ProgramID]bool{}
	var id ebpf.ProgramID
	for {
		next, err := ebpf.ProgramGetNextID(id)
		if err != nil {
			return ids
		}
		ids[next] = true
		id = next
	}
}

// ghostdriverPrograms finds the programs probe.Open just loaded, without reaching into
// the package: the loader loads and attaches in report order, and a failed rung's
// programs are closed again, so the programs that are new since `before`, in ID order,
// are the attached report entries in order. Each is checked against its hook by name
// (the kernel keeps 15 characters), which also rejects programs other users loaded
// at the same moment.
func ghostdriverPrograms(before map[ebpf.ProgramID]bool, rep capability.Report) ([]*ebpf.Program, []string, error) {
	var ids []ebpf.ProgramID
	for id := range programIDs() {
		if !before[id] {
			ids = append(ids, id)
		}
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	var hooks []string
	for _, e := range rep.Attached() {
		if !strings.HasPrefix(e.Hook, "map/") {
			hooks = append(hooks, e.Hook)
		}
	}
	var progs []*ebpf.Program
	var names []string
	i := 0
	for _, id := range ids {
		if i == len(hooks) {
			break
		}
		p, err := ebpf.NewProgramFromID(id)
		if err != nil {
			continue
		}
		info, err := p.Info()
		if err != nil || !nameMatches(info.Name, hooks[i]) {
			p.Close()
			continue
		}
		progs, names = append(progs, p), append(names, hooks[i])
		i++
	}
	if i != len(hooks) {
		for _, p := range progs {
			p.Close()
		}
		return nil, nil, fmt.Errorf("found %d of ghostdriver's %d programs", i, len(hooks))
	}
	return progs, names, nil
}

// nameMatches: bpf/*.c names programs <prefix>_<event> by hook kind (truncated to 15).
func nameMatches(progName, hook string) bool {
	kind, target, _ := strings.Cut(hook, "/")
	var want string
	switch kind {
	case "tracepoint":
		_, ev, _ := strings.Cut(target, "/")
		want = "tp_" + ev
	case "tp_btf":
		want = "tpbtf_" + target
	case "raw_tp":
		want = "rawtp_" + target
		if target == "sys_enter" || target == "sys_exit" {
			want = "raw_" + target
		}
	case "fentry", "fexit":
		want = kind + "_" // generic targets: fentry_bo_validate, fexit_run_job, ...
	case "irq":
		return true
	}
	if len(want) > 15 {
		want = want[:15]
	}
	return strings.HasPrefix(progName, want) || strings.HasPrefix(want, progName)
}

// ioctlLoop runs n ioctl(TCGETS) on /dev/null on one locked thread; wall ns per call.
func ioctlLoop(n int) float64 {
	if n == 0 {
		return 0
	}
	f, err := os.Open("/dev/null")
	if err != nil {
		return 0
	}
	defer f.Close()
	fd := f.Fd()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var t unix.Termios
	t0 := time.Now()
	for i := 0; i < n; i++ {
		unix.Syscall(unix.SYS_IOCTL, fd, unix.TCGETS, uintptrOf(&t))
	}
	return float64(time.Since(t0).Nanoseconds()) / float64(n)
}

type discard struct{}

func (discard) Consume([]event.Event) {}
func (discard) Watermark(int64)       {}

// ---- loss -------------------------------------------------------------------------

func cmdLoss(args []string) error {
	fs := flag.NewFlagSet("loss", flag.ExitOnError)
	rates := fs.String("rates", "50000", "ioctls/s to sustain (each is 2 events: enter + exit)")
	seconds := fs.Float64("seconds", 10, "duration per rate")
	loop := fs.String("loop", "ioctlloop", "the ioctlloop binary")
	major := fs.Uint("major", 1, "--drm-major (1: every ioctl on /dev/null is followed)")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the whole run (reader, pipeline) to this file")
	fs.Parse(args)
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}

	fmt.Println("rate_ioctls_per_s\tevents_per_s\tseconds\tioctls\tevents_received\tlost\tachieved_ioctls_per_s\treader_cpu_pct\treader_cpu_ns_per_event")
	for _, rs := range strings.Split(*rates, ",") {
		rate, err := strconv.ParseFloat(strings.TrimSpace(rs), 64)
		if err != nil {
			return err
		}
		n := int64(rate * *seconds)
		cfg := probe.DefaultConfig()
		cfg.DRMMajors = []uint32{uint32(*major)}
		l, rep, err := probe.Open(cfg, nil)
		if err != nil {
			return fmt.Errorf("%v\n%s", err, rep.String())
		}
		var m ptrace.JSONMarshaler
		p := pipeline.New(pipeline.Config{Assemble: assemble.DefaultConfig(), Metrics: metadata.DefaultMetricsConfig()}, l,
			pipeline.Outputs{Traces: func(_ context.Context, td ptrace.Traces) error { _, err := m.MarshalTraces(td); return err }}, nil)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- p.Run(ctx) }()
		time.Sleep(200 * time.Millisecond)
		cpu0 := selfCPU()
		t0 := time.Now()
		out, err := exec.Command(*loop, strconv.FormatInt(n, 10), strconv.FormatFloat(rate, 'f', 0, 64)).Output()
		if err != nil {
			cancel()
			return fmt.Errorf("%s: %w", *loop, err)
		}
		wall := time.Since(t0)
		time.Sleep(3 * cfg.PollInterval)
		cpu1 := selfCPU()
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			return err
		}
		st := p.Stats().Source
		l.Close()
		var got uint64
		for _, n := range st.Events {
			got += n
		}
		_ = out
		cpu := (cpu1 - cpu0).Seconds()
		fmt.Printf("%.0f\t%.0f\t%.2f\t%d\t%d\t%d\t%.0f\t%.1f\t%.0f\n", rate, 2*rate, wall.Seconds(), n, got, st.Lost,
			float64(n)/wall.Seconds(), 100*cpu/wall.Seconds(), cpu*1e9/float64(max(got, 1)))
	}
	return nil
}

func selfCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func uintptrOf(t *unix.Termios) uintptr { return uintptr(unsafe.Pointer(t)) }

// nvidiaTypes are the ioctl types the receiver gives NVIDIA's frontend (195) and
// nvidia-uvm (238 on the validation host) majors (cuda.NvidiaIoctlTypes).
var nvidiaTypes = map[uint32][]uint8{195: {'F', 'm'}, 238: {0}}
