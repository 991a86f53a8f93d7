//go:build linux

// Issue "silent degradation made visible", kernel side: each place where the kernel side
// can drop or misattribute is provoked on this host and must show in the source's stats
// (SourceStats.KernelDrops → ghostdriver.source.kernel_drops), and the syscall hooks' tracefs
// is mounted by the loader or the fallback is said loudly. Root, real tracepoints.
package probe

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/ringbuf"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
	"golang.org/x/sys/unix"

	"github.com/ghostdriver/ghostdriver/internal/capability"
	"github.com/ghostdriver/ghostdriver/internal/event"
	"github.com/ghostdriver/ghostdriver/internal/tenant/appctx"
	"github.com/ghostdriver/ghostdriver/internal/testreq"
)

// requireNoTracefs skips when tracefs is mounted: these tests are about a host without it
// (this CI machine mounts none); another process's mount is never undone here. A loader
// of another test package running beside this one holds its mount only until its hooks
// are attached, so such a mount is waited out first.
func requireNoTracefs(t *testing.T) {
	t.Helper()
	var fs string
	for end := time.Now().Add(foreignTracefsWait); ; time.Sleep(50 * time.Millisecond) {
		if fs, _ = mountedAt(tracefsMountPoint); fs == "" && HaveTracefs() != nil {
			return
		}
		if time.Now().After(end) {
			break
		}
	}
	testreq.Skip(t, testreq.TracefsUnmounted, fmt.Sprintf("tracefs is mounted on this host (%s: %q) and stayed so for %v: the mount/fallback cases need a host without it", tracefsMountPoint, fs, foreignTracefsWait))
}

// foreignTracefsWait bounds how long requireNoTracefs waits for another process's mount.
const foreignTracefsWait = 10 * time.Second

func attachedIoctlHook(rep capability.Report) string {
	for _, e := range rep.Entries {
		if e.Stage == StageIoctl && e.Status == capability.StatusAttached && strings.Contains(e.Hook, "enter") {
			return e.Hook
		}
	}
	return ""
}

// Where tracefs is not mounted the loader mounts it, hooks the syscall tracepoints (not
// raw_tp sys_enter, which runs for every syscall), logs the mount, and unmounts it once
// attached: nothing stays mounted, and the attached tracepoints still deliver. Before the
// loader mounted tracefs this host got raw_tp/sys_enter here.
func TestLoaderMountsTracefsWhenUnmounted(t *testing.T) {
	requireRoot(t)
	requireNoTracefs(t)
	core, logs := observer.New(zapcore.InfoLevel)
	cfg := DefaultConfig()
	cfg.DRMMajors = []uint32{10} // /dev/fuse: no other test follows it
	l, rep, err := Open(cfg, zap.New(core))
	if err != nil {
		t.Fatalf("Open: %v\n%s", err, rep)
	}
	fs, _ := mountedAt(tracefsMountPoint)
	hook := attachedIoctlHook(rep)
	sink, stop := startRun(t, l)
	const n = 3
	tid, _ := ioctlsOnOwnThread(t, "/dev/fuse", n)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if e, x := threadEvents(sink, tid); len(e) >= n && len(x) >= n {
			break
		}
	}
	stop()
	if cerr := l.Close(); cerr != nil {
		t.Errorf("Close: %v", cerr)
	}
	if fs != "" {
		t.Errorf("after Open %s still holds %q, want nothing mounted", tracefsMountPoint, fs)
	}
	if e, x := threadEvents(sink, tid); len(e) != n || len(x) != n {
		t.Errorf("tracepoints attached, tracefs unmounted: %d enters, %d exits, want %d each", len(e), len(x), n)
	}
	if hook != "tracepoint/syscalls/sys_enter_ioctl" {
		t.Errorf("ioctl hook %q, want the syscall tracepoint\n%s", hook, rep)
	}
	if !strings.HasPrefix(rep.Tracefs, "mounted by ghostdriver") || SyscallFallback(rep) {
		t.Errorf("report: tracefs %q, fallback %v", rep.Tracefs, SyscallFallback(rep))
	}
	if n := logs.FilterMessageSnippet("ghostdriver mounted it").Len(); n != 1 {
		t.Errorf("%d log lines say the mount, want 1: %v", n, logs.All())
	}
	if logs.FilterLevelExact(zapcore.WarnLevel).Len() != 0 {
		t.Errorf("warnings with tracefs mounted: %v", logs.FilterLevelExact(zapcore.WarnLevel).All())
	}
	if fs, _ := mountedAt(tracefsMountPoint); fs != "" {
		t.Errorf("after Close %s still holds %q", tracefsMountPoint, fs)
	}
}

