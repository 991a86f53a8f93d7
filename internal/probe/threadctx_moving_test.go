//go:build linux

// The OTEP 4947 read when the kernel moves the record's memory (testdata/threadctx_moving.c):
// a BPF program may not take a page fault, so while a huge-page collapse has the record's
// region unmapped the read fails although the thread's context is there. Such a submission
// goes out without context, and it must be counted, never silently so.
package probe

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/ghostdriver/ghostdriver/internal/event"
	"github.com/ghostdriver/ghostdriver/internal/tenant"
	"github.com/ghostdriver/ghostdriver/internal/testreq"
)

func TestThreadContextUnreadableWhileMemoryMovesIsCounted(t *testing.T) {
	requireRoot(t)
	requireGCC(t)
	dir := t.TempDir()
	exe := filepath.Join(dir, "moving")
	if out, err := exec.Command("gcc", "-O1", "-pthread", "-rdynamic", "-o", exe, filepath.Join("testdata", "threadctx_moving.c")).CombinedOutput(); err != nil {
		t.Fatalf("building testdata/threadctx_moving.c: %v\n%s", err, out)
	}
	cfg := DefaultConfig()
	cfg.DRMMajors = []uint32{1} // /dev/null: ioctl(TCGETS) stands in for a submit
	// Every entry sent at once, with what its read found (a deferred entry of an ioctl that
	// queues nothing is never sent: ioctl_slot.h).
	cfg.SendJoblessIoctls = true
	l, rep, err := Open(cfg, zaptest.NewLogger(t, zaptest.Level(zap.InfoLevel)))
	if err != nil {
		t.Fatalf("Open: %v\n%s", err, rep)
	}
	defer l.Close()
	sink, stop := startRun(t, l)
	defer stop()

	res := tenant.NewResolver(tenant.DefaultConfig())
	// One run of the app: how many collapses it made, how many ioctls its worker made, and
	// the worker's entries read with and without its context.
	runOnce := func(try int) (collapses, ioctls, withCtx, without int) {
		counts := filepath.Join(dir, "collapses"+strconv.Itoa(try))
		app := ctxApp{name: "moving", exe: exe, env: []string{"CTX_COLLAPSES_FILE=" + counts, "CTX_CYCLES=1000"}}
		pid, threads := runCtxApp(t, app, func(pid uint32) {
			p, err := res.Process(pid)
			if err != nil {
				t.Fatal(err)
			}
			if p.ThreadContextTLS == nil {
				t.Fatalf("tenant found no otel_thread_ctx_v1 recipe: %s", p.ThreadContextErr)
			}
			if err := l.SetProcess(pid, p.ThreadContextTLS); err != nil {
				t.Fatal(err)
			}
		})
		b, err := os.ReadFile(counts)
		if err != nil {
			t.Fatal(err)
		}
		if f := strings.Fields(string(b)); len(f) == 2 {
			collapses, _ = strconv.Atoi(f[0])
			ioctls, _ = strconv.Atoi(f[1])
		}
		if collapses == 0 {
			testreq.Skip(t, testreq.THP, "MADV_COLLAPSE collapsed nothing on this kernel (needs 6.1+ with transparent huge pages): the record's memory never moved")
		}
		if len(threads) != 1 {
			t.Fatalf("thread lines %+v, want the worker's", threads)
		}
		w := threads[0]
		evs := waitEvents(t, sink, func(evs []event.Event) bool {
			for _, e := range evs {
				if e.Kind == event.ProcessExit && e.PID == pid {
					return true
				}
			}
			return false
		})
		for _, e := range evs {
			if e.Kind != event.IoctlEnter || e.TID != w.tid {
				continue
			}
			switch {
			case e.CtxTier == 0:
				without++
			case e.CtxTier != 1 || e.TraceID != w.trace || e.SpanID != w.span || e.TraceFlags != w.flags:
				t.Errorf("ioctl with tier %d trace %x span %x flags %02x, want the worker's tier 1 trace %x span %x flags %02x",
					e.CtxTier, e.TraceID, e.SpanID, e.TraceFlags, w.trace, w.span, w.flags)
			default:
				withCtx++
			}
		}
		return collapses, ioctls, withCtx, without
	}
	// Whether a read meets a collapse is timing: on a loaded machine the two threads may
	// seldom overlap, so the app runs again (at most three times) until some read faulted.
	totalWithout := 0
	for try := 1; try <= 3; try++ {
		collapses, ioctls, withCtx, without := runOnce(try)
		st := l.Stats()
		t.Logf("run %d: %d collapses; %d ioctls of the worker, entries read: %d with its context, %d without; counted unreadable so far %d; lost %d",
			try, collapses, ioctls, withCtx, without, st.KernelDrops[event.KernelDropThreadContextUnreadable], st.Lost)
		if st.Lost == 0 && withCtx+without != ioctls {
			t.Errorf("%d entries of the worker read, it made %d ioctls, none lost", withCtx+without, ioctls)
		}
		if withCtx == 0 {
			t.Error("no ioctl carried the worker's context")
		}
		totalWithout += without
		if without > 0 {
			break
		}
	}
	// The worker's record is valid for its whole life and its recipe was in the kernel before
	// its first ioctl: every entry without context is a read that faulted, and only the app
	// has a recipe, so the count is exactly those (records lost in the ring are neither
	// decoded nor counted).
	if counted := l.Stats().KernelDrops[event.KernelDropThreadContextUnreadable]; uint64(totalWithout) != counted {
		t.Errorf("%d of the workers' ioctls went out without their context, %d were counted as thread_context_unreadable", totalWithout, counted)
	}
	if totalWithout == 0 {
		t.Error("no read faulted in three runs of 1000 collapses of the record's region: the test did not exercise the fault")
	}
}
