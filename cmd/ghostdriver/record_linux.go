// `ghostdriver record`: make a capture that `ghostdriver replay` reads, with tracefs alone
// (no eBPF, no trace-cmd). The events enabled are exactly those the ftrace decoder turns
// into events (ftrace.DecodedTracepoints, its one table) that exist on this kernel, in a
// private tracefs instance, instances/ghostdriver-<pid>, so that other tracing on the
// host is left alone; the instance is removed on exit, on Ctrl-C and on SIGTERM.
//
// The text is read from the instance's trace_pipe while recording, not from its trace
// file after the stop: trace_pipe consumes the ring buffer as it fills, so the buffer only
// has to absorb bursts, while reading trace after the stop keeps at most one buffer's
// worth (buffer_size_kb per CPU) and loses everything older. What the kernel still drops
// (reader too slow: overrun; buffer full: dropped events) is read from
// per_cpu/cpuN/stats and reported.

package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ghostdriver/ghostdriver/internal/ftrace"
)

// tracefsMount is where record mounts tracefs when it is not mounted anywhere.
const tracefsMount = "/sys/kernel/tracing"

func cmdRecord(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("record", flag.ContinueOnError)
	duration := fs.Duration("duration", 0, "stop after this long (0: until Ctrl-C or SIGTERM)")
	output := fs.String("output", "ghostdriver.trace.txt", "write the capture (tracefs text, as trace_pipe prints it) to this file")
	bufferKB := fs.Int("buffer-kb", 4096, "ring buffer per CPU of the private instance, KiB")
	list := fs.Bool("list", false, "print the events that would be enabled on this kernel (system:event), and the decoded ones absent here, then exit")
	readyFile := fs.String("ready-file", "", "create this file once the events are enabled (for scripts that start a workload)")
	quiet := fs.Bool("quiet", false, "no progress line")
	if code, done := parseArgs(fs, args, stdout, stderr); done {
		return code
	}
	if fs.NArg() != 0 {
		return usageError(stderr, fs, "takes no arguments, got %q", fs.Args())
	}
	if *duration < 0 {
		return usageError(stderr, fs, "--duration %v: want 0 or more", *duration)
	}
	if *bufferKB < 4 || *bufferKB > 1<<20 {
		return usageError(stderr, fs, "--buffer-kb %d: want 4..1048576", *bufferKB)
	}
	if *output == "" {
		return usageError(stderr, fs, "--output is empty")
	}

	root, unmount, err := tracefsRoot()
	if err != nil {
		return fail(stderr, "record", err)
	}
	defer func() {
		if err := unmount(); err != nil {
			fmt.Fprintf(stderr, "ghostdriver record: %v\n", err)
		}
	}()
	plan, err := planEvents(root)
	if err != nil {
		return fail(stderr, "record", err)
	}
	if *list {
		for _, e := range plan.enable {
			line := e.system + ":" + e.name
			if e.filter != "" {
				line += "  (filter: " + e.filter + ")"
			}
			fmt.Fprintln(stdout, line)
		}
		for _, n := range plan.absent {
			fmt.Fprintf(stdout, "# not on this kernel: %s\n", n)
		}
		return 0
	}
	if len(plan.enable) == 0 {
		return fail(stderr, "record", errors.New("none of the events the decoder reads exist on this kernel (see record --list)"))
	}

	ctx, stop := runContext(*duration)
	defer stop()
	r := &recorder{root: root, plan: plan, bufferKB: *bufferKB, stderr: stderr, quiet: *quiet}
	if err := r.run(ctx, *output, *readyFile); err != nil {
		return fail(stderr, "record", err)
	}
	return 0
}