// With the mount forbidden the loader falls back to raw_tp sys_enter/sys_exit, says so
// once at warn level with the measured cost, and doctor's verdict carries the warning.
func TestLoaderFallbackWarnsWhenMountForbidden(t *testing.T) {
	requireRoot(t)
	requireNoTracefs(t)
	core, logs := observer.New(zapcore.InfoLevel)
	cfg := DefaultConfig()
	cfg.DRMMajors = []uint32{1}
	cfg.NoTracefsMount = true
	l, rep, err := Open(cfg, zap.New(core))
	if err != nil {
		t.Fatalf("Open: %v\n%s", err, rep)
	}
	fs, _ := mountedAt(tracefsMountPoint)
	l.Close()
	if fs != "" {
		t.Errorf("mount forbidden, yet %s holds %q", tracefsMountPoint, fs)
	}
	if hook := attachedIoctlHook(rep); hook != "raw_tp/sys_enter" || !SyscallFallback(rep) {
		t.Fatalf("ioctl hook %q (fallback %v), want raw_tp/sys_enter\n%s", hook, SyscallFallback(rep), rep)
	}
	if !strings.Contains(rep.Tracefs, "forbidden") {
		t.Errorf("report tracefs line %q does not say the mount is forbidden", rep.Tracefs)
	}
	warns := logs.FilterLevelExact(zapcore.WarnLevel).All()
	if len(warns) != 1 || !strings.Contains(warns[0].Message, "every syscall of the host") ||
		!strings.Contains(warns[0].Message, "ns on every syscall") || !strings.Contains(warns[0].Message, "forbidden") {
		t.Errorf("want one warning with the cost and the cause, got %v", warns)
	}
	v := Assess(rep, Host{Tracefs: HaveTracefs(), SchedModule: true, DRMDevices: []string{"card0"}})
	if len(v.Warnings) != 1 || !strings.Contains(v.Line, "WARNING: submit ioctls are hooked with raw_tp") {
		t.Errorf("verdict does not warn: %+v", v)
	}
}

// sinkEvents of one thread, by kind.
func threadEvents(sink *collectSink, tid int) (enters, exits []event.Event) {
	evs, _ := sink.snapshot()
	for _, e := range evs {
		if int(e.TID) != tid {
			continue
		}
		switch e.Kind {
		case event.IoctlEnter:
			enters = append(enters, e)
		case event.IoctlExit:
			exits = append(exits, e)
		}
	}
	return
}

// lockedThread runs functions on one OS thread of its own.
type lockedThread struct {
	do  chan func()
	tid int
}

func newLockedThread(t *testing.T) *lockedThread {
	lt := &lockedThread{do: make(chan func())}
	ready := make(chan int)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		ready <- unix.Gettid()
		for f := range lt.do {
			f()
		}
	}()
	lt.tid = <-ready
	t.Cleanup(func() { close(lt.do) })
	return lt
}

func (lt *lockedThread) run(f func()) {
	done := make(chan struct{})
	lt.do <- func() { f(); close(done) }
	<-done
}

func tcgets(fd int) {
	_, _, _ = syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), uintptr(unix.TCGETS), 0)
}

// A followed ioctl whose entry record finds the ring full leaves nothing in flight: its
// own exit (for which the ring has room) and the thread's next exit of an ioctl that is
// not followed send nothing; only the marker's pair comes. Before the entry reserved its
// record first, the slot was marked before the failed reservation and the exit went out
// without its entry (1 enter, 2 exits in this test, on both paths).
func TestFailedEnterReservationLeavesNoSlot(t *testing.T) {
	requireRoot(t)
	onBothIoctlPaths(t, testFailedEnterReservation)
}

