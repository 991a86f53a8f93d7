//go:build linux

// Deferred ioctl entries (bpf/include/ioctl_slot.h), on this host's syscall hooks: an ioctl
// of a process user space knows sends nothing when nothing of its thread is recorded inside
// it, and is counted in the kernel; the first record of the thread inside the ioctl sends the
// entry first, with the entry's own time and the trace context read at the entry.
package probe

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"
	"github.com/cilium/ebpf/link"
	"github.com/cilium/ebpf/ringbuf"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"
	"golang.org/x/sys/unix"

	"github.com/ghostdriver/ghostdriver/internal/event"
	"github.com/ghostdriver/ghostdriver/internal/kclock"
	"github.com/ghostdriver/ghostdriver/internal/tenant/appctx"
	"github.com/ghostdriver/ghostdriver/internal/testreq"
)

// ioctlsOf counts the ioctl events of tid in the sink.
func ioctlsOf(sink *collectSink, tid int) (enters, exits int) {
	evs, _ := sink.snapshot()
	for _, e := range evs {
		if int(e.TID) != tid {
			continue
		}
		switch e.Kind {
		case event.IoctlEnter:
			enters++
		case event.IoctlExit:
			exits++
		}
	}
	return enters, exits
}

func TestJoblessIoctlsOfKnownProcessesAreCounted(t *testing.T) {
	requireRoot(t)
	for _, tc := range []struct {
		name          string
		known         bool // the process is in the kernel's table (the enricher resolved it)
		sendAll       bool // Config.SendJoblessIoctls
		noTaskStorage bool
		deferred      bool // what the kernel is to do
	}{
		{name: "known", known: true, deferred: true},
		{name: "unknown", known: false},
		{name: "known/send_jobless_ioctls", known: true, sendAll: true},
		{name: "known/no_task_storage", known: true, noTaskStorage: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.DRMMajors = []uint32{1} // /dev/null
			cfg.SendJoblessIoctls = tc.sendAll
			cfg.noTaskStorage = tc.noTaskStorage
			l, rep, err := Open(cfg, zaptest.NewLogger(t, zaptest.Level(zap.InfoLevel)))
			if err != nil {
				t.Fatalf("Open: %v\n%s", err, rep)
			}
			defer l.Close()
			if tc.known {
				if err := l.SetProcess(uint32(os.Getpid()), nil); err != nil {
					t.Fatal(err)
				}
			}
			sink, stop := startRun(t, l)
			defer stop()

			const n = 50
			tid, _ := ioctlsOnOwnThread(t, "/dev/null", n)
			counted := func() uint64 { return l.Stats().KernelDrops[event.KernelDropIoctlWithoutJob] }
			// Wait for what is to come (records or the count), then long enough for anything
			// that should not have come.
			for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
				enters, exits := ioctlsOf(sink, tid)
				if tc.deferred && counted() >= n || !tc.deferred && enters >= n && exits >= n {
					break
				}
			}
			time.Sleep(3 * cfg.PollInterval)
			enters, exits := ioctlsOf(sink, tid)
			if tc.deferred {
				if enters != 0 || exits != 0 || counted() != n {
					t.Fatalf("%d enters, %d exits read, %d counted without a job: want 0, 0, %d", enters, exits, counted(), n)
				}
				return
			}
			if enters != n || exits != n || counted() != 0 {
				t.Fatalf("%d enters, %d exits read, %d counted without a job: want %d, %d, 0", enters, exits, counted(), n, n)
			}
		})
	}
}

