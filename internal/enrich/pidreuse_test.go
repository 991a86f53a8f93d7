package enrich

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ghostdriver/ghostdriver/internal/assemble"
	"github.com/ghostdriver/ghostdriver/internal/ctxtier"
	"github.com/ghostdriver/ghostdriver/internal/event"
	"github.com/ghostdriver/ghostdriver/internal/tenant"
	"github.com/ghostdriver/ghostdriver/internal/tenant/appctx"
)

// A pid the tests give to two processes in turn, under a fake procfs.
const reused = 424242

// procfs is a fake /proc for processes that come and go on one pid.
type procfs struct {
	t    *testing.T
	root string
}

// run puts a process on pid: its stat (with start time), comm and environment.
func (fs procfs) run(pid uint32, start uint64, comm string, env ...string) {
	fs.t.Helper()
	dir := filepath.Join(fs.root, fmt.Sprint(pid))
	fs.exit(pid)
	stat := fmt.Sprintf("%d (%s) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 %d 0 0\n", pid, comm, start)
	environ := strings.Join(env, "\x00") + "\x00"
	for name, b := range map[string]string{"stat": stat, "comm": comm + "\n", "environ": environ} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			fs.t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(b), 0o644); err != nil {
			fs.t.Fatal(err)
		}
	}
}

// exit removes pid (a reaped process).
func (fs procfs) exit(pid uint32) {
	if err := os.RemoveAll(filepath.Join(fs.root, fmt.Sprint(pid))); err != nil {
		fs.t.Fatal(err)
	}
}

// fakeProcEnricher is an enricher on a fake procfs whose jobs wait for their process's
// read (a long Config.Wait: the tests are about which process, not about the wait).
func fakeProcEnricher(t *testing.T, k *fakeKernel) (*Enricher, procfs) {
	fs := procfs{t: t, root: t.TempDir()}
	cfg := tenant.DefaultConfig()
	cfg.ProcRoot, cfg.SysRoot = fs.root, fs.root
	e := New(Config{Wait: 10 * time.Second}, tenant.NewResolver(cfg), k, nil)
	t.Cleanup(e.Close)
	return e, fs
}

// drop is the kernel deleting pid's row as it reports the exit (bpf/syscalls.c).
func (k *fakeKernel) drop(pid uint32) {
	k.mu.Lock()
	defer k.mu.Unlock()
	delete(k.rows, pid)
}

func ioctl(pid uint32, at int64) event.Event {
	return event.Event{Kind: event.IoctlEnter, PID: pid, TID: pid, Time: at}
}

func exit(pid uint32, at int64) event.Event {
	return event.Event{Kind: event.ProcessExit, PID: pid, TID: pid, Time: at}
}

// jobAt is a job of pid whose submit ioctl entered at source time t.
func jobAt(pid uint32, t int64) *assemble.Job {
	j := &assemble.Job{PID: pid, TID: pid, Start: t, End: t + 1000}
	j.Points[assemble.PointIoctlEnter] = assemble.Bound{Time: t, Src: assemble.Measured, Hook: "sys_enter_ioctl"}
	return j
}

// queuedAt is a job of pid seen only at its scheduler queue event, at source time t.
func queuedAt(pid uint32, t int64) *assemble.Job {
	j := &assemble.Job{PID: pid, TID: pid, Start: t, End: t + 1000}
	j.Points[assemble.PointQueued] = assemble.Bound{Time: t, Src: assemble.Measured, Hook: "drm_sched_job_queue"}
	return j
}

// tenantA runs the first holder of the pid (a TRACEPARENT, its own service) and has it
// read, submit at 1000 and exit at 2000; the kernel drops its row at the exit.
func tenantA(t *testing.T, e *Enricher, fs procfs, k *fakeKernel) {
	t.Helper()
	fs.run(reused, 100, "tenant-a", "TRACEPARENT="+traceparent, "OTEL_SERVICE_NAME=tenant-a")
	e.Observe([]event.Event{ioctl(reused, 1000)})
	waitLoaded(t, e, reused)
	if _, ok := k.row(reused); !ok {
		t.Fatal("no kernel row for the first process")
	}
	k.drop(reused)
	e.Observe([]event.Event{exit(reused, 2000)})
}

