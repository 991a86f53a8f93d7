//go:build linux

package cuda

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ghostdriver/ghostdriver/internal/ctxtier"
	"github.com/ghostdriver/ghostdriver/internal/cuda/cudatest"
	"github.com/ghostdriver/ghostdriver/internal/tenant"
	"github.com/ghostdriver/ghostdriver/internal/tenant/appctx"
)

// buildStubs compiles the stub driver, the stub runtime and the two-thread workload
// (testdata/stub/build.sh) into dir and returns the workload's path (cudatest, shared
// with the other packages' stub tests).
func buildStubs(t *testing.T, dir string) string {
	t.Helper()
	return cudatest.BuildIn(t, dir).App
}

func needRootAndGCC(t *testing.T) {
	t.Helper()
	cudatest.Need(t)
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	cudatest.WaitFor(t, what, cond)
}

// runSource runs src into sink on its own goroutine; stop cancels it and waits.
func runSource(t *testing.T, src *Source, sink Sink) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := src.Run(ctx, sink); err != nil {
			t.Error(err)
		}
	}()
	return func() { cancel(); <-done }
}

// goneSink is the assembler, fed only the workload's calls (other tests' workloads may
// run at the same time, and the uprobes are system-wide), plus a record of the process
// lifecycle reports.
type goneSink struct {
	*Assembler
	pid   atomic.Uint32
	keep  []Call
	mu    sync.Mutex
	gone  map[uint32]bool   // pid → exec
	byAPI map[string]uint64 // the workload's calls by API name (Stats().ByAPI counts every process's)
	top   int               // the workload's top-level calls (depth 0) read
}

func (g *goneSink) Calls(batch []Call) {
	g.keep = g.keep[:0]
	for _, c := range batch {
		if c.PID == g.pid.Load() {
			g.keep = append(g.keep, c)
		}
	}
	g.mu.Lock()
	if g.byAPI == nil {
		g.byAPI = map[string]uint64{}
	}
	for _, c := range g.keep {
		g.byAPI[apis[c.API].Name]++
		if c.Depth == 0 {
			g.top++
		}
	}
	g.mu.Unlock()
	g.Assembler.Calls(g.keep)
}

// calls is how many calls of api the workload made that were read.
func (g *goneSink) calls(api string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return int(g.byAPI[api])
}

func (g *goneSink) ProcessGone(pid uint32, exec bool) {
	g.mu.Lock()
	g.gone[pid] = exec
	g.mu.Unlock()
	g.Assembler.ProcessGone(pid, exec)
}

func (g *goneSink) exited(pid uint32) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	exec, ok := g.gone[pid]
	return ok && !exec
}