// The entry of an ioctl inside which something of the thread is recorded goes out before
// that record, stamped at the entry, with the context read at the entry. The "something" is
// a dma_fence_signaled record, made on the thread by BPF_PROG_TEST_RUN of the hook's raw_tp
// twin while the thread's ioctl is still open: the exit hook is detached, so the slot stays
// as the entry left it.
func TestDeferredIoctlEntryGoesOutBeforeTheThreadsFirstRecord(t *testing.T) {
	requireRoot(t)
	// The trace context comes from OBI's map (as in TestThreadContextOBIPinnedMap): the
	// context read at the entry must travel through the slot into the record.
	pin := filepath.Join(mountBPFFS(t), "traces_ctx_v1")
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
	l, fence, fenceArg := deferredFenceRig(t, cfg, nil)
	defer l.Close()
	defer fence.Close()

	sink, stop := startRun(t, l)
	defer stop()
	f, err := os.Open("/dev/null")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var ids [24]byte
	for i := range ids {
		ids[i] = byte(0x60 + i)
	}
	type result struct {
		tid             int
		before, after   int64 // CLOCK_MONOTONIC around the ioctl
		readBeforeFence int   // the thread's enters read before the fence record was made
	}
	done := make(chan result)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		r := result{tid: unix.Gettid()}
		if err := obi.Update(uint64(os.Getpid())<<32|uint64(r.tid), ids, ebpf.UpdateAny); err != nil {
			t.Error(err)
		}
		r.before = kclock.MonoNow()
		_, _, _ = syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), uintptr(unix.TCGETS), 0)
		r.after = kclock.MonoNow()
		time.Sleep(5 * cfg.PollInterval) // a deferred entry is not read meanwhile
		r.readBeforeFence, _ = ioctlsOf(sink, r.tid)
		if _, err := fence.Run(&ebpf.RunOptions{Context: []uint64{fenceArg}}); err != nil {
			t.Error(err)
		}
		done <- r
	}()
	r := <-done
	if r.readBeforeFence != 0 {
		t.Fatalf("%d entry records read before anything happened inside the ioctl: the entry was not deferred", r.readBeforeFence)
	}
	mine := threadEventsUntilFence(t, sink, r.tid)
	if len(mine) != 2 || mine[0].Kind != event.IoctlEnter || mine[1].Kind != event.FenceSignaled {
		t.Fatalf("the thread's events: %v, want its ioctl entry, then the fence record", kindsOf(mine))
	}
	enter := mine[0]
	if enter.Time < r.before || enter.Time > r.after {
		t.Errorf("entry stamped %d, outside the ioctl [%d, %d]: not the entry's own time", enter.Time, r.before, r.after)
	}
	if enter.Cmd != uint32(unix.TCGETS) || enter.Comm == "" {
		t.Errorf("entry cmd %#x comm %q, want TCGETS and the thread's comm", enter.Cmd, enter.Comm)
	}
	if enter.CtxTier != 2 || string(enter.TraceID[:]) != string(ids[:16]) || string(enter.SpanID[:]) != string(ids[16:]) ||
		enter.TraceFlags != 0x01 {
		t.Errorf("entry context tier %d trace %x span %x flags %02x, want OBI's %x, sampled (01)",
			enter.CtxTier, enter.TraceID, enter.SpanID, enter.TraceFlags, ids)
	}
	if c := deferredNow(t, l.objs); c != 0 {
		t.Errorf("%d entries still marked deferred after the flush", c)
	}
}

// deferredFenceRig opens the live source for a deferred-entry test: this process in the
// kernel's table with recipe tls, the exit hook detached (an ioctl's slot stays as its entry
// left it), and the dma_fence_signaled hook's raw_tp twin on the source's maps with the
// address of a fake fence to run it on (BPF_PROG_TEST_RUN runs it on the calling thread:
// a record of that thread inside its ioctl).
func deferredFenceRig(t *testing.T, cfg Config, tls *appctx.TLSAccess) (*Live, *ebpf.Program, uint64) {
	t.Helper()
	l, rep, err := Open(cfg, zaptest.NewLogger(t, zaptest.Level(zap.InfoLevel)))
	if err != nil {
		t.Fatalf("Open: %v\n%s", err, rep)
	}
	if err := l.SetProcess(uint32(os.Getpid()), tls); err != nil {
		l.Close()
		t.Fatal(err)
	}
	detach(t, l, l.program(t, "sys_exit"))
	ld := &loader{cfg: l.cfg, log: zap.NewNop(), cache: btf.NewCache(), objs: l.objs}
	fence, err := ld.loadProgram(l.objs.families[famFence], "rawtp_dma_fence_signaled", rung{})
	if err != nil {
		l.Close()
		t.Fatal(err)
	}
	df := kernelStruct(t, "dma_fence")
	s := newScratch(t)
	s.put64(memberOffset(t, df, "context"), 0x77)
	s.put64(memberOffset(t, df, "seqno"), 5)
	s.flush(t)
	return l, fence, s.addr
}