func testFailedEnterReservation(t *testing.T, noTaskStorage bool) {
	cfg := DefaultConfig()
	// /dev/fuse (misc, major 10): followed, and no other test's ioctls (theirs go to
	// /dev/null, major 1) share the one-page ring; a pipe: not followed.
	cfg.DRMMajors = []uint32{10}
	// Fill the ring (nobody reads yet) from another thread until less room is left than
	// an entry record takes but at least what an exit record does; then the thread under
	// test runs a followed ioctl: its entry cannot reserve its record, its exit could. The
	// ring is the smallest whose size, less whole entry+exit pairs, leaves such a gap.
	entry := 8 + int(unsafe.Sizeof(commonIoctlEnterRecord{}))
	exit := 8 + int(unsafe.Sizeof(commonIoctlExitRecord{}))
	ring, pairs := 0, 0
	for size := os.Getpagesize(); size <= 1<<20 && ring == 0; size *= 2 {
		if k := (size - exit) / (entry + exit); size-k*(entry+exit) < entry {
			ring, pairs = size, k
		}
	}
	cfg.RingBufferBytes = ring
	if ring == 0 {
		t.Fatalf("no ring up to 1 MiB leaves between %d and %d bytes after whole pairs of %d", exit, entry, entry+exit)
	}
	cfg.noTaskStorage = noTaskStorage
	l, rep, err := Open(cfg, zap.NewNop())
	if err != nil {
		t.Fatalf("Open: %v\n%s", err, rep)
	}
	defer l.Close()
	null, err := os.Open("/dev/fuse")
	if err != nil {
		testreq.Skip(t, testreq.DevFuse, "no /dev/fuse to follow: "+err.Error())
	}
	defer null.Close()
	var p [2]int
	if err := unix.Pipe(p[:]); err != nil {
		t.Fatal(err)
	}
	defer unix.Close(p[0])
	defer unix.Close(p[1])

	filler := newLockedThread(t)
	filler.run(func() {
		for i := 0; i < pairs; i++ {
			tcgets(int(null.Fd()))
		}
	})
	if lost := l.Stats().Lost; lost != 0 {
		t.Fatalf("the filler lost %d records (another process's ioctls on major 10?)", lost)
	}
	under := newLockedThread(t)
	under.run(func() { tcgets(int(null.Fd())) })
	if lost := l.Stats().Lost; lost != 1 {
		t.Fatalf("lost %d records with the ioctl under test, want its entry only", lost)
	}
	// Drain, then: an ioctl that is not followed (a pipe), then a followed one as the marker.
	sink, stop := startRun(t, l)
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, exits := threadEvents(sink, filler.tid)
		if len(exits) > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	under.run(func() {
		_, _, _ = syscall.Syscall(syscall.SYS_IOCTL, uintptr(p[0]), uintptr(unix.TIOCINQ), 0)
		tcgets(int(null.Fd()))
	})
	for time.Now().Before(deadline) {
		enters, exits := threadEvents(sink, under.tid)
		if len(enters) >= 1 && len(exits) >= 1 && exits[len(exits)-1].Fd == int32(null.Fd()) && len(enters) == 1 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	stop()
	enters, exits := threadEvents(sink, under.tid)
	if len(enters) != 1 || len(exits) != 1 {
		t.Fatalf("thread under test: %d enters, %d exits after a lost entry, want 1 and 1 (the marker): exits %+v",
			len(enters), len(exits), exits)
	}
	if exits[0].Cmd != unix.TCGETS || exits[0].Time < enters[0].Time {
		t.Errorf("the exit is not the marker's: %+v (enter %+v)", exits[0], enters[0])
	}
}

// possibleCPUs is the kernel's count of possible CPUs (an LRU hash rounds its size up to it).
func possibleCPUs(t *testing.T) int {
	n, err := ebpf.PossibleCPU()
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// The pre-5.11 tid table is an LRU hash: when it is full of tids whose exits never came,
// a new followed ioctl still gets its exit record, and the evicted entries are counted.
// With the plain hash of before, the full table refused the entry: 0 of 5 exits here.
// Expected evictions come from the table itself: the fake entries that are gone.
func TestInflightTableFullEvictsAndCounts(t *testing.T) {
	requireRoot(t)
	cfg := DefaultConfig()
	cfg.DRMMajors = []uint32{10} // /dev/fuse: no other test follows it
	cfg.noTaskStorage = true
	cfg.InflightThreads = 4
	l, rep, err := Open(cfg, zap.NewNop())
	if err != nil {
		t.Fatalf("Open: %v\n%s", err, rep)
	}
	defer l.Close()
	f := l.objs.families[famSyscalls]
	m := f.maps["inflight"]
	size := int(m.MaxEntries())
	if size < 4 {
		size = 4
	}
	if c := possibleCPUs(t); size < c {
		size = c
	}
	// Fill the table with tids that are no thread (pid_max is at most 2^22) and count them
	// in inflight_n, as their entries would have been.
	fakes := make([]uint32, size)
	for i := range fakes {
		fakes[i] = 1<<30 + uint32(i)
		if err := m.Update(fakes[i], make([]byte, m.ValueSize()), ebpf.UpdateAny); err != nil {
			t.Fatalf("fake entry %d of %d: %v", i, size, err)
		}
	}
	if err := f.coll.Variables["inflight_n"].Set(uint64(size)); err != nil {
		t.Fatal(err)
	}
	sink, stop := startRun(t, l)
	const n = 5
	tid, _ := ioctlsOnOwnThread(t, "/dev/fuse", n)
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if e, x := threadEvents(sink, tid); len(e) >= n && len(x) >= n {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	stop()
	enters, exits := threadEvents(sink, tid)
	if len(enters) != n || len(exits) != n {
		t.Fatalf("full table: %d enters, %d exits, want %d each", len(enters), len(exits), n)
	}
	gone := 0
	var a []byte
	for _, k := range fakes {
		if err := m.Lookup(k, &a); err != nil {
			gone++
		}
	}
	drops := l.Stats().KernelDrops
	if gone == 0 || drops[event.KernelDropIoctlSlotEvicted] != uint64(gone) {
		t.Errorf("%d fake entries evicted, counted %d (%v)", gone, drops[event.KernelDropIoctlSlotEvicted], drops)
	}
	if drops[event.KernelDropIoctlSlotUnavailable] != 0 {
		t.Errorf("slots refused with an LRU table: %v", drops)
	}
}

// A thread that exits with a followed ioctl in flight (its slot still set: here put there
// by hand, as an entry whose exit never ran would be) has the slot cleared and counted at
// sched_process_exit. Before, the tid kept its entry until the table filled.
func TestThreadExitInsideIoctlCounted(t *testing.T) {
	requireRoot(t)
	cfg := DefaultConfig()
	cfg.DRMMajors = []uint32{1}
	cfg.noTaskStorage = true
	l, rep, err := Open(cfg, zap.NewNop())
	if err != nil {
		t.Fatalf("Open: %v\n%s", err, rep)
	}
	defer l.Close()
	if !rep.StageAttached(StageProcess) {
		t.Fatalf("process lifecycle hooks not attached:\n%s", rep)
	}
	f := l.objs.families[famSyscalls]
	m := f.maps["inflight"]
	// A child process (its one thread's tid is its pid), killed while its slot is set.
	child := exec.Command("sleep", "60")
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	tid := uint32(child.Process.Pid)
	if err := m.Update(tid, make([]byte, m.ValueSize()), ebpf.UpdateAny); err != nil {
		t.Fatal(err)
	}
	if err := f.coll.Variables["inflight_n"].Set(uint64(1)); err != nil {
		t.Fatal(err)
	}
	child.Process.Kill()
	child.Wait()
	var a []byte
	deadline := time.Now().Add(10 * time.Second)
	for m.Lookup(tid, &a) == nil && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if err := m.Lookup(tid, &a); err == nil {
		t.Fatalf("tid %d exited and still has its entry", tid)
	}
	if d := l.Stats().KernelDrops; d[event.KernelDropIoctlThreadExited] != 1 || d[event.KernelDropIoctlSlotEvicted] != 0 {
		t.Errorf("drops %v, want one %s", d, event.KernelDropIoctlThreadExited)
	}
}

// The procs table full: SetProcess fails with a clear error and the refusal is counted
// (before: only the enricher's KernelErrs, never exported).
func TestProcessTableFullCounted(t *testing.T) {
	requireRoot(t)
	cfg := DefaultConfig()
	cfg.DRMMajors = []uint32{1}
	l, rep, err := Open(cfg, zap.NewNop())
	if err != nil {
		t.Fatalf("Open: %v\n%s", err, rep)
	}
	defer l.Close()
	m := l.objs.procsMap()
	size := m.MaxEntries()
	v := appctx.KernelRecipeOf(nil)
	for pid := uint32(0); pid < size; pid++ {
		if err := m.Update(1<<30+pid, &v, ebpf.UpdateAny); err != nil {
			t.Fatalf("filling procs at %d of %d: %v", pid, size, err)
		}
	}
	err = l.SetProcess(uint32(os.Getpid()), nil)
	if err == nil || !strings.Contains(err.Error(), "process table is full") {
		t.Fatalf("SetProcess on a full table: %v", err)
	}
	if d := l.Stats().KernelDrops; d[event.KernelDropProcessTableFull] != 1 {
		t.Errorf("drops %v, want one %s", d, event.KernelDropProcessTableFull)
	}
}

// The GPU interrupt hooks are opt-in (Config.IRQNames): with the default configuration a
// GPU line in /proc/interrupts (a stand-in with an amdgpu line from the start) attaches no
// irq hook, the re-read finds nothing late, and the report says why; with the known names
// the same line attaches both hooks at Start.
func TestIRQHooksOnlyWhenAskedFor(t *testing.T) {
	requireRoot(t)
	fake := t.TempDir() + "/interrupts"
	const lines = "           CPU0       CPU1\n  0:         46          0   IO-APIC   2-edge      timer\n" +
		" 1000:          3          0   PCI-MSI 524288-edge      amdgpu\n"
	if err := os.WriteFile(fake, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	old := procInterrupts
	procInterrupts = fake
	defer func() { procInterrupts = old }()

	for _, tc := range []struct {
		name  string
		names []string
		want  int // irq hooks attached
	}{{"default", nil, 0}, {"known names", GPUIRQNames, 2}} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.DRMMajors = []uint32{1}
			cfg.IRQNames = tc.names
			cfg.IRQRefreshInterval = 20 * time.Millisecond
			l, rep, err := Open(cfg, zap.NewNop())
			if err != nil {
				t.Fatalf("Open: %v\n%s", err, rep)
			}
			defer l.Close()
			_, stop := startRun(t, l)
			time.Sleep(200 * time.Millisecond) // ten re-reads
			stop()
			st := l.Stats()
			attached := 0
			for _, h := range st.Hooks {
				if h.Stage == StageIRQ && h.Status == capability.StatusAttached {
					attached++
				}
			}
			if attached != tc.want {
				t.Errorf("%d irq hooks attached, want %d:\n%s", attached, tc.want, rep)
			}
			if late := st.KernelDrops[event.KernelDropIRQFoundLate]; late != 0 {
				t.Errorf("%d GPU lines counted as found late, want 0 (the line was there at Start)", late)
			}
			if tc.want == 0 {
				for _, e := range rep.Entries {
					if e.Stage == StageIRQ && !contains(e.Reason, "not asked for") {
						t.Errorf("%s: reason %q, want it to say the hooks were not asked for", e.Hook, e.Reason)
					}
				}
			}
		})
	}
}

// A GPU interrupt line that appears after Start (here: a /proc/interrupts stand-in gains an
// amdgpu line; this host has no DRM device to bind) is found by the periodic re-read: it
// goes into gpu_irqs, the irq hooks (left out at Start) attach, and the line is counted.
// What is not tested here: a real device's interrupts reaching the hooks (TestTestRunIRQ
// runs their bodies).
func TestIRQLineFoundAfterStart(t *testing.T) {
	requireRoot(t)
	dir := t.TempDir()
	fake := dir + "/interrupts"
	const head = "           CPU0       CPU1\n  0:         46          0   IO-APIC   2-edge      timer\n"
	if err := os.WriteFile(fake, []byte(head), 0o644); err != nil {
		t.Fatal(err)
	}
	old := procInterrupts
	procInterrupts = fake
	defer func() { procInterrupts = old }()

	cfg := DefaultConfig()
	cfg.DRMMajors = []uint32{1}
	cfg.IRQNames = GPUIRQNames
	cfg.IRQRefreshInterval = 20 * time.Millisecond
	l, rep, err := Open(cfg, zap.NewNop())
	if err != nil {
		t.Fatalf("Open: %v\n%s", err, rep)
	}
	defer l.Close()
	if rep.StageAttached(StageIRQ) {
		t.Fatalf("irq hooks attached with no GPU line:\n%s", rep)
	}
	_, stop := startRun(t, l)
	defer stop()
	const irq = 1000 // no such line here: nothing real is added to the map's meaning
	if err := os.WriteFile(fake, []byte(head+" 1000:          3          0   PCI-MSI 524288-edge      amdgpu\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for l.Stats().KernelDrops[event.KernelDropIRQFoundLate] == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	st := l.Stats()
	if st.KernelDrops[event.KernelDropIRQFoundLate] != 1 {
		t.Fatalf("drops %v, want one %s", st.KernelDrops, event.KernelDropIRQFoundLate)
	}
	var u uint32
	if err := l.objs.families[famIRQ].maps["gpu_irqs"].Lookup(int32(irq), &u); err != nil {
		t.Errorf("irq %d not in gpu_irqs: %v", irq, err)
	}
	attached := 0
	for _, h := range st.Hooks {
		if h.Stage == StageIRQ && h.Status == capability.StatusAttached {
			attached++
		}
	}
	if attached != 2 {
		t.Errorf("%d irq hooks attached after the line appeared, want entry and exit: %+v", attached, st.Hooks)
	}
}

// The fence filter (bpf/fence.c, Config.FenceFilter): a dma_fence event of a context in no
// GPU job is passed over and counted; once user space follows the context (as it does for
// the contexts of decoded job events) the same event is sent. No dma_fence is produced on
// this host (no sw_sync, no DRM), so the program body runs on a fake fence (test run).
func TestFenceFilterPassesOverAndCounts(t *testing.T) {
	requireRoot(t)
	df := kernelStruct(t, "dma_fence")
	s := newScratch(t)
	const ctx, seq = 0x77, 5
	s.put64(memberOffset(t, df, "context"), ctx)
	s.put64(memberOffset(t, df, "seqno"), seq)
	s.flush(t)

	cfg, _ := DefaultConfig().withDefaults()
	cfg.FenceFilter = true
	ld := newLoader(cfg, zap.NewNop())
	if err := ld.loadCommon(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ld.objs.close() })
	f, err := ld.family(famFence)
	if err != nil {
		t.Fatal(err)
	}
	p, err := ld.loadProgram(f, "rawtp_dma_fence_signaled", rung{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	rd, err := ringbuf.NewReader(ld.objs.eventsMap())
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	run := func() (event.Event, bool) {
		t.Helper()
		if _, err := p.Run(&ebpf.RunOptions{Context: []uint64{s.addr}}); err != nil {
			t.Fatal(err)
		}
		rd.SetDeadline(time.Now().Add(200 * time.Millisecond))
		rec, err := rd.Read()
		if err != nil {
			return event.Event{}, false
		}
		var ev event.Event
		if err := (&decoder{}).decode(rec.RawSample, &ev); err != nil {
			t.Fatal(err)
		}
		return ev, true
	}
	if ev, ok := run(); ok {
		t.Fatalf("a fence of an unfollowed context was sent: %+v", ev)
	}
	l := &Live{objs: ld.objs}
	if d := l.kernelDrops(); d[event.KernelDropFencePassedOver] != 1 {
		t.Fatalf("drops %v, want one %s", d, event.KernelDropFencePassedOver)
	}
	// A job event naming the context's finished fence (ctx+1): the scheduled one (ctx) is followed too.
	fc := newFenceContexts(ld.objs, true)
	fc.follow(&event.Event{Kind: event.JobQueue, Fence: event.FenceKey{Context: ctx + 1, Seqno: seq}})
	if ev, ok := run(); !ok || ev.Fence != (event.FenceKey{Context: ctx, Seqno: seq}) {
		t.Fatalf("followed context: record %v %+v", ok, ev)
	}
	if d := l.kernelDrops(); d[event.KernelDropFencePassedOver] != 1 {
		t.Errorf("drops %v after the followed event, want still one", d)
	}
}

// A followed ioctl that enters while the thread's previous one is still marked in flight
// (its exit never recorded: here the mark is set by hand, as an exit hook that found no
// slot or was skipped would leave it) is counted as ioctl_exit_missed, on both paths, and
// its own exit is still recorded. Before, the stale mark was overwritten silently (and on
// the tid-hash path inflight_n drifted up by one).
func TestIoctlExitMissedCounted(t *testing.T) {
	requireRoot(t)
	onBothIoctlPaths(t, testIoctlExitMissed)
}

func testIoctlExitMissed(t *testing.T, noTaskStorage bool) {
	cfg := DefaultConfig()
	cfg.DRMMajors = []uint32{10} // /dev/fuse: no other test follows it
	cfg.noTaskStorage = noTaskStorage
	l, rep, err := Open(cfg, zap.NewNop())
	if err != nil {
		t.Fatalf("Open: %v\n%s", err, rep)
	}
	defer l.Close()
	fuse, err := os.Open("/dev/fuse")
	if err != nil {
		testreq.Skip(t, testreq.DevFuse, "no /dev/fuse to follow: "+err.Error())
	}
	defer fuse.Close()
	f := l.objs.families[famSyscalls]
	th := newLockedThread(t)
	// The stale mark of a followed ioctl whose exit was never recorded.
	if noTaskStorage {
		m := f.maps["inflight"]
		if err := m.Update(uint32(th.tid), make([]byte, m.ValueSize()), ebpf.UpdateAny); err != nil {
			t.Fatal(err)
		}
	} else {
		const pidfdThread = unix.O_EXCL // PIDFD_THREAD (Linux 6.9+): a pidfd of this thread, not its process
		pidfd, err := unix.PidfdOpen(th.tid, pidfdThread)
		if err != nil {
			testreq.Skip(t, testreq.PidfdThread, "pidfd of a thread (PIDFD_THREAD, 6.9+): "+err.Error())
		}
		defer unix.Close(pidfd)
		slot := make([]byte, f.maps["inflight_ts"].ValueSize())
		slot[16] = 1 // ioctl_slot.active
		if err := f.maps["inflight_ts"].Update(int32(pidfd), slot, ebpf.UpdateAny); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.coll.Variables["inflight_n"].Set(uint64(1)); err != nil {
		t.Fatal(err)
	}
	sink, stop := startRun(t, l)
	th.run(func() { tcgets(int(fuse.Fd())) })
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if e, x := threadEvents(sink, th.tid); len(e) >= 1 && len(x) >= 1 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	stop()
	enters, exits := threadEvents(sink, th.tid)
	if len(enters) != 1 || len(exits) != 1 {
		t.Errorf("%d enters, %d exits, want 1 each", len(enters), len(exits))
	}
	d := l.Stats().KernelDrops
	if d[event.KernelDropIoctlExitMissed] != 1 || d[event.KernelDropIoctlSlotEvicted] != 0 {
		t.Errorf("drops %v, want one %s", d, event.KernelDropIoctlExitMissed)
	}
	var n uint64
	if err := f.coll.Variables["inflight_n"].Get(&n); err != nil || n != 0 {
		t.Errorf("inflight_n %d after the ioctl ended (%v), want 0", n, err)
	}
}
