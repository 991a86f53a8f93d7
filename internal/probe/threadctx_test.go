//go:build linux

package probe

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"go.uber.org/zap/zaptest"
	"golang.org/x/sys/unix"

	"github.com/ghostdriver/ghostdriver/internal/event"
	"github.com/ghostdriver/ghostdriver/internal/tenant"
	"github.com/ghostdriver/ghostdriver/internal/tenant/appctx"
	"github.com/ghostdriver/ghostdriver/internal/testreq"
)

// The application-context tiers read in the kernel, on this host: the live source's
// device-major filter is pointed at major 1 (/dev/null), so ioctl(TCGETS) on /dev/null
// stands in for a DRM submit and everything after the filter is the production path.

// ctxApp is one build of testdata/threadctx.c: where otel_thread_ctx_v1 lives.
type ctxApp struct {
	name string
	exe  string
	env  []string
	via  string // the TLS recipe tenant must find (appctx.TLSAccess.Via prefix)
}

func requireGCC(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("gcc"); err != nil {
		testreq.Skip(t, testreq.GCC, "needs gcc to build the test application (apt-get install gcc)")
	}
}

// threadCtxAppsEnv names a directory of the test applications built beforehand
// (testdata/build_threadctx.sh with CTX_CC set: the arm64 guest has no compiler).
const threadCtxAppsEnv = "GHOSTDRIVER_THREADCTX_APPS"

// buildCtxApps builds (testdata/build_threadctx.sh) every TLS shape that occurs on
// x86-64 and arm64: the executable's own static TLS; a library linked at start-up with
// TLS descriptors and with initial-exec (a tp-relative GOT slot); a dlopen()ed library
// with general-dynamic (a module id: through the DTV) and with TLS descriptors (resolved
// by dlopen). via is the relocation tenant must name, per architecture.
func buildCtxApps(t *testing.T) []ctxApp {
	dir := os.Getenv(threadCtxAppsEnv)
	if dir == "" {
		requireGCC(t)
		dir = t.TempDir()
		if out, err := exec.Command(filepath.Join("testdata", "build_threadctx.sh"), dir).CombinedOutput(); err != nil {
			t.Fatalf("building testdata/threadctx.c: %v\n%s", err, out)
		}
	}
	desc, ie, gd := "R_X86_64_TLSDESC", "R_X86_64_TPOFF64", "R_X86_64_DTPMOD64"
	if runtime.GOARCH == "arm64" {
		desc, ie, gd = "R_AARCH64_TLSDESC", "R_AARCH64_TLS_TPREL64", "R_AARCH64_TLS_DTPMOD64"
	}
	p := func(n string) string { return filepath.Join(dir, n) }
	return []ctxApp{
		{name: "executable", exe: p("exe"), via: "executable"},
		{name: "tlsdesc_startup", exe: p("app_desc"), via: desc},
		{name: "initial_exec_lib", exe: p("app_ie"), via: ie},
		{name: "dlopen_general_dynamic", exe: p("app_dlopen"), env: []string{"CTX_DLOPEN=" + p("libctx_gd.so")}, via: gd},
		{name: "dlopen_tlsdesc", exe: p("app_dlopen"), env: []string{"CTX_DLOPEN=" + p("libctx_desc.so")}, via: desc},
	}
}

// ctxThread is what a thread of the application says it published.
type ctxThread struct {
	tid   uint32
	trace [16]byte
	span  [8]byte
	valid bool
	flags uint8 // the record's W3C trace flags
}

