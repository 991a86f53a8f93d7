//go:build linux

package probe

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/btf"
	"github.com/cilium/ebpf/ringbuf"
	"go.uber.org/zap"
	"golang.org/x/sys/unix"
)

// TestHookCostTestRun is a benchmark (BENCHMARKS.md, step 1) of the hook bodies that do
// not fire on a host without DRM: the raw_tp twins of the scheduler, dma_fence, irq and
// sys_enter programs run through BPF_PROG_TEST_RUN against fake kernel objects (the
// same fakes as testrun_test.go), timed by the kernel's BPF run-time stats, against an
// empty raw_tp program run the same way (the floor). tp_btf and raw_tp bodies are the
// same C; the hook's own dispatch cost is not in either number.
//
// It only runs when GHOSTDRIVER_HOOKCOST_OUT names a TSV file (scripts/bench.sh sets it):
// it takes seconds and measures rather than checks.
func TestHookCostTestRun(t *testing.T) {
	out := os.Getenv("GHOSTDRIVER_HOOKCOST_OUT")
	if out == "" {
		t.Skip("benchmark: set GHOSTDRIVER_HOOKCOST_OUT=FILE (scripts/bench.sh)")
	}
	requireRoot(t)
	runs := 100_000
	if v, err := strconv.Atoi(os.Getenv("GHOSTDRIVER_HOOKCOST_RUNS")); err == nil && v > 0 {
		runs = v
	}
	rounds := 3
	stats, err := ebpf.EnableStats(uint32(unix.BPF_STATS_RUN_TIME))
	if err != nil {
		t.Fatal(err)
	}
	defer stats.Close()

	// Fake objects of the 7.3 layout (6.17+ events) and the 6.1 layout (<= 6.16 events).
	dfSize := int(kernelStruct(t, "dma_fence").Size)
	devInitName := memberOffset(t, kernelStruct(t, "device"), "init_name")
	l73 := fakeLayout73(dfSize, 32)
	l61 := fakeLayout61(dfSize)
	df := kernelStruct(t, "dma_fence")
	ctxOff, seqOff := memberOffset(t, df, "context"), memberOffset(t, df, "seqno")
	const jobAt, fenceAt, hwAt, schedAt, ringAt, devNameAt, devNamePtrAt, regsAt = 0, 96, 400, 500, 580, 620, 610, 700
	fake := func(l schedLayout) *scratch {
		s := newScratch(t)
		a := func(off int) uint64 { return s.addr + uint64(off) }
		s.put64(jobAt+l.jobSched, a(schedAt))
		s.put64(jobAt+l.jobSFence, a(fenceAt))
		s.put64(jobAt+l.jobEntity, 0xffff888000001000)
		if l.jobID >= 0 {
			s.put64(jobAt+l.jobID, 4242)
		}
		s.put64(fenceAt+l.fenceFinished+ctxOff, 1<<33|5)
		s.put64(fenceAt+l.fenceFinished+seqOff, 1<<34|17)
		s.put64(fenceAt+l.fenceParent, a(hwAt))
		if l.fenceClientID >= 0 {
			s.put64(fenceAt+l.fenceClientID, 99)
		}
		s.put64(hwAt+ctxOff, 600)
		s.put64(hwAt+seqOff, 17)
		s.put64(schedAt+l.schedName, a(ringAt))
		s.putStr(ringAt, "gfx_0.0.0")
		if l.schedDev >= 0 {
			s.put64(schedAt+l.schedDev, a(devNamePtrAt-devInitName))
			s.put64(devNamePtrAt, a(devNameAt))
			s.putStr(devNameAt, "0000:03:00.0")
		}
		s.flush(t)
		return s
	}
	s73, s61 := fake(l73), fake(l61)
	// pt_regs of an ioctl(fd, TCGETS, 0) for raw_tp sys_enter, in the 7.3 scratch.
	null, err := os.Open("/dev/null")
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	regs := kernelStruct(t, "pt_regs")
	s73.put64(regsAt+memberOffset(t, regs, "di"), uint64(null.Fd()))
	s73.put64(regsAt+memberOffset(t, regs, "si"), unix.TCGETS)
	s73.flush(t)

	type hookCase struct {
		name, family, prog string
		majors             []uint32 // syscalls family: --drm-major
		layout             *schedLayout
		gpuIRQ             bool
		args               func() []uint64
	}
	a73 := func(off int) uint64 { return s73.addr + uint64(off) }
	a61 := func(off int) uint64 { return s61.addr + uint64(off) }
	cases := []hookCase{
		{name: "drm_sched_job_queue", family: famSched, prog: "rawtp_drm_sched_job_queue", layout: &l73, args: func() []uint64 { return []uint64{a73(jobAt), 0xffff888000002000} }},
		{name: "drm_sched_job_run", family: famSched, prog: "rawtp_drm_sched_job_run", layout: &l73, args: func() []uint64 { return []uint64{a73(jobAt), 0xffff888000002000} }},
		{name: "drm_sched_job_done", family: famSched, prog: "rawtp_drm_sched_job_done", layout: &l73, args: func() []uint64 { return []uint64{a73(fenceAt)} }},
		{name: "drm_sched_job_add_dep", family: famSched, prog: "rawtp_drm_sched_job_add_dep", layout: &l73, args: func() []uint64 { return []uint64{a73(jobAt), a73(hwAt)} }},
		{name: "drm_sched_job(6.1)", family: famSched, prog: "rawtp_drm_sched_job", layout: &l61, args: func() []uint64 { return []uint64{a61(jobAt), 0xffff888000002000} }},
		{name: "drm_run_job(6.1)", family: famSched, prog: "rawtp_drm_run_job", layout: &l61, args: func() []uint64 { return []uint64{a61(jobAt), 0xffff888000002000} }},
		{name: "drm_sched_process_job(6.1)", family: famSched, prog: "rawtp_drm_sched_process_job", layout: &l61, args: func() []uint64 { return []uint64{a61(fenceAt)} }},
		{name: "dma_fence_init", family: famFence, prog: "rawtp_dma_fence_init", args: func() []uint64 { return []uint64{a73(hwAt)} }},
		{name: "dma_fence_emit", family: famFence, prog: "rawtp_dma_fence_emit", args: func() []uint64 { return []uint64{a73(hwAt)} }},
		{name: "dma_fence_signaled", family: famFence, prog: "rawtp_dma_fence_signaled", args: func() []uint64 { return []uint64{a73(hwAt)} }},
		{name: "irq_handler_entry(miss)", family: famIRQ, prog: "rawtp_irq_handler_entry", args: func() []uint64 { return []uint64{7, 0} }},
		{name: "irq_handler_entry(gpu)", family: famIRQ, prog: "rawtp_irq_handler_entry", gpuIRQ: true, args: func() []uint64 { return []uint64{7, 0} }},
		{name: "sys_enter(other syscall)", family: famSyscalls, prog: "raw_sys_enter", majors: []uint32{226}, args: func() []uint64 { return []uint64{a73(regsAt), 1} }},
		{name: "sys_enter(ioctl,miss)", family: famSyscalls, prog: "raw_sys_enter", majors: []uint32{226}, args: func() []uint64 { return []uint64{a73(regsAt), 16} }},
		{name: "sys_enter(ioctl,hit)", family: famSyscalls, prog: "raw_sys_enter", majors: []uint32{1}, args: func() []uint64 { return []uint64{a73(regsAt), 16} }},
	}

	floor, err := ebpf.NewProgram(&ebpf.ProgramSpec{Type: ebpf.RawTracepoint, License: "GPL",
		Instructions: asm.Instructions{asm.Mov.Imm(asm.R0, 0), asm.Return()}})
	if err != nil {
		t.Fatal(err)
	}
	defer floor.Close()

	measure := func(p *ebpf.Program, args []uint64) (float64, uint64) {
		s0, err := p.Stats()
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < runs; i++ {
			if _, err := p.Run(&ebpf.RunOptions{Context: args}); err != nil {
				t.Fatal(err)
			}
		}
		s1, _ := p.Stats()
		n := s1.RunCount - s0.RunCount
		return float64(s1.Runtime-s0.Runtime) / float64(n), n
	}

	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fmt.Fprintln(f, "round\thook\tprogram\truns\tns_per_run\tfloor_ns_per_run")
	for r := 1; r <= rounds; r++ {
		for _, c := range cases {
			floorNs, _ := measure(floor, []uint64{0, 0})
			cfg, _ := DefaultConfig().withDefaults()
			if c.majors != nil {
				cfg.DRMMajors = c.majors
			}
			ld := newLoader(cfg, zap.NewNop())
			if c.layout != nil {
				ld.progOpts = ebpf.ProgramOptions{ExtraRelocationTargets: []*btf.Spec{drmSchedTypes(t, *c.layout)}}
			}
			if err := ld.loadCommon(); err != nil {
				t.Fatal(err)
			}
			fam, err := ld.family(c.family)
			if err != nil {
				t.Fatal(err)
			}
			if c.gpuIRQ {
				if err := fam.maps["gpu_irqs"].Update(int32(7), uint32(0), ebpf.UpdateAny); err != nil {
					t.Fatal(err)
				}
			}
			p, err := ld.loadProgram(fam, c.prog, rung{})
			if err != nil {
				t.Fatalf("%s: %v", c.prog, err)
			}
			rd, err := ringbuf.NewReader(ld.objs.eventsMap())
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() { // drain, so that reserve never fails for want of space
				defer close(done)
				var rec ringbuf.Record
				for ctx.Err() == nil {
					rd.SetDeadline(time.Now().Add(5 * time.Millisecond))
					for rd.ReadInto(&rec) == nil {
					}
				}
			}()
			ns, n := measure(p, c.args())
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
			p.Close()
			ld.objs.close()
			if lost > 0 {
				t.Errorf("%s: %d reserve failures: the number is too low", c.name, lost)
			}
			fmt.Fprintf(f, "%d\t%s\t%s\t%d\t%.1f\t%.1f\n", r, c.name, c.prog, n, ns, floorNs)
			t.Logf("%d %-28s %7.1f ns/run (floor %.1f)", r, c.name, ns, floorNs)
		}
	}
}
