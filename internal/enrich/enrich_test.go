package enrich

import (
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/ghostdriver/ghostdriver/internal/assemble"
	"github.com/ghostdriver/ghostdriver/internal/attr"
	"github.com/ghostdriver/ghostdriver/internal/ctxtier"
	"github.com/ghostdriver/ghostdriver/internal/event"
	"github.com/ghostdriver/ghostdriver/internal/tenant"
	"github.com/ghostdriver/ghostdriver/internal/tenant/appctx"
)

// fakeKernel records what the enricher pushes into the kernel's process table.
type fakeKernel struct {
	mu   sync.Mutex
	rows map[uint32]*appctx.TLSAccess
}

func (k *fakeKernel) SetProcess(pid uint32, r *appctx.TLSAccess) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.rows == nil {
		k.rows = map[uint32]*appctx.TLSAccess{}
	}
	k.rows[pid] = r
	return nil
}

func (k *fakeKernel) row(pid uint32) (*appctx.TLSAccess, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	r, ok := k.rows[pid]
	return r, ok
}

const traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

// unsampled is traceparent with its sampled flag clear.
const unsampled = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00"

// sleeper starts `sleep` with env added to an empty environment.
func sleeper(t *testing.T, env ...string) uint32 {
	t.Helper()
	cmd := exec.Command("sleep", "30")
	cmd.Env = env
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	// Wait until the exec is complete: /proc/<pid>/exe changes before the new image's
	// environment is in place (env_start/env_end are set later in the ELF loader), so
	// also wait for the environment to be readable.
	for i := 0; i < 200; i++ {
		exe, _ := os.Readlink("/proc/" + itoa(cmd.Process.Pid) + "/exe")
		environ, _ := os.ReadFile("/proc/" + itoa(cmd.Process.Pid) + "/environ")
		if exe != "" && exe != mustExe(t) && (len(env) == 0 || len(environ) > 0) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	return uint32(cmd.Process.Pid)
}

func mustExe(t *testing.T) string {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

func itoa(n int) string {
	b := []byte{}
	for n > 0 || len(b) == 0 {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
	}
	return string(b)
}

func newEnricher(t *testing.T, cfg Config, k Kernel) *Enricher {
	e := New(cfg, tenant.NewResolver(tenant.DefaultConfig()), k, nil)
	t.Cleanup(e.Close)
	return e
}

// firstSight is what the live source delivers for a process's first submit ioctl.
func firstSight(e *Enricher, pid uint32) {
	e.Observe([]event.Event{{Kind: event.IoctlEnter, PID: pid, TID: pid}})
}

func waitLoaded(t *testing.T, e *Enricher, pid uint32) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		e.mu.Lock()
		p := e.procs[pid]
		done := p != nil && p.p != nil
		e.mu.Unlock()
		if done {
			return
		}
		time.Sleep(2 * time.Millisecond)
	}
	t.Fatalf("pid %d never loaded", pid)
}

func lookup(attrs []attr.Attribute, k string) string {
	v, _ := attr.Lookup(attrs, k)
	return v.AsString()
}

// A process with TRACEPARENT in its environment: its jobs are parented to that span and
// carry its trace flags (sampled or not); the resource comes from its OTEL_* variables.
func TestTraceparentProcess(t *testing.T) {
	for _, c := range []struct {
		name, traceparent string
		flags             uint8
	}{{"sampled", traceparent, 0x01}, {"unsampled", unsampled, 0x00}} {
		t.Run(c.name, func(t *testing.T) { traceparentProcess(t, c.traceparent, c.flags) })
	}
}

func traceparentProcess(t *testing.T, traceparent string, flags uint8) {
	k := &fakeKernel{}
	e := newEnricher(t, Config{}, k)
	pid := sleeper(t, "TRACEPARENT="+traceparent, "OTEL_SERVICE_NAME=batch-train", "OTEL_RESOURCE_ATTRIBUTES=deployment.environment=ci")
	firstSight(e, pid)
	waitLoaded(t, e, pid)
	j := &assemble.Job{PID: pid, TID: pid + 1, TraceFlags: ^flags} // no tier: the flags are not kept
	e.Enrich(j)
	tp, _ := appctx.ParseTraceParent(traceparent)
	if j.CtxTier != ctxtier.Traceparent || j.TraceID != tp.TraceID || j.SpanID != tp.SpanID || j.TraceFlags != flags {
		t.Errorf("tier %d trace %x span %x flags %02x, want flags %02x", j.CtxTier, j.TraceID, j.SpanID, j.TraceFlags, flags)
	}
	for k, want := range map[string]string{
		"service.name": "batch-train", "deployment.environment": "ci", "process.executable.name": "sleep",
		"process.pid": itoa(int(pid)), "ghostdriver.resource.source": "env",
	} {
		if got := lookup(j.Resource, k); got != want {
			t.Errorf("resource %s = %q, want %q", k, got, want)
		}
	}
	if r, ok := k.row(pid); !ok || r != nil {
		t.Errorf("kernel row %v %v: want the process known without a recipe", r, ok)
	}
}

