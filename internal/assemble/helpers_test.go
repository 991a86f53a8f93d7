// Test helpers: a collecting assembler, event constructors and job lookup.
package assemble

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ghostdriver/ghostdriver/internal/event"
)

// collector runs an assembler and keeps what it outputs.
type collector struct {
	a    *Assembler
	jobs []*Job
}

func newCollector(cfg Config) *collector {
	c := &collector{}
	c.a = New(cfg, func(j *Job) { c.jobs = append(c.jobs, j) })
	return c
}

// run feeds events one batch each and flushes.
func (c *collector) run(evs ...event.Event) []*Job {
	for i := range evs {
		c.a.Consume(evs[i : i+1])
	}
	c.a.Flush()
	return c.jobs
}

// testConfig is the configuration synthetic tests run with: the defaults (Flush releases
// everything, so the window only matters to the tests that exercise it).
func testConfig() Config { return DefaultConfig() }

const us = int64(time.Microsecond)

// T returns a time of n µs after an arbitrary non-zero origin.
func T(n int64) int64 { return 1_000_000_000 + n*us }

func fk(ctx, seq uint64) event.FenceKey { return event.FenceKey{Context: ctx, Seqno: seq} }

// find returns the job with the given finished fence (32-bit comparison).
func find(t *testing.T, jobs []*Job, f event.FenceKey) *Job {
	t.Helper()
	var got *Job
	for _, j := range jobs {
		if key32(j.Finished) == key32(f) {
			if got != nil {
				t.Fatalf("job %v output twice", f)
			}
			got = j
		}
	}
	if got == nil {
		t.Fatalf("job %v not output; have %s", f, dump(jobs))
	}
	return got
}

func findID(t *testing.T, jobs []*Job, id uint64) *Job {
	t.Helper()
	for _, j := range jobs {
		if j.JobID == id {
			return j
		}
	}
	t.Fatalf("job id %d not output; have %s", id, dump(jobs))
	return nil
}

func dump(jobs []*Job) string {
	var b strings.Builder
	for _, j := range jobs {
		fmt.Fprintf(&b, "\n  %s ring=%s id=%d %s %q", j.Finished, j.Ring, j.JobID, j.Outcome, j.Reason)
	}
	return b.String()
}

// wantPoint checks one point's time (µs after the origin), provenance and hook.
func wantPoint(t *testing.T, j *Job, p Point, at int64, src Provenance, hook string) {
	t.Helper()
	b := j.Points[p]
	if b.Time != T(at) || b.Src != src || b.Hook != hook {
		t.Errorf("%s: got %d µs %s %q, want %d µs %s %q", p, (b.Time-T(0))/us, b.Src, b.Hook, at, src, hook)
	}
}

func wantUnknown(t *testing.T, j *Job, p Point) {
	t.Helper()
	if j.Points[p].Known() {
		t.Errorf("%s: got %+v, want unknown", p, j.Points[p])
	}
}

// wantStages checks the exact stage list: "name start end src rule" per stage (µs).
func wantStages(t *testing.T, j *Job, want ...string) {
	t.Helper()
	var got []string
	for _, s := range j.Stages {
		got = append(got, fmt.Sprintf("%s %d %d %s %s", s.Stage, (s.Start-T(0))/us, (s.End-T(0))/us, s.Src, s.Rule))
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("stages:\n got %s\nwant %s", strings.Join(got, "\n     "), strings.Join(want, "\n     "))
	}
}

// Event constructors. Field sets follow what the ftrace decoder and the live source fill.

func ioctlEnter(t int64, tid uint32) event.Event {
	return event.Event{Kind: event.IoctlEnter, Name: "sys_enter_ioctl", Time: T(t), TID: tid, PID: tid, Comm: "app", CPU: 1}
}

func ioctlExit(t int64, tid uint32) event.Event {
	return event.Event{Kind: event.IoctlExit, Name: "sys_exit_ioctl", Time: T(t), TID: tid, PID: tid, Comm: "app", CPU: 1}
}

func boEnd(t int64, tid uint32) event.Event {
	return event.Event{Kind: event.BOValidEnd, Name: "fexit", Func: "amdgpu_cs_parser_bos", Time: T(t), TID: tid, CPU: 1}
}

// 6.17+ scheduler events (64-bit fence keys).
func queue617(t int64, tid uint32, f event.FenceKey) event.Event {
	return event.Event{Kind: event.JobQueue, Name: "drm_sched_job_queue", Time: T(t), TID: tid, PID: tid, Comm: "app", CPU: 1,
		Device: "0000:03:00.0", Ring: "gfx_0.0.0", Fence: f, FenceWide: true, ClientID: 13}
}

func run617(t int64, f event.FenceKey) event.Event {
	return event.Event{Kind: event.JobRun, Name: "drm_sched_job_run", Time: T(t), TID: 500, Comm: "gfx_0.0.0", CPU: 2,
		Device: "0000:03:00.0", Ring: "gfx_0.0.0", Fence: f, FenceWide: true, ClientID: 13}
}

func done617(t int64, f event.FenceKey) event.Event {
	return event.Event{Kind: event.JobDone, Name: "drm_sched_job_done", Time: T(t), CPU: 0, Fence: f, FenceWide: true}
}

func addDep617(t int64, tid uint32, f, dep event.FenceKey) event.Event {
	return event.Event{Kind: event.JobDependency, Name: "drm_sched_job_add_dep", Time: T(t), TID: tid, CPU: 1,
		Fence: f, FenceWide: true, Dep: dep, DepWide: true}
}

// dma_fence events (32-bit keys).
func fenceEv(k event.Kind, name string, t int64, tid uint32, cpu int32, driver string, f event.FenceKey) event.Event {
	return event.Event{Kind: k, Name: name, Time: T(t), TID: tid, CPU: cpu, Driver: driver, Timeline: "tl", Fence: f.Truncated()}
}

func finit(t int64, tid uint32, driver string, f event.FenceKey) event.Event {
	return fenceEv(event.FenceInit, "dma_fence_init", t, tid, 2, driver, f)
}

func fsig(t int64, driver string, f event.FenceKey) event.Event {
	return fenceEv(event.FenceSignaled, "dma_fence_signaled", t, 0, 0, driver, f)
}