// threadEventsUntilFence waits for tid's fence record (the deferred-entry tests make it on
// the thread) and returns every event of tid read by then, in order.
func threadEventsUntilFence(t *testing.T, sink *collectSink, tid int) []event.Event {
	t.Helper()
	evs := waitEvents(t, sink, func(evs []event.Event) bool {
		for _, e := range evs {
			if int(e.TID) == tid && e.Kind == event.FenceSignaled {
				return true
			}
		}
		return false
	})
	var mine []event.Event
	for _, e := range evs {
		if int(e.TID) == tid {
			mine = append(mine, e)
		}
	}
	return mine
}

func kindsOf(evs []event.Event) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.Kind.String()
	}
	return out
}

// detach closes the link of attached program p (the program stays loaded).
func detach(t *testing.T, l *Live, p *ebpf.Program) {
	t.Helper()
	pi, err := p.Info()
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := pi.ID()
	for i, lk := range l.objs.links {
		li, err := lk.Info()
		if err != nil || li.Program != pid {
			continue
		}
		if err := lk.Close(); err != nil {
			t.Fatal(err)
		}
		l.objs.links = append(l.objs.links[:i], l.objs.links[i+1:]...)
		return
	}
	t.Fatalf("no link of program %s", pi.Name)
}

// deferredNow reads the kernel's count of entries waiting in SLOT_DEFERRED.
func deferredNow(t *testing.T, o *objects) uint64 {
	t.Helper()
	var n uint64
	if err := o.common.Maps["ioctl_deferred"].Lookup(uint32(0), &n); err != nil {
		t.Fatal(err)
	}
	return n
}

// The per-job record mode stamps a job's queue into its kernel state and sends nothing, so
// its queue hook sends the submitting thread's deferred entry itself (bpf/jobs.c: on_job):
// the thread's ioctl, deferred by raw_tp sys_enter, goes out when the queue program runs on
// the same thread (BPF_PROG_TEST_RUN on fake scheduler objects, as in
// TestTestRunJobStateFullCounted), before anything else it sends.
func TestJobsQueueSendsTheDeferredEntry(t *testing.T) {
	requireRoot(t)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	df := kernelStruct(t, "dma_fence")
	l := fakeLayout73(int(df.Size), -1)
	s := newScratch(t)
	const jobAt, fenceAt, schedAt, ringAt = 0, 96, 700, 780
	a := func(off int) uint64 { return s.addr + uint64(off) }
	s.put64(jobAt+l.jobSched, a(schedAt))
	s.put64(jobAt+l.jobSFence, a(fenceAt))
	s.put64(fenceAt+l.fenceFinished+memberOffset(t, df, "context"), 9)
	s.put64(fenceAt+l.fenceFinished+memberOffset(t, df, "seqno"), 1)
	s.put64(schedAt+l.schedName, a(ringAt))
	s.putStr(ringAt, "vgpu-ring0")
	s.flush(t)

	cfg, _ := Config{Records: RecordsJobs, DRMMajors: []uint32{1}}.withDefaults()
	ld := newLoader(cfg, zap.NewNop())
	ld.progOpts = ebpf.ProgramOptions{ExtraRelocationTargets: []*btf.Spec{drmSchedTypes(t, l)}}
	if err := ld.loadCommon(); err != nil {
		t.Fatal(err)
	}
	defer ld.objs.close()
	if !ld.defersIoctls() {
		testreq.Skip(t, testreq.TaskStorage, "no task storage on this kernel: ioctl entries are never deferred")
	}
	sys, err := ld.family(famSyscalls)
	if err != nil {
		t.Fatal(err)
	}
	// Known to user space: its ioctls are deferred.
	if err := sys.maps["procs"].Update(uint32(os.Getpid()), make([]byte, sys.maps["procs"].ValueSize()), ebpf.UpdateAny); err != nil {
		t.Fatal(err)
	}
	enter, err := ld.loadProgram(sys, "raw_sys_enter", rung{})
	if err != nil {
		t.Fatal(err)
	}
	defer enter.Close()
	jobs, err := ld.family(famJobs)
	if err != nil {
		t.Fatal(err)
	}
	// The scheduler's names record went out before: the queue sends nothing of its own.
	if err := jobs.maps["sched_seen"].Update(a(schedAt), uint8(1), ebpf.UpdateAny); err != nil {
		t.Fatal(err)
	}
	queue, err := ld.loadProgram(jobs, "jobs_rawtp_drm_sched_job_queue", rung{})
	if err != nil {
		t.Fatal(err)
	}
	defer queue.Close()
	rd, err := ringbuf.NewReader(ld.objs.eventsMap())
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()

	f, err := os.Open("/dev/null")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lk, err := link.AttachRawTracepoint(link.RawTracepointOptions{Name: "sys_enter", Program: enter})
	if err != nil {
		t.Fatal(err)
	}
	_, _, _ = syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), uintptr(unix.TCGETS), 0)
	lk.Close() // no exit hook: the slot stays as the entry left it
	if deferred := deferredNow(t, ld.objs); deferred != 1 {
		t.Fatalf("%d entries deferred after the ioctl, want 1", deferred)
	}
	if _, err := queue.Run(&ebpf.RunOptions{Context: []uint64{a(jobAt), 0}}); err != nil {
		t.Fatal(err)
	}
	jr := &jobsReader{dec: newJobDecoder(&decoder{}), jobs: jobs.maps["jobs"], pending: jobs.maps["jobs_pending"], stats: jobs.maps["jobs_stats"]}
	var out []event.Event
	rd.SetDeadline(time.Now().Add(200 * time.Millisecond))
	for {
		rec, err := rd.Read()
		if err != nil {
			break
		}
		out = jr.dec.decode(rec.RawSample, out, func(n string, err error) { t.Errorf("%s: %v", n, err) })
	}
	tid := uint32(unix.Gettid())
	var mine []event.Event
	for _, e := range out {
		if e.TID == tid {
			mine = append(mine, e)
		}
	}
	if len(mine) != 1 || mine[0].Kind != event.IoctlEnter || mine[0].Cmd != uint32(unix.TCGETS) {
		t.Fatalf("the thread's records after its queue: %v, want its ioctl entry", kindsOf(mine))
	}
	if deferred := deferredNow(t, ld.objs); deferred != 0 {
		t.Errorf("%d entries still deferred after the queue", deferred)
	}
}

