//go:build linux

// The fence filter's kernel half for drivers whose job events name no fence context
// (virtio_gpu, bpf/fence.c): a fence emitted by a thread inside a followed ioctl teaches the
// filter its context; the same emit outside an ioctl, and other events inside one, do not.

package probe

import (
	"os"
	"runtime"
	"syscall"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"
	"go.uber.org/zap"
	"golang.org/x/sys/unix"

	"github.com/ghostdriver/ghostdriver/internal/event"
)

func TestFenceFilterLearnsAFenceEmittedInAFollowedIoctl(t *testing.T) {
	requireRoot(t)
	cfg := DefaultConfig()
	cfg.DRMMajors = []uint32{1} // /dev/null stands for the DRM file
	cfg.FenceFilter = true
	l, rep, err := Open(cfg, zap.NewNop())
	if err != nil {
		t.Fatalf("Open: %v\n%s", err, rep)
	}
	defer l.Close()
	if err := l.SetProcess(uint32(os.Getpid()), nil); err != nil {
		t.Fatal(err)
	}
	detach(t, l, l.program(t, "sys_exit")) // the ioctl's slot stays as its entry left it
	ld := &loader{cfg: l.cfg, log: zap.NewNop(), cache: btf.NewCache(), objs: l.objs}
	prog := func(name string) *ebpf.Program {
		p, err := ld.loadProgram(l.objs.families[famFence], name, rung{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { p.Close() })
		return p
	}
	emit, signaled := prog("rawtp_dma_fence_emit"), prog("rawtp_dma_fence_signaled")
	df := kernelStruct(t, "dma_fence")
	fake := func(ctx, seq uint64) uint64 {
		s := newScratch(t)
		s.put64(memberOffset(t, df, "context"), ctx)
		s.put64(memberOffset(t, df, "seqno"), seq)
		s.flush(t)
		return s.addr
	}
	const job, other = 0x77, 0x78
	jobFence, otherFence := fake(job, 5), fake(other, 9)
	ctxs := l.objs.families[famFence].maps[fenceMapFenceCtxs]
	followed := func(ctx uint64) bool {
		var v uint8
		return ctxs.Lookup(ctx, &v) == nil
	}
	testRun := func(p *ebpf.Program, fence uint64) {
		if _, err := p.Run(&ebpf.RunOptions{Context: []uint64{fence}}); err != nil {
			t.Error(err)
		}
	}
	f, err := os.Open("/dev/null")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()

	sink, stop := startRun(t, l)
	defer stop()
	tid := make(chan int)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		testRun(emit, jobFence) // outside any ioctl: passed over, not learnt
		if followed(job) {
			t.Error("a fence emitted outside any ioctl taught the filter its context")
		}
		_, _, _ = syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), uintptr(unix.TCGETS), 0)
		testRun(signaled, otherFence) // inside, but a signal: passed over, not learnt
		testRun(emit, jobFence)       // inside the ioctl: sent, learnt
		testRun(signaled, jobFence)   // the learnt context's signal: sent
		tid <- unix.Gettid()
	}()
	me := <-tid
	if !followed(job) || followed(other) {
		t.Errorf("followed contexts: %#x %v, %#x %v; want only the one emitted inside the ioctl", job, followed(job), other, followed(other))
	}
	mine := threadEventsUntilFence(t, sink, me)
	if len(mine) != 3 || mine[0].Kind != event.IoctlEnter || mine[1].Kind != event.FenceEmit || mine[2].Kind != event.FenceSignaled ||
		mine[1].Fence.Context != job || mine[2].Fence.Context != job {
		t.Fatalf("the thread's events: %v %+v, want its ioctl entry, the job fence's emit and signal", kindsOf(mine), mine)
	}
	if d := l.kernelDrops(); d[event.KernelDropFencePassedOver] != 2 {
		t.Errorf("drops %v, want two %s (the emit outside the ioctl, the other context's signal)", d, event.KernelDropFencePassedOver)
	}
}
