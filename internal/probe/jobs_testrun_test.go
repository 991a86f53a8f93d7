//go:build linux

package probe

import (
	"github.com/ghostdriver/ghostdriver/internal/kclock"
	"runtime"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"
	"github.com/cilium/ebpf/ringbuf"
	"go.uber.org/zap"
	"golang.org/x/sys/unix"

	"github.com/ghostdriver/ghostdriver/internal/event"
)

// One job's hooks run through bpf/jobs.c's raw_tp bodies (BPF_PROG_TEST_RUN on fake
// scheduler objects, testrun_test.go) give one job record whose events equal, hook for
// hook, what the per-event programs (sched.c, fence.c) record for the same calls: the
// oracle is the other mode's independent code path reading the same kernel memory.
func TestTestRunJobRecordEqualsEvents(t *testing.T) {
	requireRoot(t)
	dfSize := int(kernelStruct(t, "dma_fence").Size)
	gens := []struct {
		l                schedLayout
		queue, run, done string
	}{
		{fakeLayout73(dfSize, -1), "drm_sched_job_queue", "drm_sched_job_run", "drm_sched_job_done"},
		{fakeLayout61(dfSize), "drm_sched_job", "drm_run_job", "drm_sched_process_job"},
	}
	for _, g := range gens {
		for _, ops := range []fakeOps{realOps, noOps} {
			t.Run(g.l.name+"/"+ops.name, func(t *testing.T) { testRunJobRecordEqualsEvents(t, g.l, ops, g.queue, g.run, g.done) })
		}
	}
}

// fakeOps are the dma_fence_ops pointers the fake fences carry: the scheduler's two (as
// sched_fence.c gives its scheduled and finished fences) and a driver's, or none (a
// kernel where the jobs programs have not learned them: every lookup is tried).
type fakeOps struct {
	name                       string
	scheduled, finished, drvHW uint64
}

var (
	realOps = fakeOps{"ops", 0xffffffffc0de0080, 0xffffffffc0de0020, 0xffffffffc0dea000}
	noOps   = fakeOps{name: "no-ops"}
)