// A deferred entry whose thread-context read faulted carries that to its flush: the entry
// goes out without context and is counted (thread_context_unreadable) when it is sent, not
// at the entry. The recipe points beyond the user address space from any thread pointer,
// so the read faults every time.
func TestDeferredIoctlEntryCarriesUnreadableContext(t *testing.T) {
	requireRoot(t)
	cfg := DefaultConfig()
	cfg.DRMMajors = []uint32{1}
	nowhere := &appctx.TLSAccess{Kind: appctx.TLSStatic, TPOffset: 1 << 62}
	l, fence, fenceArg := deferredFenceRig(t, cfg, nowhere)
	defer l.Close()
	defer fence.Close()
	sink, stop := startRun(t, l)
	defer stop()
	f, err := os.Open("/dev/null")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	counted := func() uint64 { return l.Stats().KernelDrops[event.KernelDropThreadContextUnreadable] }
	type result struct {
		tid         int
		tp          bool   // the thread has a user thread pointer (else nothing is read)
		beforeFlush uint64 // counted before the fence record was made
	}
	done := make(chan result)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		r := result{tid: unix.Gettid(), tp: userThreadPointer() != 0}
		// The exit hook is detached: this ioctl's slot stays deferred until the fence
		// record flushes it.
		_, _, _ = syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), uintptr(unix.TCGETS), 0)
		time.Sleep(5 * cfg.PollInterval)
		r.beforeFlush = counted()
		if _, err := fence.Run(&ebpf.RunOptions{Context: []uint64{fenceArg}}); err != nil {
			t.Error(err)
		}
		done <- r
	}()
	r := <-done
	if !r.tp {
		testreq.Skip(t, testreq.UserTP, "this Go thread has no user thread pointer on "+runtime.GOARCH+" (the kernel reads nothing without one): the fault cannot be made here")
	}
	if r.beforeFlush != 0 {
		t.Errorf("%d counted before the entry was sent: a deferred entry's fault is counted when it goes out", r.beforeFlush)
	}
	mine := threadEventsUntilFence(t, sink, r.tid)
	if len(mine) != 2 || mine[0].Kind != event.IoctlEnter {
		t.Fatalf("the thread's events: %v, want its ioctl entry, then the fence record", kindsOf(mine))
	}
	if mine[0].CtxTier != 0 {
		t.Errorf("entry context tier %d, want none (the read faulted)", mine[0].CtxTier)
	}
	if c := counted(); c != 1 {
		t.Errorf("thread_context_unreadable = %d after the flush, want 1", c)
	}
}