func TestProcessWithoutContext(t *testing.T) {
	e := newEnricher(t, Config{}, nil)
	pid := sleeper(t)
	firstSight(e, pid)
	waitLoaded(t, e, pid)
	j := &assemble.Job{PID: pid, TID: pid}
	e.Enrich(j)
	if j.CtxTier != ctxtier.None || j.TraceID != [16]byte{} {
		t.Errorf("tier %d", j.CtxTier)
	}
	if lookup(j.Resource, "service.name") != "sleep" || lookup(j.Resource, "ghostdriver.resource.source") != "executable" {
		t.Errorf("resource %v", j.Resource)
	}
}

// The configured order decides between a kernel tier and TRACEPARENT, and the trace flags
// are the chosen tier's (the kernel's context here is not sampled, TRACEPARENT's is); a
// tier that is not listed never parents a span.
func TestTierOrder(t *testing.T) {
	pid := sleeper(t, "TRACEPARENT="+traceparent)
	kernelCtx := func() *assemble.Job {
		return &assemble.Job{PID: pid, TraceID: [16]byte{9}, SpanID: [8]byte{9}, CtxTier: ctxtier.OTEP4947, TraceFlags: 0x00}
	}
	for _, c := range []struct {
		name  string
		tiers []string
		job   *assemble.Job
		want  uint8
		flags uint8
	}{
		{"kernel tier first", DefaultTiers, kernelCtx(), ctxtier.OTEP4947, 0x00},
		{"traceparent first", []string{ctxtier.NameTraceparent, ctxtier.NameOTEP4947}, kernelCtx(), ctxtier.Traceparent, 0x01},
		{"no kernel context", DefaultTiers, &assemble.Job{PID: pid}, ctxtier.Traceparent, 0x01},
		{"traceparent off", []string{ctxtier.NameOTEP4947, ctxtier.NameOBI}, &assemble.Job{PID: pid}, ctxtier.None, 0},
		{"all off", []string{}, kernelCtx(), ctxtier.None, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnricher(t, Config{Tiers: c.tiers}, nil)
			firstSight(e, pid)
			waitLoaded(t, e, pid)
			e.Enrich(c.job)
			if c.job.CtxTier != c.want || c.job.TraceFlags != c.flags {
				t.Errorf("tier %d flags %02x, want %d %02x", c.job.CtxTier, c.job.TraceFlags, c.want, c.flags)
			}
			if c.want == ctxtier.None && c.job.TraceID != [16]byte{} {
				t.Error("context kept without a tier")
			}
		})
	}
	if KernelTiers([]string{ctxtier.NameTraceparent, ctxtier.NameOBI, ctxtier.NameOTEP4947})[0] != ctxtier.NameOBI {
		t.Error("kernel tiers lost their order")
	}
	if ValidateTiers([]string{"otep4947", "otep4947"}) == nil || ValidateTiers([]string{"env"}) == nil {
		t.Error("bad tier lists accepted")
	}
}

// Jobs finish after their process exited: the snapshot stays for Linger.
func TestExitKeepsSnapshotForJobsInFlight(t *testing.T) {
	e := newEnricher(t, Config{}, nil)
	pid := sleeper(t, "OTEL_SERVICE_NAME=short-lived")
	firstSight(e, pid)
	waitLoaded(t, e, pid)
	e.Observe([]event.Event{{Kind: event.ProcessExit, PID: pid}})
	j := &assemble.Job{PID: pid}
	e.Enrich(j)
	if lookup(j.Resource, "service.name") != "short-lived" {
		t.Errorf("resource after exit: %v", j.Resource)
	}
}

