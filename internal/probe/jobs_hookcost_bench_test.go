//go:build linux

package probe

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/btf"
	"github.com/cilium/ebpf/ringbuf"
	"go.uber.org/zap"
	"golang.org/x/sys/unix"
)

// TestJobRecordCostTestRun is a benchmark (BENCHMARKS.md, "Per-job records in the
// kernel"): the kernel CPU of the scheduler and dma_fence part of one 6.17+ job (queue,
// run, done, dma_fence_init × 3, emit, signaled × 3: 10 hook runs, in the order the
// kernel runs them; the fences' destroys are hooked in neither mode) in events mode
// (sched.c + fence.c) and in jobs mode (jobs.c), against the floor (an empty raw_tp program per
// hook run), interleaved by round. The hooks run by BPF_PROG_TEST_RUN of their raw_tp
// bodies on the fake objects of testrun_test.go, timed by the kernel's BPF run-time stats;
// the hook's own dispatch cost is in no number. The submit ioctl's enter/exit pair is the
// same code in both modes and is not run here.
//
// Side by side with an older jobs.c: GHOSTDRIVER_JOBCOST_OLD names its x86 object (built
// by bpf2go from that commit's bpf/), run as mode jobs-old in every round (preallocated,
// as it was loaded); mode jobs-prealloc is this jobs.o with the pending-job hash
// preallocated, jobs as the loader creates it (BPF_F_NO_PREALLOC from 6.1). The fake fences carry the scheduler's ops
// pointers (jobs.c learns them at the first queue).
//
// GHOSTDRIVER_JOBCOST_RING sets the ring buffer's size in bytes (default 8 MiB).
//
// It only runs when GHOSTDRIVER_JOBCOST_OUT names a TSV file.
func TestJobRecordCostTestRun(t *testing.T) {
	out := os.Getenv("GHOSTDRIVER_JOBCOST_OUT")
	if out == "" {
		t.Skip("benchmark: set GHOSTDRIVER_JOBCOST_OUT=FILE")
	}
	requireRoot(t)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	jobs := 20_000
	if v, err := strconv.Atoi(os.Getenv("GHOSTDRIVER_JOBCOST_JOBS")); err == nil && v > 0 {
		jobs = v
	}
	rounds := 5
	stats, err := ebpf.EnableStats(uint32(unix.BPF_STATS_RUN_TIME))
	if err != nil {
		t.Fatal(err)
	}
	defer stats.Close()

	dfSize := int(kernelStruct(t, "dma_fence").Size)
	l := fakeLayout73(dfSize, -1)
	df := kernelStruct(t, "dma_fence")
	ctxOff, seqOff, opsOff := memberOffset(t, df, "context"), memberOffset(t, df, "seqno"), memberOffset(t, df, "ops")
	s := newScratch(t)
	const jobAt, fenceAt, hwAt, schedAt, ringAt = 0, 96, 560, 700, 780
	a := func(off int) uint64 { return s.addr + uint64(off) }
	s.put64(fenceAt+opsOff, realOps.scheduled)
	s.put64(fenceAt+l.fenceFinished+opsOff, realOps.finished)
	s.put64(hwAt+opsOff, realOps.drvHW)
	s.put64(jobAt+l.jobSched, a(schedAt))
	s.put64(jobAt+l.jobSFence, a(fenceAt))
	s.put64(jobAt+l.jobEntity, 0xffff888000001000)
	s.put64(fenceAt+ctxOff, 1<<33|4)
	s.put64(fenceAt+seqOff, 17)
	s.put64(fenceAt+l.fenceFinished+ctxOff, 1<<33|5)
	s.put64(fenceAt+l.fenceFinished+seqOff, 17)
	s.put64(fenceAt+l.fenceClientID, 99)
	s.put64(fenceAt+l.fenceParent, a(hwAt))
	s.put64(hwAt+ctxOff, 600)
	s.put64(hwAt+seqOff, 3)
	s.put64(schedAt+l.schedName, a(ringAt))
	s.putStr(ringAt, "vgpu-ring0")
	s.flush(t)
	job, sched, fin, hw := a(jobAt), a(fenceAt), a(fenceAt+l.fenceFinished), a(hwAt)
	type step struct {
		ev   string
		what string // which object the hook is given
		args []uint64
	}
	// One job's hook runs, in the kernel's order (drm_sched_job_arm: scheduled and
	// finished fence init; push: queue; worker: run, run_job's hardware fence init + emit,
	// scheduled signal; interrupt: hardware signal, done, finished signal; frees).
	seq := []step{
		{"dma_fence_init", "scheduled", []uint64{sched}}, {"dma_fence_init", "finished", []uint64{fin}},
		{"drm_sched_job_queue", "job", []uint64{job, 0}}, {"drm_sched_job_run", "job", []uint64{job, 0}},
		{"dma_fence_init", "hw", []uint64{hw}}, {"dma_fence_emit", "hw", []uint64{hw}},
		{"dma_fence_signaled", "scheduled", []uint64{sched}}, {"dma_fence_signaled", "hw", []uint64{hw}},
		{"drm_sched_job_done", "s_fence", []uint64{sched}}, {"dma_fence_signaled", "finished", []uint64{fin}},
	}
	opts := ebpf.ProgramOptions{ExtraRelocationTargets: []*btf.Spec{drmSchedTypes(t, l)}}
	floor, err := ebpf.NewProgram(&ebpf.ProgramSpec{Type: ebpf.RawTracepoint, License: "GPL",
		Instructions: asm.Instructions{asm.Mov.Imm(asm.R0, 0), asm.Return()}})
	if err != nil {
		t.Fatal(err)
	}
	defer floor.Close()

	// mode runs `jobs` jobs and returns kernel ns per job (sum over its programs), ring
	// bytes per job and the programs' hook runs per job.
	var perProg []string // mode, step, program, object, ns per run
	modes := []string{"floor", "events", "jobs", "jobs-prealloc"}
	oldObj := os.Getenv("GHOSTDRIVER_JOBCOST_OLD")
	if oldObj != "" {
		modes = append(modes, "jobs-old")
	}
	newJobs, noPrealloc := familySpecs[famJobs], jobsNoPrealloc
	defer func() { familySpecs[famJobs], jobsNoPrealloc = newJobs, noPrealloc }()
	mode := func(name string) (nsPerJob, bytesPerJob, runsPerJob float64) {
		switch name {
		case "jobs-old": // loaded as it was: preallocated
			familySpecs[famJobs] = func() (*ebpf.CollectionSpec, error) { return ebpf.LoadCollectionSpec(oldObj) }
			jobsNoPrealloc = false
		case "jobs-prealloc":
			familySpecs[famJobs], jobsNoPrealloc = newJobs, false
		default:
			familySpecs[famJobs], jobsNoPrealloc = newJobs, noPrealloc
		}
		jobsMode := strings.HasPrefix(name, "jobs")
		cfg := DefaultConfig()
		if v, err := strconv.Atoi(os.Getenv("GHOSTDRIVER_JOBCOST_RING")); err == nil && v > 0 {
			cfg.RingBufferBytes = v // the ring's size (default 8 MiB): how warm its memory stays
		}
		cfg, _ = cfg.withDefaults()
		ld := newLoader(cfg, zap.NewNop())
		ld.progOpts = opts
		if err := ld.loadCommon(); err != nil {
			t.Fatal(err)
		}
		defer ld.objs.close()
		progs := map[int]*ebpf.Program{} // one instance per step, so that each step has its own run-time stats
		defer func() {
			for _, p := range progs {
				p.Close()
			}
		}()
		prog := func(i int) *ebpf.Program {
			ev := seq[i].ev
			if name == "floor" {
				return floor
			}
			fam, pname := famSched, "rawtp_"+ev
			switch {
			case jobsMode:
				fam, pname = famJobs, "jobs_rawtp_"+ev
			case ev[:4] == "dma_":
				fam = famFence
			}
			f, err := ld.family(fam)
			if err != nil {
				t.Fatal(err)
			}
			p, err := ld.loadProgram(f, pname, rung{})
			if err != nil {
				t.Fatalf("%s: %v", pname, err)
			}
			progs[i] = p
			return p
		}
		if jobsMode {
			f, _ := ld.family(famJobs)
			if err := f.maps["jobs_cfg"].Update(uint32(0), uint32(1), ebpf.UpdateAny); err != nil {
				t.Fatal(err)
			}
		}
		ps := make([]*ebpf.Program, len(seq))
		for i := range seq {
			ps[i] = prog(i)
		}
		rd, err := ringbuf.NewReader(ld.objs.eventsMap())
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		var bytes uint64
		go func() {
			defer close(done)
			var rec ringbuf.Record
			for ctx.Err() == nil {
				rd.SetDeadline(time.Now().Add(5 * time.Millisecond))
				for rd.ReadInto(&rec) == nil {
					bytes += uint64(len(rec.RawSample)) + 8 // + the ring's 8-byte header
				}
			}
		}()
		uniq := map[*ebpf.Program]ebpf.ProgramStats{}
		for _, p := range ps {
			st, _ := p.Stats()
			uniq[p] = *st
		}
		runs := 0
		for n := 0; n < jobs; n++ {
			for i, p := range ps {
				if _, err := p.Run(&ebpf.RunOptions{Context: seq[i].args}); err != nil {
					t.Fatal(err)
				}
				runs++
			}
		}
		var ns uint64
		for p, s0 := range uniq {
			s1, _ := p.Stats()
			ns += uint64(s1.Runtime - s0.Runtime)
		}
		if name != "floor" {
			for i, p := range ps {
				s0, s1 := uniq[p], must(p.Stats())
				perProg = append(perProg, fmt.Sprintf("%s\t%d\t%s\t%s\t%.1f", name, i, seq[i].ev, seq[i].what,
					float64(s1.Runtime-s0.Runtime)/float64(s1.RunCount-s0.RunCount)))
			}
		}
		time.Sleep(20 * time.Millisecond)
		cancel()
		<-done
		rd.Close()
		var lost uint64
		var perCPU []uint64
		if ld.objs.lostMap().Lookup(uint32(0), &perCPU) == nil {
			for _, v := range perCPU {
				lost += v
			}
		}
		if lost > 0 {
			t.Errorf("%s: %d reserve failures: the number is too low", name, lost)
		}
		return float64(ns) / float64(jobs), float64(bytes) / float64(jobs), float64(runs) / float64(jobs)
	}

	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fmt.Fprintln(f, "round\tmode\tjobs\thook_runs_per_job\tkernel_ns_per_job\tring_bytes_per_job")
	for r := 1; r <= rounds; r++ {
		for _, m := range modes {
			ns, b, hr := mode(m)
			fmt.Fprintf(f, "%d\t%s\t%d\t%.0f\t%.1f\t%.1f\n", r, m, jobs, hr, ns, b)
			t.Logf("%d %-6s %5.1f runs/job %8.1f ns/job %6.1f ring B/job", r, m, hr, ns, b)
		}
	}
	// Per step (every round): which hook runs the per-job numbers are made of.
	if pf, err := os.Create(out + ".programs"); err == nil {
		fmt.Fprintln(pf, "mode\tstep\tevent\tobject\tns_per_run")
		for _, l := range perProg {
			fmt.Fprintln(pf, l)
		}
		pf.Close()
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