func wantTenant(t *testing.T, what string, j *assemble.Job, service string, tier uint8) {
	t.Helper()
	if got := lookup(j.Resource, "service.name"); got != service {
		t.Errorf("%s: service.name %q, want %q", what, got, service)
	}
	if j.CtxTier != tier {
		t.Errorf("%s: context tier %d, want %d", what, j.CtxTier, tier)
	}
	tp, _ := appctx.ParseTraceParent(traceparent)
	if parented := j.TraceID == tp.TraceID; parented != (tier == ctxtier.Traceparent) {
		t.Errorf("%s: trace %x (TRACEPARENT's: %v)", what, j.TraceID, parented)
	}
}

// A pid reused after its process exited is a new process: its own tenant and trace
// context (not the dead process's TRACEPARENT), a kernel row of its own (so its thread
// context and its own exec/exit reports). It shows itself by a submit ioctl, or by a job
// submitted after the exit whose ioctl was not seen.
func TestPidReuseAfterExitIsANewProcess(t *testing.T) {
	for _, c := range []struct {
		name string
		next func(e *Enricher) *assemble.Job // the new process's activity and job
	}{
		{"ioctl after the exit", func(e *Enricher) *assemble.Job {
			e.Observe([]event.Event{ioctl(reused, 3000)})
			return jobAt(reused, 3000)
		}},
		{"job submitted after the exit", func(*Enricher) *assemble.Job { return queuedAt(reused, 3000) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			k := &fakeKernel{}
			e, fs := fakeProcEnricher(t, k)
			tenantA(t, e, fs, k)
			fs.run(reused, 999, "tenant-b", "OTEL_SERVICE_NAME=tenant-b")
			j := c.next(e)
			e.Enrich(j)
			wantTenant(t, "new process's job", j, "tenant-b", ctxtier.None)
			if _, ok := k.row(reused); !ok {
				t.Error("no kernel row pushed for the new process")
			}
			if st := e.Stats(); st.PidReuses != 1 {
				t.Errorf("stats %+v: want one pid reuse", st)
			}
		})
	}
}

// Linger's purpose: a job submitted before its process exited and finished after it is
// still the old process's, whether or not the pid has a new holder by then.
func TestJobSubmittedBeforeExitKeepsItsProcess(t *testing.T) {
	k := &fakeKernel{}
	e, fs := fakeProcEnricher(t, k)
	tenantA(t, e, fs, k)

	j := jobAt(reused, 1500)
	e.Enrich(j)
	wantTenant(t, "in flight at the exit", j, "tenant-a", ctxtier.Traceparent)
	e.Observe([]event.Event{ioctl(reused, 1999)}) // a straggler record of the old process
	if st := e.Stats(); st.Loads != 1 {
		t.Errorf("stats %+v: the exited process was read again", st)
	}

	fs.run(reused, 999, "tenant-b", "OTEL_SERVICE_NAME=tenant-b")
	e.Observe([]event.Event{ioctl(reused, 3000)})
	e.Enrich(jobAt(reused, 3000)) // waits for the new process's read
	for _, c := range []struct {
		submitted int64
		service   string
		tier      uint8
	}{
		{1500, "tenant-a", ctxtier.Traceparent},
		{2000, "tenant-a", ctxtier.Traceparent}, // at the exit: still the old process
		{3000, "tenant-b", ctxtier.None},
	} {
		j := jobAt(reused, c.submitted)
		e.Enrich(j)
		wantTenant(t, fmt.Sprintf("job submitted at %d, after the reuse", c.submitted), j, c.service, c.tier)
	}
}