// TestStubEntryPointTable: the runtime stub reaches the driver only through pointers
// from cuGetProcAddress_v2, two of which are hidden functions. The source finds the
// libraries in /proc/<pid>/maps, learns the entry points from the cuGetProcAddress
// returns, and then counts every launch and sync of two threads exactly. The workload's
// threads publish OTEP 4947 thread context: once the process's recipe is pushed, every
// submission carries the span its thread had when the work was enqueued, with that span's
// trace flags (every other iteration's span is not sampled), read in the kernel at the
// call's entry; the process's exit is reported.
func TestStubEntryPointTable(t *testing.T) {
	needRootAndGCC(t)
	const iters = 50
	app := buildStubs(t, t.TempDir())

	src, rep, err := Open(Config{RescanInterval: 20 * time.Millisecond}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	t.Logf("report at open: %s", rep.Summary())

	var subs []*Submission
	// Each worker's last call is a cudaMemcpy on the legacy stream, which the main thread's
	// cudaDeviceSynchronize covers after joining both workers. On the arm64 TCG guest the
	// other worker once finished more than FlushAfter's default 2 s later, and that copy went
	// out as its own unsynchronized stream-0 submission: the structure checked below assumes
	// no work is closed by time, so the test lifts it.
	asm := NewAssembler(AssemblerConfig{FlushAfter: int64(10 * time.Minute)}, func(s *Submission) { subs = append(subs, s) })
	sink := &goneSink{Assembler: asm, gone: map[uint32]bool{}}
	stop := runSource(t, src, sink)

	cmd := exec.Command(app, "50")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	rd := bufio.NewReader(stdout)
	expect := func(prefix string) string {
		line, err := rd.ReadString('\n')
		if err != nil || !strings.HasPrefix(line, prefix) {
			t.Fatalf("workload said %q (%v), want %q", line, err, prefix)
		}
		return strings.TrimSpace(line)
	}
	expect("mapped")
	pid := uint32(cmd.Process.Pid)
	sink.pid.Store(pid)
	p, err := tenant.NewResolver(tenant.DefaultConfig()).Process(pid)
	if err != nil || p.ThreadContextTLS == nil {
		t.Fatalf("no otel_thread_ctx_v1 recipe for the workload: %v %+v", err, p)
	}
	if err := src.SetProcess(pid, p.ThreadContextTLS); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "both stub libraries hooked", func() bool { return src.Stats().Libraries >= 2 })
	io.WriteString(stdin, "\n")
	expect("ready")
	// cuLaunchKernel and cuMemcpyHtoD resolve to hidden code: two learned hooks.
	waitFor(t, "entry points hooked", func() bool { return src.Stats().EntryPointHooks >= 2 })
	io.WriteString(stdin, "\n")
	truth := expect("counts")
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the workload's exit reported", func() bool { return sink.exited(pid) })
	stop()
	asm.Flush()

	st := src.Stats()
	t.Logf("ground truth: %s", truth)
	t.Logf("stats: calls=%d procaddr=%d entry_point_hooks=%d at_export=%d refused=%d maps_truncated=%d lost=%d by_api=%v",
		st.Calls, st.ProcAddress, st.EntryPointHooks, st.EntryPointAtExport, st.EntryPointsRefused, st.MapsTruncated, st.Lost, st.ByAPI)
	for _, e := range src.Report().Entries {
		t.Logf("report: %-12s %-11s %s %s", e.Stage, e.Status, e.Hook, e.Reason)
	}
	if want := "counts table_launch=302 export_launch=100 stream_sync=100 ctx_sync=1 event_sync=2 htod_table=2"; truth != want {
		t.Fatalf("the stubs counted %q, want %q", truth, want)
	}

	const threads = 2
	wantLaunches := threads * (iters*4 + 1)
	if got := asm.Counts[ClassLaunch]; got != uint64(wantLaunches) {
		t.Errorf("top-level launches = %d, want %d", got, wantLaunches)
	}
	// The workload's own calls: this source hooks every process mapping a CUDA library, and
	// other tests' stub workloads may run meanwhile (seen: 356 cudaLaunchKernel for 302).
	if got := sink.calls("cudaLaunchKernel"); got != threads*(iters*3+1) {
		t.Errorf("cudaLaunchKernel = %d, want %d", got, threads*(iters*3+1))
	}
	// The runtime's launches reach the driver at the hidden entry point: one nested
	// launch per runtime launch, none at the exported cuLaunchKernel.
	if got := asm.NestedCounts[ClassLaunch]; got != threads*(iters*3+1) {
		t.Errorf("nested (entry-point) launches = %d, want %d", got, threads*(iters*3+1))
	}
	if got := sink.calls("cuLaunchKernel"); got != threads*(iters*3+1)+threads*iters {
		t.Errorf("cuLaunchKernel (export + entry point) = %d, want %d", got, threads*(iters*3+1)+threads*iters)
	}
	wantSyncs := threads*(iters+1) + 1
	if got := asm.Counts[ClassSync]; got != uint64(wantSyncs) {
		t.Errorf("top-level syncs = %d, want %d", got, wantSyncs)
	}
	if got := asm.NestedCounts[ClassSync]; got != uint64(wantSyncs) {
		t.Errorf("nested driver syncs = %d, want %d", got, wantSyncs)
	}

	var synced, launches int
	iteration := map[uint64]int{} // stream → stream submissions seen
	for _, s := range subs {
		launches += s.Launches
		if s.Outcome == Synced {
			synced++
		}
		switch s.Scope {
		case ScopeStream:
			if s.Stream != 0x5000 && s.Stream != 0x5001 {
				t.Errorf("stream sync of stream %#x", s.Stream)
			}
			if s.Launches != 4 || len(s.Ops) != 4 {
				t.Errorf("stream submission: %d launches, %d ops, want 4 and 4", s.Launches, len(s.Ops))
			}
			for _, o := range s.Ops {
				if o.Stream != s.Stream {
					t.Errorf("%s on stream %#x in a submission of stream %#x", o.Name(), o.Stream, s.Stream)
				}
				if o.Name() == "cudaLaunchKernel" {
					if o.Handle < 0xf000 || o.Handle > 0xf002 {
						t.Errorf("cudaLaunchKernel handle %#x", o.Handle)
					}
					if len(o.Inner) != 1 || !o.Inner[0].EntryPoint || o.Inner[0].Stream != s.Stream {
						t.Errorf("cudaLaunchKernel inner calls %+v", o.Inner)
					}
				}
				if o.End-o.Start < 2000 {
					t.Errorf("%s took %d ns, the stub spins 2 µs", o.Name(), o.End-o.Start)
				}
			}
			if s.Sync == nil {
				t.Errorf("stream submission of stream %#x without its sync", s.Stream)
				continue
			}
			if d := s.Sync.End - s.Sync.Start; d < 1e6 {
				t.Errorf("stream sync wait %d ns, the stub spins 1 ms", d)
			}
			// The thread's span while it enqueued this iteration's work.
			th := byte(s.Stream-0x5000) + 1
			iteration[s.Stream]++
			wantTrace := [16]byte{0x7e, 0x57, 15: th}
			wantSpan := [8]byte{6: th, 7: byte(iteration[s.Stream])}
			wantFlags := uint8(iteration[s.Stream] & 1) // testdata/stub/app.c set_span
			if s.CtxTier != ctxtier.OTEP4947 || s.TraceID != wantTrace || s.SpanID != wantSpan || s.TraceFlags != wantFlags {
				t.Errorf("stream %#x submission %d: context tier %d trace %x span %x flags %02x, want 1 %x %x %02x",
					s.Stream, iteration[s.Stream], s.CtxTier, s.TraceID, s.SpanID, s.TraceFlags, wantTrace, wantSpan, wantFlags)
			}
			for _, o := range s.Ops {
				if o.CtxTier != ctxtier.OTEP4947 || o.SpanID != wantSpan || o.TraceFlags != wantFlags {
					t.Errorf("%s: context tier %d span %x flags %02x, want %x %02x", o.Name(), o.CtxTier, o.SpanID, o.TraceFlags, wantSpan, wantFlags)
				}
				for _, in := range o.Inner {
					if in.CtxTier != 0 {
						t.Errorf("nested %s read the context (tier %d): only top-level calls pay", in.Name(), in.CtxTier)
					}
				}
			}
		case ScopeEvent:
			if s.Launches != 1 || s.Stream < 0x5000 {
				t.Errorf("event submission: %d launches on %#x", s.Launches, s.Stream)
			}
			if s.CtxTier != ctxtier.OTEP4947 || s.SpanID[7] != 0xff || s.TraceFlags != 0x01 {
				t.Errorf("event submission: context tier %d span %x flags %02x, want the thread's after-loop span, sampled",
					s.CtxTier, s.SpanID, s.TraceFlags)
			}
		case ScopeContext:
			if d := s.Sync.End - s.Sync.Start; d < 3e6 {
				t.Errorf("device sync wait %d ns, the stub spins 3 ms", d)
			}
			for _, o := range s.Ops {
				if o.Name() == "cudaMemcpy" && (o.Bytes != 4096 || o.Handle != 1 || len(o.Inner) != 1) {
					t.Errorf("cudaMemcpy bytes=%d kind=%d inner=%d", o.Bytes, o.Handle, len(o.Inner))
				}
			}
		}
	}
	if synced != wantSyncs {
		t.Errorf("synced submissions = %d, want %d", synced, wantSyncs)
	}
	if launches != wantLaunches {
		t.Errorf("launches in submissions = %d, want %d", launches, wantLaunches)
	}
	if st.Lost != 0 {
		t.Errorf("lost %d records", st.Lost)
	}
	if st.Recipes != 1 || st.WithContext == 0 {
		t.Errorf("recipes pushed %d, calls with context %d", st.Recipes, st.WithContext)
	}
	if iteration[0x5000] != iters || iteration[0x5001] != iters {
		t.Errorf("stream submissions per stream %v, want %d each", iteration, iters)
	}
}