func testRunJobRecordEqualsEvents(t *testing.T, l schedLayout, ops fakeOps, queueEv, runEv, doneEv string) {
	runtime.LockOSThread() // every hook on one thread, as on the scheduler worker
	defer runtime.UnlockOSThread()
	df := kernelStruct(t, "dma_fence")
	ctxOff, seqOff, opsOff := memberOffset(t, df, "context"), memberOffset(t, df, "seqno"), memberOffset(t, df, "ops")
	s := newScratch(t)
	const jobAt, fenceAt, hwAt, schedAt, ringAt = 0, 96, 560, 700, 780
	a := func(off int) uint64 { return s.addr + uint64(off) }
	s.put64(jobAt+l.jobSched, a(schedAt))
	s.put64(jobAt+l.jobSFence, a(fenceAt))
	s.put64(jobAt+l.jobEntity, 0xffff888000001000)
	s.put64(fenceAt+opsOff, ops.scheduled)
	s.put64(fenceAt+l.fenceFinished+opsOff, ops.finished)
	s.put64(hwAt+opsOff, ops.drvHW)
	s.put64(fenceAt+ctxOff, 1<<33|4) // scheduled fence
	s.put64(fenceAt+seqOff, 17)
	s.put64(fenceAt+l.fenceFinished+ctxOff, 1<<33|5) // finished fence
	s.put64(fenceAt+l.fenceFinished+seqOff, 17)
	if l.fenceClientID >= 0 {
		s.put64(fenceAt+l.fenceClientID, 99)
	}
	if l.jobID >= 0 {
		s.put64(jobAt+l.jobID, 4242)
	}
	s.put64(hwAt+ctxOff, 600) // the hardware fence run_job creates
	s.put64(hwAt+seqOff, 3)
	s.put64(schedAt+l.schedName, a(ringAt))
	s.putStr(ringAt, "vgpu-ring0")
	s.flush(t)
	setParent := func() { s.put64(fenceAt+l.fenceParent, a(hwAt)); s.flush(t) }

	type call struct {
		ev   string // the event both programs hook
		args []uint64
	}
	job, sched, fin, hw := a(jobAt), a(fenceAt), a(fenceAt+l.fenceFinished), a(hwAt)
	calls := []call{
		{queueEv, []uint64{job, 0}},
		{runEv, []uint64{job, 0}},
		{"dma_fence_init", []uint64{hw}},
		{"dma_fence_emit", []uint64{hw}},
		{"dma_fence_signaled", []uint64{sched}}, // the scheduled fence, after run_job returned
		{"dma_fence_signaled", []uint64{hw}},
		{doneEv, []uint64{sched}},
		{"dma_fence_signaled", []uint64{fin}},
	}
	opts := ebpf.ProgramOptions{ExtraRelocationTargets: []*btf.Spec{drmSchedTypes(t, l)}}

	run := func(jobs bool) []event.Event {
		s.put64(fenceAt+l.fenceParent, 0)
		s.flush(t)
		cfg, _ := DefaultConfig().withDefaults()
		ld := newLoader(cfg, zap.NewNop())
		ld.progOpts = opts
		if err := ld.loadCommon(); err != nil {
			t.Fatal(err)
		}
		defer ld.objs.close()
		rd, err := ringbuf.NewReader(ld.objs.eventsMap())
		if err != nil {
			t.Fatal(err)
		}
		defer rd.Close()
		progs := map[string]*ebpf.Program{}
		load := func(fam, name string) *ebpf.Program {
			if p, ok := progs[name]; ok {
				return p
			}
			f, err := ld.family(fam)
			if err != nil {
				t.Fatal(err)
			}
			p, err := ld.loadProgram(f, name, rung{})
			if err != nil {
				t.Fatalf("load %s: %v", name, err)
			}
			progs[name] = p
			return p
		}
		defer func() {
			for _, p := range progs {
				p.Close()
			}
		}()
		if jobs {
			f, _ := ld.family(famJobs)
			if err := f.maps["jobs_cfg"].Update(uint32(0), uint32(1), ebpf.UpdateAny); err != nil {
				t.Fatal(err)
			}
		}
		var since, sinceEnd int64
		for i, c := range calls {
			if c.ev == "dma_fence_signaled" && c.args[0] == hw {
				setParent() // run_job has returned: s_fence->parent is set
			}
			var p *ebpf.Program
			switch {
			case jobs:
				p = load(famJobs, "jobs_rawtp_"+c.ev)
			case c.ev[:4] == "dma_":
				p = load(famFence, "rawtp_"+c.ev)
			default:
				p = load(famSched, "rawtp_"+c.ev)
			}
			before := kclock.MonoNow()
			if _, err := p.Run(&ebpf.RunOptions{Context: c.args}); err != nil {
				t.Fatalf("call %d %s: %v", i, c.ev, err)
			}
			if i == 0 {
				// the job's first stamp is in [since, sinceEnd]
				since, sinceEnd = before, kclock.MonoNow()
			}
			if jobs {
				// While the job is pending the reader holds events back to the start of
				// the 16.8 ms bucket of its first stamp (a bucket start may fall between
				// the call and the stamp); once its record is sent, to nothing.
				r := newJobsReader(ld.objs, &decoder{})
				now := kclock.MonoNow()
				b := r.bound(now)
				lo := since &^ (1<<jobBucketShift - 1)
				if last := i == len(calls)-1; last && b != now || !last && (b < lo || b > sinceEnd) {
					t.Errorf("after %s (call %d): bound %d, now %d, job's first stamp in [%d, %d]", c.ev, i, b, now, since, sinceEnd)
				}
			}
		}
		var out []event.Event
		d := decoder{}
		jd := newJobDecoder(&d)
		rd.SetDeadline(time.Now().Add(200 * time.Millisecond))
		for {
			rec, err := rd.Read()
			if err != nil {
				break
			}
			out = jd.decode(rec.RawSample, out, func(n string, err error) { t.Errorf("%s: %v", n, err) })
		}
		if jobs && (jd.jobs != 1 || jd.namesRecs != 1) {
			t.Errorf("jobs mode sent %d job records and %d names records, want 1 and 1", jd.jobs, jd.namesRecs)
		}
		if jobs {
			// The scheduler's fence ops, learned from the job's s_fence; the run window the
			// run event opened, closed by the scheduled fence's signal.
			f, _ := ld.family(famJobs)
			var sch, fin uint64
			var windows int64
			for name, v := range map[string]any{"sched_ops_scheduled": &sch, "sched_ops_finished": &fin, "run_windows": &windows} {
				vr, ok := f.coll.Variables[name]
				if !ok {
					t.Fatalf("jobs.o has no variable %s", name)
				}
				if err := vr.Get(v); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
			}
			if sch != ops.scheduled || fin != ops.finished || windows != 0 {
				t.Errorf("learned ops %#x/%#x, want %#x/%#x; run windows open %d, want 0", sch, fin, ops.scheduled, ops.finished, windows)
			}
		}
		return out
	}
	evs, jobs := run(false), run(true)
	if len(evs) != len(calls) {
		t.Fatalf("events mode: %d events for %d calls", len(evs), len(calls))
	}
	if len(jobs) != len(evs) {
		t.Fatalf("jobs mode: %d events, events mode %d:\n%+v", len(jobs), len(evs), jobs)
	}
	for i := range evs {
		e, j := evs[i], jobs[i]
		if e.Kind != j.Kind || e.Name != j.Name || e.Fence != j.Fence || e.FenceWide != j.FenceWide || e.HWFence != j.HWFence ||
			e.TID != j.TID || e.PID != j.PID || e.Ring != j.Ring || e.Device != j.Device || e.Entity != j.Entity ||
			e.ClientID != j.ClientID || e.JobID != j.JobID || i == 0 && e.Comm != j.Comm {
			t.Errorf("event %d (%s):\n events %+v\n jobs   %+v", i, calls[i].ev, e, j)
		}
	}
}