// The CUDA path reports calls and exits without times: the first read after the exit
// decides. No process there (a straggler call of the exited one) leaves the pid to the
// exited process, without a kernel row; another start time is a new process.
func TestPidReuseWithoutTimes(t *testing.T) {
	k := &fakeKernel{}
	e, fs := fakeProcEnricher(t, k)
	fs.run(reused, 100, "tenant-a", "OTEL_SERVICE_NAME=tenant-a")
	e.Sight(reused)
	waitLoaded(t, e, reused)
	k.drop(reused)
	e.Gone(reused, false)

	fs.exit(reused)
	e.Sight(reused)
	if _, res := e.Lookup(reused); lookup(res, "service.name") != "tenant-a" {
		t.Errorf("straggler after the exit: %v", res)
	}
	if _, ok := k.row(reused); ok {
		t.Error("kernel row pushed for an exited process")
	}

	fs.run(reused, 999, "tenant-b", "OTEL_SERVICE_NAME=tenant-b")
	e.Sight(reused)
	if _, res := e.Lookup(reused); lookup(res, "service.name") != "tenant-b" {
		t.Errorf("new process: %v", res)
	}
	if _, ok := k.row(reused); !ok {
		t.Error("no kernel row pushed for the new process")
	}
	if st := e.Stats(); st.PidReuses != 1 {
		t.Errorf("stats %+v: want one pid reuse", st)
	}
}

// The kernel reports a process's exit when its main thread exits; threads that outlive
// it still submit, and the pid still reads as that process (same start time): theirs
// is the old process, and it gets no kernel row the kernel would never delete.
func TestThreadsOutlivingTheMainThreadStayTheirProcess(t *testing.T) {
	k := &fakeKernel{}
	e, fs := fakeProcEnricher(t, k)
	tenantA(t, e, fs, k)
	e.Observe([]event.Event{ioctl(reused, 3000)})
	j := jobAt(reused, 3000)
	e.Enrich(j)
	wantTenant(t, "surviving thread's job", j, "tenant-a", ctxtier.Traceparent)
	if _, ok := k.row(reused); ok {
		t.Error("kernel row pushed again after the exit report")
	}
	e.Observe([]event.Event{ioctl(reused, 3001), ioctl(reused, 3002)})
	if st := e.Stats(); st.PidReuses != 0 || st.Loads != 2 {
		t.Errorf("stats %+v: want the pid re-read once, no reuse", st)
	}
}

// Observe skips a pid's repeated submits within one batch, but an exit report in the
// batch ends that: the same pid submitting after it, in the same batch, is the new
// process (without the reset the later submit would be skipped as already seen).
func TestObserveBatchWithExitThenReuse(t *testing.T) {
	k := &fakeKernel{}
	e, fs := fakeProcEnricher(t, k)
	fs.run(reused, 100, "tenant-a", "TRACEPARENT="+traceparent, "OTEL_SERVICE_NAME=tenant-a")
	e.Observe([]event.Event{ioctl(reused, 1000)})
	waitLoaded(t, e, reused)
	k.drop(reused)
	fs.run(reused, 999, "tenant-b", "OTEL_SERVICE_NAME=tenant-b")
	e.Observe([]event.Event{ioctl(reused, 1500), ioctl(reused, 1600), exit(reused, 2000), ioctl(reused, 3000), ioctl(reused, 3001)})
	// The batch alone must open the new process: its read pushes its kernel row.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, ok := k.row(reused); ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the submit after the exit, in the same batch, opened no new process (no kernel row)")
		}
	}
	j := jobAt(reused, 3000)
	e.Enrich(j)
	wantTenant(t, "job of the submit after the exit", j, "tenant-b", ctxtier.None)
	if st := e.Stats(); st.PidReuses != 1 {
		t.Errorf("stats %+v: want one pid reuse", st)
	}
	old := jobAt(reused, 1600)
	e.Enrich(old)
	wantTenant(t, "job of a submit before the exit", old, "tenant-a", ctxtier.Traceparent)
}