// A deferred entry whose read faulted reads again at its flush: the thread is still in the
// same ioctl, so its record is the one the entry would have read, and memory that was not
// mapped at the entry may be by then. Here the slot and the record live in a fresh
// anonymous page that nothing has touched at the entry (no page table entry: the read
// faults), and that the thread writes after the ioctl, before the record that flushes it.
func TestDeferredIoctlEntryRereadsAFaultedContext(t *testing.T) {
	requireRoot(t)
	page, err := unix.Mmap(-1, 0, os.Getpagesize(), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(page)
	base := uint64(uintptr(unsafe.Pointer(&page[0])))
	cfg := DefaultConfig()
	cfg.DRMMajors = []uint32{1}
	type result struct {
		tid         int
		tp          uint64
		beforeFlush uint64
	}
	done := make(chan result)
	ready := make(chan uint64)
	var l *Live
	var fence *ebpf.Program
	var fenceArg uint64
	var sink *collectSink
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		r := result{tid: unix.Gettid(), tp: userThreadPointer()}
		ready <- r.tp
		if r.tp == 0 {
			done <- r
			return
		}
		<-ready // the recipe is in
		f, err := os.Open("/dev/null")
		if err != nil {
			t.Error(err)
			done <- r
			return
		}
		defer f.Close()
		_, _, _ = syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), uintptr(unix.TCGETS), 0) // deferred: the read faults
		// The page mapped now: the slot (its first 8 bytes) points at the record after it.
		binary.NativeEndian.PutUint64(page[0:8], base+64)
		rec := page[64 : 64+28]
		for i := 0; i < 16; i++ {
			rec[i] = byte(0x40 + i) // trace id
		}
		for i := 0; i < 8; i++ {
			rec[16+i] = byte(0x90 + i) // span id
		}
		rec[24] = 1 // valid
		rec[25] = 1 // trace flags: sampled
		r.beforeFlush = l.Stats().KernelDrops[event.KernelDropThreadContextUnreadable]
		if _, err := fence.Run(&ebpf.RunOptions{Context: []uint64{fenceArg}}); err != nil {
			t.Error(err)
		}
		done <- r
	}()
	tp := <-ready
	if tp == 0 {
		<-done
		testreq.Skip(t, testreq.UserTP, "this Go thread has no user thread pointer on "+runtime.GOARCH+" (the kernel reads nothing without one): the recipe cannot be aimed at the page")
	}
	// TLS_STATIC: slot = tp + tp_offset, aimed at the page's start.
	recipe := &appctx.TLSAccess{Kind: appctx.TLSStatic, TPOffset: int64(base - tp)}
	l, fence, fenceArg = deferredFenceRig(t, cfg, recipe)
	defer l.Close()
	defer fence.Close()
	var stop func()
	sink, stop = startRun(t, l)
	defer stop()
	ready <- 0
	r := <-done
	mine := threadEventsUntilFence(t, sink, r.tid)
	var enter *event.Event
	for i, e := range mine {
		if e.Kind == event.IoctlEnter {
			enter = &mine[i]
		}
	}
	if enter == nil {
		t.Fatalf("no entry record of the thread: %v", kindsOf(mine))
	}
	wantTrace := [16]byte{0x40, 0x41, 0x42, 0x43, 0x44, 0x45, 0x46, 0x47, 0x48, 0x49, 0x4a, 0x4b, 0x4c, 0x4d, 0x4e, 0x4f}
	wantSpan := [8]byte{0x90, 0x91, 0x92, 0x93, 0x94, 0x95, 0x96, 0x97}
	if enter.CtxTier != 1 || enter.TraceID != wantTrace || enter.SpanID != wantSpan || enter.TraceFlags != 0x01 {
		t.Errorf("entry context tier %d trace %x span %x flags %02x, want the record read again at the flush: tier 1 %x %x 01",
			enter.CtxTier, enter.TraceID, enter.SpanID, enter.TraceFlags, wantTrace, wantSpan)
	}
	if c := l.Stats().KernelDrops[event.KernelDropThreadContextUnreadable]; c != 0 || r.beforeFlush != 0 {
		t.Errorf("thread_context_unreadable = %d before the flush, %d after, want 0 and 0 (the second read found it)", r.beforeFlush, c)
	}
}