// A job of a process never seen at an ioctl waits at most Config.Wait.
func TestEnrichNeverWaitsLong(t *testing.T) {
	e := newEnricher(t, Config{Wait: 5 * time.Millisecond}, nil)
	e.mu.Lock()
	e.procs[4242424] = &proc{ready: make(chan struct{}), queued: true} // a load that never ends
	e.mu.Unlock()
	start := time.Now()
	j := &assemble.Job{PID: 4242424}
	e.Enrich(j)
	if d := time.Since(start); d > 500*time.Millisecond {
		t.Errorf("Enrich blocked %v", d)
	}
	if e.Stats().WaitedOut != 1 || j.Resource != nil {
		t.Errorf("stats %+v resource %v", e.Stats(), j.Resource)
	}
}

// The wait is a budget per process, not per job: a read that takes long (a process
// mapping hundreds of large libraries) must not stall every job of that process.
func TestEnrichWaitBudgetIsPerProcess(t *testing.T) {
	const wait = 100 * time.Millisecond
	e := newEnricher(t, Config{Wait: wait}, nil)
	e.mu.Lock()
	e.procs[4242425] = &proc{ready: make(chan struct{}), queued: true} // a load that never ends
	e.mu.Unlock()
	start := time.Now()
	for range 20 {
		e.Enrich(&assemble.Job{PID: 4242425})
	}
	d := time.Since(start)
	if d < wait*9/10 || d > 10*wait {
		t.Errorf("20 jobs of a process still loading took %v; want about one budget of %v in all", d, wait)
	}
	if got := e.Stats().WaitedOut; got != 20 {
		t.Errorf("WaitedOut = %d, want 20", got)
	}
	// When the read lands, jobs get the process at once.
	e.mu.Lock()
	p := e.procs[4242425]
	p.p, p.resource, p.queued = &tenant.Process{PID: 4242425}, []attr.Attribute{attr.String("service.name", "late")}, false
	close(p.ready)
	e.mu.Unlock()
	j := &assemble.Job{PID: 4242425}
	e.Enrich(j)
	if lookup(j.Resource, "service.name") != "late" {
		t.Errorf("resource after the read landed: %v", j.Resource)
	}
}

// Cost of a first sight on this host (the worker's work, off the hot path).
func BenchmarkFirstSight(b *testing.B) {
	cmd := exec.Command("sleep", "30")
	cmd.Env = []string{"TRACEPARENT=" + traceparent}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	time.Sleep(50 * time.Millisecond)
	r := tenant.NewResolver(tenant.DefaultConfig())
	pid := uint32(cmd.Process.Pid)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r.Forget(pid)
		if _, err := r.Process(pid); err != nil {
			b.Fatal(err)
		}
	}
}

// The debug line that says a process's row is in the kernel table comes after the row is
// there, once per read, with the pid: the virtual GPU rig's workload waits for it instead of
// sleeping (testdata/vgpu/guest/init).
func TestPushIsLoggedAfterTheRowIsInTheKernel(t *testing.T) {
	const msg = "process pushed into the kernel table"
	k := &fakeKernel{}
	var pid atomic.Uint32
	var rowAtLog atomic.Bool
	core, logs := observer.New(zap.DebugLevel)
	log := zap.New(core, zap.Hooks(func(en zapcore.Entry) error {
		if en.Message == msg {
			_, ok := k.row(pid.Load())
			rowAtLog.Store(ok)
		}
		return nil
	}))
	e := New(Config{}, tenant.NewResolver(tenant.DefaultConfig()), k, log)
	t.Cleanup(e.Close)
	pid.Store(sleeper(t, "TRACEPARENT="+traceparent))
	firstSight(e, pid.Load())
	waitLoaded(t, e, pid.Load())
	deadline := time.Now().Add(5 * time.Second)
	for logs.FilterMessage(msg).Len() == 0 && time.Now().Before(deadline) {
		time.Sleep(2 * time.Millisecond)
	}
	got := logs.FilterMessage(msg).All()
	if len(got) != 1 {
		t.Fatalf("%d push lines, want 1: %v", len(got), logs.All())
	}
	if f := got[0].ContextMap(); f["pid"] != pid.Load() || f["thread_context"] != false {
		t.Errorf("push line fields %v, want pid %d without thread context", f, pid.Load())
	}
	if !rowAtLog.Load() {
		t.Error("the line was logged before the kernel table had the process's row")
	}
}
