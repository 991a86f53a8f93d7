// `ghostdriver record` on this host (tracefs, no DRM): the events that exist here are
// recorded in a private instance while this test makes a known number of ioctls, the
// file is decoded by the replay decoder, and the counts must be the ioctls the test
// made (the oracle is the test's own syscalls, not the recorder's code). The instance and
// any tracefs mount the command made must be gone afterwards. Root is needed.
package main

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ghostdriver/ghostdriver/internal/event"
	"github.com/ghostdriver/ghostdriver/internal/ftrace"
	"github.com/ghostdriver/ghostdriver/internal/testreq"
)

func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		testreq.Skip(t, testreq.Root, "needs root: record creates a tracefs instance (and may mount tracefs); CI runs as root")
	}
}

// tracefsMounts is the tracefs lines of /proc/mounts.
func tracefsMounts(t *testing.T) []string {
	b, err := os.ReadFile("/proc/mounts")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) > 2 && f[2] == "tracefs" {
			out = append(out, l)
		}
	}
	return out
}

// startRecord runs `ghostdriver record ARGS --ready-file …` in the background and waits
// until the events are enabled. done receives the exit code.
func startRecord(t *testing.T, args ...string) (done chan int, stderr *bytes.Buffer) {
	t.Helper()
	ready := filepath.Join(t.TempDir(), "ready")
	done = make(chan int, 1)
	stderr = &bytes.Buffer{}
	go func() {
		var o bytes.Buffer
		done <- run(append([]string{"record", "--ready-file", ready}, args...), &o, stderr)
	}()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := os.Stat(ready); err == nil {
			return done, stderr
		}
		select {
		case code := <-done:
			t.Fatalf("record exited %d before it was ready: %s", code, stderr)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("record not ready after 20 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// instances lists the ghostdriver-* tracefs instances of this process.
func ownInstances() []string {
	var out []string
	for _, root := range []string{tracefsMount, "/sys/kernel/debug/tracing"} {
		m, _ := filepath.Glob(filepath.Join(root, "instances", "ghostdriver-*"))
		out = append(out, m...)
	}
	return out
}

func TestRecordIoctlsRoundTrip(t *testing.T) {
	needRoot(t)
	mountsBefore := tracefsMounts(t)
	out := filepath.Join(t.TempDir(), "capture.txt")
	done, stderr := startRecord(t, "--duration", "3s", "--output", out)

	// The workload: n ioctl(TCGETS) on /dev/null from one locked thread (ENOTTY each).
	const n = 300
	f, err := os.Open("/dev/null")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fd := int(f.Fd())
	tidCh := make(chan int)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		for i := 0; i < n; i++ {
			if _, err := unix.IoctlGetTermios(fd, unix.TCGETS); err != unix.ENOTTY {
				t.Errorf("ioctl %d: %v, want ENOTTY", i, err)
			}
		}
		tidCh <- unix.Gettid()
	}()
	tid := <-tidCh
	if code := <-done; code != 0 {
		t.Fatalf("record exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr.String(), "events (") || !strings.Contains(stderr.String(), "lost (overrun") {
		t.Errorf("no final progress line with the loss count: %s", stderr)
	}

	// Decode the capture with the decoder replay uses.
	file, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	dec := ftrace.NewDecoder()
	var enters, exits, lines int
	sc := bufio.NewScanner(file)
	sc.Buffer(make([]byte, ftrace.MaxLineLen), ftrace.MaxLineLen)
	var ev event.Event
	for sc.Scan() {
		lines++
		if !dec.Decode(sc.Bytes(), lines, &ev) || int(ev.TID) != tid {
			continue
		}
		if int(ev.PID) != os.Getpid() {
			t.Fatalf("line %d: pid %d, want %d (record-tgid not on?): %s", lines, ev.PID, os.Getpid(), sc.Text())
		}
		switch ev.Kind {
		case event.IoctlEnter:
			if ev.Cmd == unix.TCGETS && int(ev.Fd) == fd {
				enters++
			}
		case event.IoctlExit:
			if ev.Ret == -int64(syscall.ENOTTY) {
				exits++
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	st := dec.Stats()
	if st.Malformed != 0 {
		t.Errorf("%d malformed lines in the capture, e.g. %q", st.Malformed, st.MalformedSamples)
	}
	if enters != n || exits != n {
		t.Errorf("decoded %d ioctl entries and %d exits of thread %d, want %d each (%d lines, stats %+v)", enters, exits, tid, n, lines, st)
	}
	if left := ownInstances(); len(left) != 0 {
		t.Errorf("tracefs instances left behind: %v", left)
	}
	if after := tracefsMounts(t); strings.Join(after, "\n") != strings.Join(mountsBefore, "\n") {
		t.Errorf("tracefs mounts changed: before %q, after %q", mountsBefore, after)
	}
}

func TestRecordStopsOnInterrupt(t *testing.T) {
	needRoot(t)
	out := filepath.Join(t.TempDir(), "capture.txt")
	done, stderr := startRecord(t, "--output", out, "--quiet") // no --duration: until a signal
	if len(ownInstances()) != 1 {
		t.Fatalf("while recording: instances %v, want this run's one", ownInstances())
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("record exit %d after SIGINT: %s", code, stderr)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("record did not stop 10 s after SIGINT")
	}
	if left := ownInstances(); len(left) != 0 {
		t.Errorf("tracefs instance left behind after SIGINT: %v", left)
	}
	if _, err := os.Stat(out); err != nil {
		t.Errorf("no capture written: %v", err)
	}
}

// The event list is the decoder's: everything enabled is decoded, and raw_syscalls is
// never enabled next to syscalls:sys_enter_ioctl.
func TestRecordListIsTheDecoderTable(t *testing.T) {
	needRoot(t)
	var o, e bytes.Buffer
	if code := run([]string{"record", "--list"}, &o, &e); code != 0 {
		t.Fatalf("record --list: exit %d: %s", code, e.String())
	}
	var enabled []string
	for _, l := range strings.Split(strings.TrimSpace(o.String()), "\n") {
		if strings.HasPrefix(l, "#") {
			continue
		}
		sysName := strings.Fields(l)[0]
		_, name, _ := strings.Cut(sysName, ":")
		if k, known := ftrace.Known(name); !known || k == event.KindUnknown {
			t.Errorf("record enables %s, which the decoder does not decode", sysName)
		}
		enabled = append(enabled, sysName)
	}
	joined := strings.Join(enabled, " ")
	if strings.Contains(joined, "syscalls:sys_enter_ioctl") && strings.Contains(joined, "raw_syscalls:") {
		t.Errorf("both syscalls and raw_syscalls enabled: every ioctl would be recorded twice: %s", joined)
	}
}

// A driver's own event is enabled in its own system only: ivpu's tracepoint is "vpu:job",
// and a "job" event of another subsystem is not the NPU's (the text decoder, which sees no
// system in a line, would read it as one). The kernel's list is a file written here.
func TestRecordEnablesADriversEventInItsSystemOnly(t *testing.T) {
	root := t.TempDir()
	list := "gpu_scheduler:drm_sched_job\nsomesubsys:job\nvpu:job\npvr:pvr_job_create\nother:pvr_job_done\n"
	if err := os.WriteFile(filepath.Join(root, "available_events"), []byte(list), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := planEvents(root)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range p.enable {
		got = append(got, e.system+":"+e.name)
	}
	for _, want := range []string{"gpu_scheduler:drm_sched_job", "vpu:job", "pvr:pvr_job_create"} {
		if !slices.Contains(got, want) {
			t.Errorf("%s not enabled (enabled: %v)", want, got)
		}
	}
	for _, bad := range []string{"somesubsys:job", "other:pvr_job_done"} {
		if slices.Contains(got, bad) {
			t.Errorf("%s enabled: not the driver's system", bad)
		}
	}
	if !slices.Contains(p.absent, "pvr:pvr_job_done") {
		t.Errorf("pvr_job_done, present only in another system, is not reported absent as pvr:pvr_job_done: %v", p.absent)
	}
}