// tracefsRoot finds the mounted tracefs, or mounts it at /sys/kernel/tracing; unmount
// undoes only what it did.
func tracefsRoot() (root string, unmount func() error, err error) {
	nop := func() error { return nil }
	mounts, err := os.ReadFile("/proc/mounts")
	if err != nil {
		return "", nop, fmt.Errorf("reading /proc/mounts: %w", err)
	}
	var debugfs string
	for _, line := range strings.Split(string(mounts), "\n") {
		f := strings.Fields(line)
		if len(f) < 3 {
			continue
		}
		switch f[2] {
		case "tracefs":
			if f[1] == tracefsMount || root == "" {
				root = f[1]
			}
		case "debugfs":
			debugfs = f[1]
		}
	}
	if root == "" && debugfs != "" {
		if _, err := os.Stat(filepath.Join(debugfs, "tracing", "instances")); err == nil {
			root = filepath.Join(debugfs, "tracing")
		}
	}
	if root != "" {
		return root, nop, nil
	}
	if err := unix.Mount("nodev", tracefsMount, "tracefs", 0, ""); err != nil {
		return "", nop, fmt.Errorf("tracefs is not mounted and mounting it at %s failed: %w (run as root, or: mount -t tracefs nodev %s)", tracefsMount, err, tracefsMount)
	}
	return tracefsMount, func() error {
		if err := unix.Unmount(tracefsMount, 0); err != nil {
			return fmt.Errorf("unmounting the tracefs this command mounted at %s: %w", tracefsMount, err)
		}
		return nil
	}, nil
}

// recordEvent is one tracefs event to enable.
type recordEvent struct {
	system, name, filter string
}

type recordPlan struct {
	enable []recordEvent
	absent []string // decoded tracepoints this kernel does not have
}

// planEvents matches the decoder's tracepoints with the kernel's available_events. A
// tracepoint is found by name in whichever system has it (gpu_scheduler, dma_fence,
// amdgpu, drm_msm_gpu, …: the decoder reads the name, the system is the kernel's), except
// that a driver's own event is taken only in the system the event table gives it.
// raw_syscalls sys_enter/sys_exit are the decoder's fallback for kernels without
// syscalls:sys_enter_ioctl (no CONFIG_FTRACE_SYSCALLS): enabled only then, filtered on the
// ioctl syscall number, since both together would record every ioctl twice.
func planEvents(root string) (recordPlan, error) {
	var p recordPlan
	b, err := os.ReadFile(filepath.Join(root, "available_events"))
	if err != nil {
		return p, fmt.Errorf("reading the kernel's event list: %w", err)
	}
	bySystem := map[string][]string{} // event name → systems that have it
	for _, line := range strings.Split(string(b), "\n") {
		sys, name, ok := strings.Cut(strings.TrimSpace(line), ":")
		if ok {
			bySystem[name] = append(bySystem[name], sys)
		}
	}
	haveSyscallIoctl := len(bySystem["sys_enter_ioctl"]) > 0
	for _, name := range ftrace.DecodedTracepoints() {
		systems := bySystem[name]
		if len(systems) == 0 {
			p.absent = append(p.absent, name)
			continue
		}
		want := ftrace.TracepointSystem(name)
		if want != "" && !slices.Contains(systems, want) {
			p.absent = append(p.absent, want+":"+name)
			continue
		}
		for _, sys := range systems {
			if want != "" && sys != want {
				continue // another system's event of the same name (ivpu's "job")
			}
			e := recordEvent{system: sys, name: name}
			if sys == "raw_syscalls" {
				if haveSyscallIoctl {
					continue
				}
				e.filter = "id == " + strconv.Itoa(ftrace.IoctlSyscallNR)
			}
			p.enable = append(p.enable, e)
		}
	}
	return p, nil
}

type recorder struct {
	root     string
	plan     recordPlan
	bufferKB int
	stderr   io.Writer
	quiet    bool

	inst string // the private instance's directory
	// restoreTGID resets the top-level record-tgid option when this recorder had to set
	// it there (kernels whose instances lack options/record-tgid).
	restoreTGID func()
}

func (r *recorder) write(rel, value string) error {
	if err := os.WriteFile(filepath.Join(r.inst, rel), []byte(value), 0); err != nil {
		return fmt.Errorf("writing %q to %s: %w", value, filepath.Join(r.inst, rel), err)
	}
	return nil
}