// TestStubHooksAddedUnderLoad: one thread calls cudaLaunchKernel back to back from its
// first instruction, so the driver's hidden entry point is hot while its learned hooks
// are attached (return program first, then entry). A call that enters between the two
// has a return without an entry, ignored; a missed return would leave a stale frame,
// dropped by stack position at the thread's next call. Either way every runtime launch
// stays top level: none is counted as nested in a call that already returned.
func TestStubHooksAddedUnderLoad(t *testing.T) {
	needRootAndGCC(t)
	const per = 200
	dir := t.TempDir()
	app := buildStubs(t, dir)
	src, _, err := Open(Config{RescanInterval: -1, ExtraLibraries: []string{
		filepath.Join(dir, "libcuda.so.1"), filepath.Join(dir, "libcudart.so.12")}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	asm := NewAssembler(AssemblerConfig{}, func(*Submission) {})
	sink := &goneSink{Assembler: asm, gone: map[uint32]bool{}}
	stop := runSource(t, src, sink)
	cmd := exec.Command(app, "40", "flood", fmt.Sprint(per))
	var out strings.Builder
	cmd.Stdout = &out
	stdin, _ := cmd.StdinPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sink.pid.Store(uint32(cmd.Process.Pid)) // before its first call: other tests' stub apps run too
	io.WriteString(stdin, "go\n")
	// The loop runs 40 times and then until told to stop: long enough, however slow the
	// host, for the hooks learnt from its cuGetProcAddress returns to be attached while it
	// runs, and for thousands of calls to go through them afterwards.
	// Polled gently: the workload's thread must keep the CPU while the hooks go in.
	var hooked uint64
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		st := src.Stats()
		if hooked == 0 && st.EntryPointHooks >= 1 {
			hooked = st.Calls
		}
		if hooked > 0 && st.Calls >= hooked+20*(per+1) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("entry points hooked while the workload runs: %d hooks, %d calls after them", st.EntryPointHooks, st.Calls-hooked)
		}
	}
	io.WriteString(stdin, "stop\n")
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	var n, table, export, syncs int
	if _, err := fmt.Sscanf(strings.TrimSpace(out.String()), "counts iterations=%d table_launch=%d export_launch=%d stream_sync=%d",
		&n, &table, &export, &syncs); err != nil {
		t.Fatalf("workload said %q: %v", out.String(), err)
	}
	// Every runtime call is counted (and more: the nested driver calls) once read.
	waitFor(t, "the workload's calls read", func() bool { return src.Stats().Calls >= uint64(n*(per+1)+1) })
	for last := uint64(0); last != src.Stats().Calls; time.Sleep(100 * time.Millisecond) {
		last = src.Stats().Calls
	}
	stop()
	asm.Flush()
	st := src.Stats()
	t.Logf("ground truth: %s; source: entry-point hooks %d, returns missed %d, lost %d; top-level launches %d, nested %d",
		strings.TrimSpace(out.String()), st.EntryPointHooks, st.StaleFrames, st.Lost, asm.Counts[ClassLaunch], asm.NestedCounts[ClassLaunch])
	if table != n*per || export != 0 || syncs != n {
		t.Fatalf("the stubs counted %q, want %d table launches, 0 export launches, %d syncs", out.String(), n*per, n)
	}
	if st.Lost != 0 {
		t.Fatalf("%d records lost: the counts below would not be exact", st.Lost)
	}
	// The stub's table entries are function symbols of the driver file: all accepted.
	if st.EntryPointsRefused != 0 || st.EntryPointHooks != 2 {
		t.Errorf("entry points: %d hooked, %d refused; want the stub's 2 hidden functions hooked, none refused",
			st.EntryPointHooks, st.EntryPointsRefused)
	}
	if got := asm.Counts[ClassLaunch]; got != uint64(n*per) {
		t.Errorf("top-level launches = %d, want %d (every cudaLaunchKernel)", got, n*per)
	}
	if got := asm.NestedCounts[ClassLaunch]; got > uint64(n*per) {
		t.Errorf("nested launches = %d, more than the %d runtime launches they are nested in", got, n*per)
	}
	if got := asm.Counts[ClassSync]; got != uint64(n) {
		t.Errorf("top-level syncs = %d, want %d", got, n)
	}
}