// runCtxApp starts app, waits for its threads to publish, lets ready (the user-space
// side: resolve and push the recipe) run, then releases the threads and collects what
// each published.
func runCtxApp(t *testing.T, app ctxApp, ready func(pid uint32)) (pid uint32, threads []ctxThread) {
	t.Helper()
	cmd := exec.Command(app.exe)
	cmd.Env = append(os.Environ(), app.env...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	if !sc.Scan() {
		cmd.Wait()
		t.Fatalf("%s: no ready line; stderr: %s", app.name, stderr.String())
	}
	var p int
	if _, err := fmt.Sscanf(sc.Text(), "ready %d", &p); err != nil {
		t.Fatalf("%s: %q: %v", app.name, sc.Text(), err)
	}
	pid = uint32(p)
	ready(pid)
	io.WriteString(stdin, "go\n")
	for sc.Scan() {
		var tid uint32
		var th, sp string
		var valid int
		var flags uint8
		if _, err := fmt.Sscanf(sc.Text(), "thread %d %s %s %d %d", &tid, &th, &sp, &valid, &flags); err != nil {
			t.Fatalf("%s: %q: %v", app.name, sc.Text(), err)
		}
		c := ctxThread{tid: tid, valid: valid == 1, flags: flags}
		hex.Decode(c.trace[:], []byte(th))
		hex.Decode(c.span[:], []byte(sp))
		threads = append(threads, c)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%s: %v; stderr: %s", app.name, err, stderr.String())
	}
	return pid, threads
}

// waitEvents polls the sink until cond holds or 5 s pass.
func waitEvents(t *testing.T, sink *collectSink, cond func([]event.Event) bool) []event.Event {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		evs, _ := sink.snapshot()
		if cond(evs) || time.Now().After(deadline) {
			return evs
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestThreadContextOTEP4947InKernel(t *testing.T) {
	requireRoot(t)
	apps := buildCtxApps(t)
	cfg := DefaultConfig()
	cfg.DRMMajors = []uint32{1} // /dev/null
	// The apps' ioctls queue nothing, so the entries of a known process would be counted,
	// not sent; the context is read by the same code either way (ioctl_slot.h; the flush
	// carries it: TestDeferredIoctlEntryGoesOutBeforeTheThreadsFirstRecord).
	cfg.SendJoblessIoctls = true
	l, rep, err := Open(cfg, zaptest.NewLogger(t))
	if err != nil {
		t.Fatalf("Open: %v\n%s", err, rep)
	}
	defer l.Close()
	if !rep.StageAttached(StageProcess) {
		t.Fatalf("process lifecycle hooks not attached:\n%s", rep)
	}
	sink, stop := startRun(t, l)
	defer stop()

	res := tenant.NewResolver(tenant.DefaultConfig())
	for _, app := range apps {
		t.Run(app.name, func(t *testing.T) {
			pid, threads := runCtxApp(t, app, func(pid uint32) {
				p, err := res.Process(pid)
				if err != nil {
					t.Fatal(err)
				}
				if p.ThreadContextTLS == nil {
					t.Fatalf("tenant found no otel_thread_ctx_v1 recipe: %s", p.ThreadContextErr)
				}
				if !strings.HasPrefix(p.ThreadContextTLS.Via, app.via) {
					t.Errorf("recipe via %q (%s), want %s", p.ThreadContextTLS.Via, p.ThreadContextTLS.Kind, app.via)
				}
				t.Logf("recipe: %+v", *p.ThreadContextTLS)
				if err := l.SetProcess(pid, p.ThreadContextTLS); err != nil {
					t.Fatal(err)
				}
			})
			// 3 workers and the main thread (the last line), which publishes after the
			// workers are done and sleeps before its ioctls (testdata/threadctx.c). Of the
			// valid records, one is of a span not sampled (trace flags 0x00).
			if len(threads) != 4 || threads[3].tid != pid {
				t.Fatalf("thread lines %+v, want 3 workers' and then the main thread's (tid %d)", threads, pid)
			}
			published := map[uint8]int{}
			for _, th := range threads {
				if th.valid {
					published[th.flags]++
				}
			}
			if published[0x00] != 1 || published[0x01] != 2 {
				t.Fatalf("the app published trace flags %v (flags: valid records), want one 00 and two 01", published)
			}
			evs := waitEvents(t, sink, func(evs []event.Event) bool {
				for _, e := range evs {
					if e.Kind == event.ProcessExit && e.PID == pid {
						return true
					}
				}
				return false
			})
			byTID := map[uint32][]event.Event{}
			exited := false
			for _, e := range evs {
				if e.PID != pid {
					continue
				}
				switch e.Kind {
				case event.IoctlEnter:
					byTID[e.TID] = append(byTID[e.TID], e)
				case event.ProcessExit:
					exited = true
				}
			}
			// The main thread's first ioctl came before the recipe was pushed: no context.
			if m := byTID[pid]; len(m) == 0 {
				t.Error("no ioctl event of the main thread")
			} else {
				if m[0].CtxTier != 0 {
					t.Errorf("main thread's ioctl before the recipe has tier %d", m[0].CtxTier)
				}
				byTID[pid] = m[1:]
			}
			if !exited {
				t.Error("no process_exit record for a process in the recipe table")
			}
			for _, th := range threads {
				got := byTID[th.tid]
				if len(got) != 5 {
					t.Errorf("thread %d: %d ioctl events, want 5", th.tid, len(got))
				}
				for _, e := range got {
					switch {
					case !th.valid && e.CtxTier != 0:
						t.Errorf("thread %d: record not valid, event has tier %d", th.tid, e.CtxTier)
					case th.valid && (e.CtxTier != 1 || e.TraceID != th.trace || e.SpanID != th.span || e.TraceFlags != th.flags):
						t.Errorf("thread %d: event tier %d trace %x span %x flags %02x, want tier 1 trace %x span %x flags %02x",
							th.tid, e.CtxTier, e.TraceID, e.SpanID, e.TraceFlags, th.trace, th.span, th.flags)
					}
				}
			}
			var v syscallsTlsRecipe
			if err := l.objs.procsMap().Lookup(pid, &v); err == nil {
				t.Error("the recipe outlived the process")
			}
		})
	}
}

// exec drops the recipe in the kernel at once and reports the process.
func TestProcessExecForgetsRecipe(t *testing.T) {
	requireRoot(t)
	cfg := DefaultConfig()
	cfg.DRMMajors = []uint32{1}
	l, rep, err := Open(cfg, zaptest.NewLogger(t))
	if err != nil {
		t.Fatalf("Open: %v\n%s", err, rep)
	}
	defer l.Close()
	sink, stop := startRun(t, l)
	defer stop()

	cmd := exec.Command("sh", "-c", "read x; exec sleep 0.2")
	stdin, _ := cmd.StdinPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := uint32(cmd.Process.Pid)
	if err := l.SetProcess(pid, &appctx.TLSAccess{Kind: appctx.TLSStatic, TPOffset: -8}); err != nil {
		t.Fatal(err)
	}
	io.WriteString(stdin, "\n")
	evs := waitEvents(t, sink, func(evs []event.Event) bool {
		for _, e := range evs {
			if e.Kind == event.ProcessExec && e.PID == pid {
				return true
			}
		}
		return false
	})
	cmd.Wait()
	n := 0
	for _, e := range evs {
		if e.PID == pid && (e.Kind == event.ProcessExec || e.Kind == event.ProcessExit) {
			n++
			if e.Kind != event.ProcessExec {
				t.Errorf("first lifecycle record is %v, want process_exec", e.Kind)
			}
		}
	}
	if n != 1 {
		t.Errorf("%d lifecycle records for the process, want exactly 1 (exec; the exit after it is of a process no longer known)", n)
	}
}

// mountBPFFS mounts a bpffs of the test's own (this host has none at /sys/fs/bpf).
func mountBPFFS(t *testing.T) string {
	dir := t.TempDir()
	if err := unix.Mount("bpf", dir, "bpf", 0, ""); err != nil {
		testreq.Skip(t, testreq.BPFFS, "mounting a bpffs: "+err.Error())
	}
	t.Cleanup(func() { unix.Unmount(dir, 0) })
	return dir
}

func TestThreadContextOBIPinnedMap(t *testing.T) {
	requireRoot(t)
	dir := mountBPFFS(t)
	pin := filepath.Join(dir, "traces_ctx_v1")
	// OBI's shape: LRU hash, u64 pid_tgid → {u8 trace_id[16]; u8 span_id[8]}, 16384 entries.
	obi, err := ebpf.NewMap(&ebpf.MapSpec{Name: "traces_ctx_v1", Type: ebpf.LRUHash, KeySize: 8, ValueSize: 24, MaxEntries: 16384})
	if err != nil {
		t.Fatal(err)
	}
	defer obi.Close()
	if err := obi.Pin(pin); err != nil {
		t.Fatal(err)
	}

	cfg := DefaultConfig()
	cfg.DRMMajors = []uint32{1}
	cfg.OBIMapPath = pin
	l, rep, err := Open(cfg, zaptest.NewLogger(t))
	if err != nil {
		t.Fatalf("Open: %v\n%s", err, rep)
	}
	defer l.Close()
	if !rep.StageAttached(StageAppContext) {
		t.Fatalf("OBI map not used:\n%s", rep)
	}
	sink, stop := startRun(t, l)
	defer stop()

	f, err := os.Open("/dev/null")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var val [24]byte
	for i := range val {
		val[i] = byte(0x40 + i)
	}
	type result struct{ tid, marked uint32 }
	done := make(chan result)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		tid := uint32(unix.Gettid())
		key := uint64(os.Getpid())<<32 | uint64(tid)
		_, _, _ = syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), uintptr(unix.TCGETS), 0) // before OBI has an entry
		if err := obi.Update(key, val, ebpf.UpdateAny); err != nil {
			t.Error(err)
		}
		for i := 0; i < 3; i++ {
			_, _, _ = syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), uintptr(unix.TCGETS), 0)
		}
		done <- result{tid: tid}
	}()
	r := <-done
	evs := waitEvents(t, sink, func(evs []event.Event) bool {
		n := 0
		for _, e := range evs {
			if e.TID == r.tid && e.Kind == event.IoctlEnter {
				n++
			}
		}
		return n >= 4
	})
	var tiers []string
	for _, e := range evs {
		if e.TID != r.tid || e.Kind != event.IoctlEnter {
			continue
		}
		tiers = append(tiers, strconv.Itoa(int(e.CtxTier)))
		if e.CtxTier == 2 && (string(e.TraceID[:]) != string(val[:16]) || string(e.SpanID[:]) != string(val[16:])) {
			t.Errorf("obi tier with trace %x span %x, want %x", e.TraceID, e.SpanID, val)
		}
		// OBI's value has no trace flags; what it publishes is a span it records: sampled.
		if e.CtxTier == 2 && e.TraceFlags != 0x01 {
			t.Errorf("obi tier with trace flags %02x, want 01 (sampled)", e.TraceFlags)
		}
	}
	if got := strings.Join(tiers, ","); got != "0,2,2,2" {
		t.Errorf("tiers of the thread's ioctls: %s, want 0,2,2,2 (none before OBI's entry, obi after)", got)
	}
}

// The recipe user space writes has the layout the program reads.
func TestKernelRecipeLayout(t *testing.T) {
	checkSameLayout(t, reflect.TypeOf(syscallsTlsRecipe{}), reflect.TypeOf(appctx.KernelRecipe{}))
}

// checkSameLayout compares size and the offsets of the named fields, in order.
func checkSameLayout(t *testing.T, c, g reflect.Type) {
	t.Helper()
	if c.Size() != g.Size() {
		t.Fatalf("%v is %d bytes, %v %d", c, c.Size(), g, g.Size())
	}
	var co, gofs []uintptr
	for i := 0; i < c.NumField(); i++ {
		if f := c.Field(i); f.Name != "_" && f.Name != "Pad" {
			co = append(co, f.Offset)
		}
	}
	for i := 0; i < g.NumField(); i++ {
		if f := g.Field(i); f.Name != "_" {
			gofs = append(gofs, f.Offset)
		}
	}
	if !reflect.DeepEqual(co, gofs) {
		t.Errorf("field offsets: %v has %v, %v has %v", c, co, g, gofs)
	}
}