// setup creates the instance and configures it; tracing is left off.
func (r *recorder) setup() error {
	r.inst = filepath.Join(r.root, "instances", fmt.Sprintf("ghostdriver-%d", os.Getpid()))
	if err := os.Mkdir(r.inst, 0o755); err != nil {
		return fmt.Errorf("creating the tracefs instance: %w", err)
	}
	if err := r.write("tracing_on", "0"); err != nil {
		return err
	}
	if err := r.write("buffer_size_kb", strconv.Itoa(r.bufferKB)); err != nil {
		return err
	}
	// CLOCK_MONOTONIC, the live source's clock, where the kernel offers it (4.10+).
	if clocks, err := os.ReadFile(filepath.Join(r.inst, "trace_clock")); err == nil && bytes.Contains(clocks, []byte("mono")) {
		if err := r.write("trace_clock", "mono"); err != nil {
			return err
		}
	}
	if err := r.recordTGID(); err != nil {
		return err
	}
	for _, e := range r.plan.enable {
		dir := filepath.Join("events", e.system, e.name)
		if e.filter != "" {
			if err := r.write(filepath.Join(dir, "filter"), e.filter); err != nil {
				return err
			}
		}
		if err := r.write(filepath.Join(dir, "enable"), "1"); err != nil {
			return err
		}
	}
	return nil
}

// recordTGID turns on record-tgid (the TGID column: job spans get their process): in the
// instance where it has the option, else at the top level, restored at the end.
func (r *recorder) recordTGID() error {
	if _, err := os.Stat(filepath.Join(r.inst, "options", "record-tgid")); err == nil {
		return r.write("options/record-tgid", "1")
	}
	top := filepath.Join(r.root, "options", "record-tgid")
	old, err := os.ReadFile(top)
	if err != nil {
		return fmt.Errorf("this kernel has no record-tgid option (captures would have no pids): %w", err)
	}
	if strings.TrimSpace(string(old)) == "1" {
		return nil
	}
	if err := os.WriteFile(top, []byte("1"), 0); err != nil {
		return fmt.Errorf("setting %s: %w", top, err)
	}
	r.restoreTGID = func() { _ = os.WriteFile(top, []byte("0"), 0) }
	return nil
}