// A process whose thread context cannot be read (its recipe points beyond the user address
// space, so every read faults, as a read of memory the kernel is moving does): every
// top-level call of the workload goes out without context and is counted
// (Stats.ContextUnreadable), none silently.
func TestStubContextUnreadableIsCounted(t *testing.T) {
	needRootAndGCC(t)
	app := buildStubs(t, t.TempDir())
	src, _, err := Open(Config{RescanInterval: 20 * time.Millisecond}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	asm := NewAssembler(AssemblerConfig{FlushAfter: int64(10 * time.Minute)}, func(*Submission) {})
	sink := &goneSink{Assembler: asm, gone: map[uint32]bool{}}
	stop := runSource(t, src, sink)

	w := cudatest.Start(t, app, 5, nil) // no CUDA call made yet: it waits for a line
	pid := w.PID
	sink.pid.Store(pid)
	if err := src.SetProcess(pid, &appctx.TLSAccess{Kind: appctx.TLSStatic, TPOffset: 1 << 62}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "both stub libraries hooked", func() bool { return src.Stats().Libraries >= 2 })
	w.Init(t)
	w.Work(t)
	waitFor(t, "the workload's exit reported", func() bool { return sink.exited(pid) })
	stop()
	st := src.Stats()
	sink.mu.Lock()
	top := sink.top
	sink.mu.Unlock()
	t.Logf("%d top-level calls of the workload read; %d counted unreadable, %d with context", top, st.ContextUnreadable, st.WithContext)
	if top == 0 {
		t.Fatal("no top-level call of the workload was read")
	}
	// Only the workload has a row in this source's table: the counts are its calls alone.
	if st.ContextUnreadable != uint64(top) || st.WithContext != 0 {
		t.Errorf("%d top-level calls without a readable context; counted %d unreadable and %d with context, want %d and 0",
			top, st.ContextUnreadable, st.WithContext, top)
	}
}