// A job that finds the kernel's job map full is counted (jobs_stats JC_FULL, reported as
// KernelDrops job_state_full) and its stamp is sent at once, marked, and decoded: nothing
// is lost. 64 jobs fill a 64-entry map; the 65th is the one.
func TestTestRunJobStateFullCounted(t *testing.T) {
	requireRoot(t)
	dfSize := int(kernelStruct(t, "dma_fence").Size)
	l := fakeLayout73(dfSize, -1)
	df := kernelStruct(t, "dma_fence")
	ctxOff, seqOff := memberOffset(t, df, "context"), memberOffset(t, df, "seqno")
	s := newScratch(t)
	const jobAt, fenceAt, schedAt, ringAt = 0, 96, 700, 780
	a := func(off int) uint64 { return s.addr + uint64(off) }
	s.put64(jobAt+l.jobSched, a(schedAt))
	s.put64(jobAt+l.jobSFence, a(fenceAt))
	s.put64(fenceAt+l.fenceFinished+ctxOff, 9)
	s.put64(schedAt+l.schedName, a(ringAt))
	s.putStr(ringAt, "vgpu-ring0")

	cfg, _ := Config{Records: RecordsJobs, JobsMapEntries: 64}.withDefaults()
	ld := newLoader(cfg, zap.NewNop())
	ld.progOpts = ebpf.ProgramOptions{ExtraRelocationTargets: []*btf.Spec{drmSchedTypes(t, l)}}
	if err := ld.loadCommon(); err != nil {
		t.Fatal(err)
	}
	defer ld.objs.close()
	f, err := ld.family(famJobs)
	if err != nil {
		t.Fatal(err)
	}
	if n := f.maps["jobs"].MaxEntries(); n != 64 {
		t.Fatalf("jobs map has %d entries, configured 64", n)
	}
	// From 6.1 its entries are allocated as jobs come, and the bound still holds.
	if noPrealloc := f.maps["jobs"].Flags()&unix.BPF_F_NO_PREALLOC != 0; noPrealloc != kernelAtLeast(6, 1) {
		t.Fatalf("jobs map BPF_F_NO_PREALLOC %v on this kernel (6.1 or later: %v)", noPrealloc, kernelAtLeast(6, 1))
	}
	p, err := ld.loadProgram(f, "jobs_rawtp_drm_sched_job_queue", rung{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	rd, err := ringbuf.NewReader(ld.objs.eventsMap())
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	for seq := uint64(1); seq <= 65; seq++ {
		s.put64(fenceAt+l.fenceFinished+seqOff, seq)
		s.flush(t)
		if _, err := p.Run(&ebpf.RunOptions{Context: []uint64{a(jobAt), 0}}); err != nil {
			t.Fatal(err)
		}
	}
	jr := &jobsReader{dec: newJobDecoder(&decoder{}), jobs: f.maps["jobs"], pending: f.maps["jobs_pending"], stats: f.maps["jobs_stats"]}
	if c := jr.kernelCounts(); c[jobsJobCounterJC_FULL] != 1 {
		t.Errorf("JC_FULL %d, want 1", c[jobsJobCounterJC_FULL])
	}
	var out []event.Event
	rd.SetDeadline(time.Now().Add(200 * time.Millisecond))
	for {
		rec, err := rd.Read()
		if err != nil {
			break
		}
		out = jr.dec.decode(rec.RawSample, out, func(n string, err error) { t.Errorf("%s: %v", n, err) })
	}
	// the names record, then the 65th job's queue stamp, alone
	if len(out) != 1 || out[0].Kind != event.JobQueue || out[0].Fence != (event.FenceKey{Context: 9, Seqno: 65}) ||
		out[0].Ring != "vgpu-ring0" || jr.dec.partial != 1 || jr.dec.namesRecs != 1 {
		t.Fatalf("sent at once: %+v (alone %d, names %d)", out, jr.dec.partial, jr.dec.namesRecs)
	}
	// The 64 pending jobs hold the reader back; swept at the end, each decodes to its queue.
	if b, now := jr.bound(kclock.MonoNow()), kclock.MonoNow(); b >= now {
		t.Errorf("bound %d not before now %d with 64 jobs pending", b, now)
	}
	jr.sweep(1<<63 - 1)
	if jr.held.items() != 64 || jr.dec.evicted.Load() != 64 {
		t.Errorf("sweep decoded %d events, %d evicted; want 64, 64", jr.held.items(), jr.dec.evicted.Load())
	}
	if now := kclock.MonoNow(); jr.bound(now) != now {
		t.Errorf("bound %d after the sweep, want now (%d)", jr.bound(now), now)
	}
}

// The fence roles (one LRU lookup tells a signalled fence that is no scheduler fence
// apart): a dependency's signal is sent as a fence event (it is no job's own: counted in
// JC_WATCHED), a fence nobody waits on and no job made sends nothing, and a job's hardware
// fence that a later job also waits on stamps the job (its record carries the signal)
// instead of sending it again. With and without the scheduler's ops learned.
func TestTestRunJobFenceRoles(t *testing.T) {
	requireRoot(t)
	for _, ops := range []fakeOps{realOps, noOps} {
		t.Run(ops.name, func(t *testing.T) { testRunJobFenceRoles(t, ops) })
	}
}

func testRunJobFenceRoles(t *testing.T, ops fakeOps) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	dfSize := int(kernelStruct(t, "dma_fence").Size)
	l := fakeLayout73(dfSize, -1)
	df := kernelStruct(t, "dma_fence")
	ctxOff, seqOff, opsOff := memberOffset(t, df, "context"), memberOffset(t, df, "seqno"), memberOffset(t, df, "ops")
	s := newScratch(t)
	const jobAt, fenceAt, hwAt, depAt, otherAt, schedAt, ringAt = 0, 96, 560, 640, 880, 700, 780
	a := func(off int) uint64 { return s.addr + uint64(off) }
	s.put64(jobAt+l.jobSched, a(schedAt))
	s.put64(jobAt+l.jobSFence, a(fenceAt))
	s.put64(fenceAt+opsOff, ops.scheduled)
	s.put64(fenceAt+l.fenceFinished+opsOff, ops.finished)
	s.put64(fenceAt+ctxOff, 1<<33|4)
	s.put64(fenceAt+seqOff, 17)
	s.put64(fenceAt+l.fenceFinished+ctxOff, 1<<33|5)
	s.put64(fenceAt+l.fenceFinished+seqOff, 17)
	for _, f := range []struct {
		at       int
		ctx, seq uint64
	}{{hwAt, 600, 3}, {depAt, 700, 9}, {otherAt, 800, 1}} {
		s.put64(f.at+opsOff, ops.drvHW)
		s.put64(f.at+ctxOff, f.ctx)
		s.put64(f.at+seqOff, f.seq)
	}
	s.put64(schedAt+l.schedName, a(ringAt))
	s.putStr(ringAt, "vgpu-ring0")
	s.flush(t)

	cfg, _ := Config{Records: RecordsJobs}.withDefaults()
	ld := newLoader(cfg, zap.NewNop())
	ld.progOpts = ebpf.ProgramOptions{ExtraRelocationTargets: []*btf.Spec{drmSchedTypes(t, l)}}
	if err := ld.loadCommon(); err != nil {
		t.Fatal(err)
	}
	defer ld.objs.close()
	f, err := ld.family(famJobs)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.maps["jobs_cfg"].Update(uint32(0), uint32(1), ebpf.UpdateAny); err != nil {
		t.Fatal(err)
	}
	rd, err := ringbuf.NewReader(ld.objs.eventsMap())
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	progs := map[string]*ebpf.Program{}
	defer func() {
		for _, p := range progs {
			p.Close()
		}
	}()
	run := func(ev string, args ...uint64) {
		p, ok := progs[ev]
		if !ok {
			if p, err = ld.loadProgram(f, "jobs_rawtp_"+ev, rung{}); err != nil {
				t.Fatalf("load %s: %v", ev, err)
			}
			progs[ev] = p
		}
		if _, err := p.Run(&ebpf.RunOptions{Context: args}); err != nil {
			t.Fatalf("%s: %v", ev, err)
		}
	}
	job, sched, fin, hw, dep, other := a(jobAt), a(fenceAt), a(fenceAt+l.fenceFinished), a(hwAt), a(depAt), a(otherAt)
	run("drm_sched_job_add_dep", job, dep) // the job waits on dep: a dependency record now
	run("drm_sched_job_add_dep", job, hw)  // and (made up, but allowed) on the hw fence below
	run("drm_sched_job_queue", job, 0)
	run("drm_sched_job_run", job, 0)
	run("dma_fence_init", hw)
	run("dma_fence_signaled", sched)
	run("dma_fence_signaled", other) // no job's, nobody waits: nothing
	run("dma_fence_signaled", dep)   // watched: a fence event
	run("dma_fence_signaled", hw)    // the job's hardware fence: a stamp in its record
	run("drm_sched_job_done", sched)
	run("dma_fence_signaled", fin)

	var evs []event.Event
	jd := newJobDecoder(&decoder{})
	rd.SetDeadline(time.Now().Add(200 * time.Millisecond))
	for {
		rec, err := rd.Read()
		if err != nil {
			break
		}
		evs = jd.decode(rec.RawSample, evs, func(n string, err error) { t.Errorf("%s: %v", n, err) })
	}
	var signals []event.FenceKey
	var hwSig *event.Event
	for i, e := range evs {
		if e.Kind == event.FenceSignaled {
			signals = append(signals, e.Fence)
			if e.Fence == (event.FenceKey{Context: 600, Seqno: 3}) {
				hwSig = &evs[i]
			}
		}
	}
	jr := &jobsReader{dec: jd, jobs: f.maps["jobs"], pending: f.maps["jobs_pending"], stats: f.maps["jobs_stats"]}
	watched := jr.kernelCounts()[jobsJobCounterJC_WATCHED]
	// decoded in record order: the dep's fence event, then the job record's signals
	// (scheduled, hardware, finished)
	want := []event.FenceKey{{Context: 700, Seqno: 9}, {Context: 1<<33 | 4, Seqno: 17}, {Context: 600, Seqno: 3}, {Context: 1<<33 | 5, Seqno: 17}}
	if len(signals) != len(want) || watched != 1 || jd.jobs != 1 || hwSig == nil {
		t.Fatalf("signals %v, want %v; watched %d, want 1; job records %d, want 1", signals, want, watched, jd.jobs)
	}
	for i := range want {
		if signals[i] != want[i] {
			t.Errorf("signal %d: %v, want %v", i, signals[i], want[i])
		}
	}
}