// teardown stops tracing and removes the instance (events are disabled with it).
func (r *recorder) teardown() error {
	if r.restoreTGID != nil {
		r.restoreTGID()
	}
	if r.inst == "" {
		return nil
	}
	_ = r.write("tracing_on", "0")
	var err error
	for i := 0; i < 50; i++ { // EBUSY while a reader still holds a file of the instance
		if err = os.Remove(r.inst); err == nil || errors.Is(err, os.ErrNotExist) {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("removing the tracefs instance %s: %w", r.inst, err)
}

// run records into output until ctx ends.
func (r *recorder) run(ctx context.Context, output, readyFile string) (err error) {
	defer func() { err = errors.Join(err, r.teardown()) }()
	if err := r.setup(); err != nil {
		return err
	}
	out, err := os.Create(output)
	if err != nil {
		return fmt.Errorf("--output: %w", err)
	}
	defer func() {
		if cerr := out.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("--output: %w", cerr)
		}
	}()
	w := bufio.NewWriterSize(out, 1<<20)

	pipePath := filepath.Join(r.inst, "trace_pipe")
	fd, err := unix.Open(pipePath, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("opening %s: %w", pipePath, err)
	}
	defer unix.Close(fd)
	if err := r.write("tracing_on", "1"); err != nil {
		return err
	}
	start := time.Now()
	if readyFile != "" {
		names := make([]string, 0, len(r.plan.enable))
		for _, e := range r.plan.enable {
			names = append(names, e.system+":"+e.name)
		}
		if err := os.WriteFile(readyFile, []byte(strings.Join(names, "\n")+"\n"), 0o644); err != nil {
			return fmt.Errorf("--ready-file: %w", err)
		}
	}
	if !r.quiet {
		fmt.Fprintf(r.stderr, "ghostdriver record: %d events enabled in %s, writing %s (Ctrl-C stops)\n", len(r.plan.enable), r.inst, output)
	}

	var st recordStats
	buf := make([]byte, 1<<20)
	tty := isTerminal(r.stderr)
	lastProgress := start
	progressEvery := 5 * time.Second
	if tty {
		progressEvery = time.Second
	}
	stopped := false
	for {
		n, rerr := unix.Read(fd, buf)
		if n > 0 {
			st.bytes += uint64(n)
			st.events += uint64(bytes.Count(buf[:n], []byte{'\n'}))
			if _, err := w.Write(buf[:n]); err != nil {
				return fmt.Errorf("--output: %w", err)
			}
		}
		switch {
		case rerr == nil && n > 0:
			// more may be waiting
		case rerr == nil || errors.Is(rerr, unix.EAGAIN) || errors.Is(rerr, unix.EINTR):
			if stopped { // tracing is off and the pipe is empty: done
				if err := w.Flush(); err != nil {
					return fmt.Errorf("--output: %w", err)
				}
				st.elapsed = time.Since(start)
				lost, lerr := r.lost()
				st.overrun, st.dropped = lost.overrun, lost.dropped
				if !r.quiet && tty {
					fmt.Fprint(r.stderr, "\r")
				}
				fmt.Fprintf(r.stderr, "ghostdriver record: %s\n", st.line(output))
				if st.overrun+st.dropped > 0 {
					fmt.Fprintf(r.stderr, "ghostdriver record: the kernel lost %d events (overrun %d: the reader fell behind; dropped %d: buffer full); a larger --buffer-kb helps\n",
						st.overrun+st.dropped, st.overrun, st.dropped)
				}
				return lerr
			}
			select {
			case <-ctx.Done():
				// Stop tracing, then drain what is already in the buffer.
				if err := r.write("tracing_on", "0"); err != nil {
					return err
				}
				stopped = true
			case <-time.After(50 * time.Millisecond):
			}
		default:
			return fmt.Errorf("reading %s: %w", pipePath, rerr)
		}
		if !r.quiet && time.Since(lastProgress) >= progressEvery {
			lastProgress = time.Now()
			st.elapsed = time.Since(start)
			lost, _ := r.lost()
			st.overrun, st.dropped = lost.overrun, lost.dropped
			if tty {
				fmt.Fprintf(r.stderr, "\r%s   ", st.progress())
			} else {
				fmt.Fprintln(r.stderr, st.progress())
			}
		}
	}
}

type recordStats struct {
	elapsed          time.Duration
	bytes, events    uint64
	overrun, dropped uint64
}

func (s recordStats) progress() string {
	return fmt.Sprintf("recording %s: %s, %d events, %d lost", s.elapsed.Round(time.Second), humanBytes(s.bytes), s.events, s.overrun+s.dropped)
}

func (s recordStats) line(output string) string {
	return fmt.Sprintf("%s: %d events (%s) in %s, %d lost (overrun %d, dropped %d); replay it with: ghostdriver replay %s",
		output, s.events, humanBytes(s.bytes), s.elapsed.Round(time.Millisecond), s.overrun+s.dropped, s.overrun, s.dropped, output)
}

func humanBytes(n uint64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

type lostCounts struct{ overrun, dropped uint64 }

// lost sums the instance's per-CPU ring buffer losses: "overrun" (events overwritten
// before the reader got them), "commit overrun" and "dropped events" (buffer full).
func (r *recorder) lost() (lostCounts, error) {
	var l lostCounts
	cpus, err := filepath.Glob(filepath.Join(r.inst, "per_cpu", "cpu*", "stats"))
	if err != nil || len(cpus) == 0 {
		return l, fmt.Errorf("no per_cpu/cpu*/stats in %s: the loss count is unknown", r.inst)
	}
	for _, path := range cpus {
		b, err := os.ReadFile(path)
		if err != nil {
			return l, fmt.Errorf("reading %s: %w", path, err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			k, v, ok := strings.Cut(line, ":")
			if !ok {
				continue
			}
			n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
			if err != nil {
				continue
			}
			switch strings.TrimSpace(k) {
			case "overrun", "commit overrun":
				l.overrun += n
			case "dropped events":
				l.dropped += n
			}
		}
	}
	return l, nil
}

// isTerminal reports whether w is a terminal (the progress line then rewrites itself).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}
