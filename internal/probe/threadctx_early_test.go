//go:build linux

package probe

// The OTEP 4947 read of a thread that has not been switched out since its thread pointer
// was set. On arm64 the kernel keeps a task's TPIDR_EL0 in thread.uw.tp_value only from
// the task's switch-out (tls_thread_switch, arch/arm64/kernel/process.c) or its clone
// (CLONE_SETTLS); glibc writes the main thread's TPIDR_EL0 itself at start-up, so until
// that thread is first switched out the value the program reads is the one saved while it
// was stopped at its exec (0: exec clears TPIDR_EL0). On x86-64 glibc sets the thread
// pointer with arch_prctl(ARCH_SET_FS), which writes thread.fsbase at once.

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"go.uber.org/zap/zaptest"

	"github.com/ghostdriver/ghostdriver/internal/event"
	"github.com/ghostdriver/ghostdriver/internal/tenant"
)

// TestThreadContextBeforeFirstSwitch starts the executable build of testdata/threadctx.c
// stopped at its exec (ptrace), pushes the recipe, and lets it run with CTX_EARLY: its
// main thread publishes a record and makes 5 ioctls at once, then sleeps (a certain
// switch-out) and makes 5 more. The 5 after the sleep must carry the record exactly on
// both architectures. The 5 before it must carry it exactly on x86-64; on arm64 each
// must carry either nothing or exactly the record, never another context.
func TestThreadContextBeforeFirstSwitch(t *testing.T) {
	requireRoot(t)
	var exe string
	for _, a := range buildCtxApps(t) {
		if a.name == "executable" {
			exe = a.exe
		}
	}
	cfg := DefaultConfig()
	cfg.DRMMajors = []uint32{1}  // /dev/null
	cfg.SendJoblessIoctls = true // its ioctls queue nothing (TestThreadContextOTEP4947InKernel)
	l, rep, err := Open(cfg, zaptest.NewLogger(t))
	if err != nil {
		t.Fatalf("Open: %v\n%s", err, rep)
	}
	defer l.Close()
	sink, stop := startRun(t, l)
	defer stop()

	// The tracer is the OS thread that started the child: stay on it until the detach.
	runtime.LockOSThread()
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), "CTX_EARLY=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Ptrace: true}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		runtime.UnlockOSThread()
		t.Fatal(err)
	}
	pid := uint32(cmd.Process.Pid)
	var ws syscall.WaitStatus
	if _, err := syscall.Wait4(int(pid), &ws, 0, nil); err != nil || !ws.Stopped() {
		runtime.UnlockOSThread()
		t.Fatalf("child not stopped at its exec: %v, status %v", err, ws)
	}
	p, err := tenant.NewResolver(tenant.DefaultConfig()).Process(pid)
	if err == nil && p.ThreadContextTLS == nil {
		err = fmt.Errorf("no otel_thread_ctx_v1 recipe: %s", p.ThreadContextErr)
	}
	if err == nil {
		err = l.SetProcess(pid, p.ThreadContextTLS)
	}
	if derr := syscall.PtraceDetach(int(pid)); derr != nil && err == nil {
		err = derr
	}
	runtime.UnlockOSThread()
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	var line string
	if sc.Scan() {
		line = sc.Text()
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%v (said %q)", err, line)
	}
	var tid uint32
	var th, sp string
	if _, err := fmt.Sscanf(line, "early %d %s %s", &tid, &th, &sp); err != nil {
		t.Fatalf("%q: %v", line, err)
	}
	var trace [16]byte
	var span [8]byte
	hex.Decode(trace[:], []byte(th))
	hex.Decode(span[:], []byte(sp))

	evs := waitEvents(t, sink, func(evs []event.Event) bool {
		n := 0
		for _, e := range evs {
			if e.TID == tid && e.Kind == event.IoctlEnter {
				n++
			}
		}
		return n >= 10
	})
	var got []event.Event
	for _, e := range evs {
		if e.TID == tid && e.Kind == event.IoctlEnter {
			got = append(got, e)
		}
	}
	if len(got) != 10 {
		t.Fatalf("%d ioctl events of the main thread, want 10", len(got))
	}
	var seen []string
	none := 0
	for i, e := range got {
		exact := e.CtxTier == 1 && e.TraceID == trace && e.SpanID == span
		switch {
		case exact:
			seen = append(seen, "ctx")
		case e.CtxTier == 0:
			seen = append(seen, "none")
		default:
			seen = append(seen, fmt.Sprintf("tier%d:%x/%x", e.CtxTier, e.TraceID, e.SpanID))
		}
		switch {
		case i >= 5 && !exact:
			t.Errorf("ioctl %d, after the switch-out: tier %d trace %x span %x, want tier 1 %x %x", i, e.CtxTier, e.TraceID, e.SpanID, trace, span)
		case i < 5 && !exact && (runtime.GOARCH != "arm64" || e.CtxTier != 0):
			t.Errorf("ioctl %d, before any switch-out: tier %d trace %x span %x, want tier 1 %x %x (or, on arm64, none)",
				i, e.CtxTier, e.TraceID, e.SpanID, trace, span)
		}
		if i < 5 && e.CtxTier == 0 {
			none++
		}
	}
	t.Logf("main thread's ioctls (5 before its first switch-out, 5 after): %s", strings.Join(seen, " "))
	if runtime.GOARCH == "arm64" {
		t.Logf("arm64: %d of the 5 ioctls before the first switch-out found no context (thread.uw.tp_value not yet written)", none)
	}
}
