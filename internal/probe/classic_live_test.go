//go:build linux

package probe

import (
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/ghostdriver/ghostdriver/internal/kclock"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"unsafe"

	"github.com/cilium/ebpf/link"
	"github.com/cilium/ebpf/ringbuf"
	"go.uber.org/zap/zaptest"

	"github.com/ghostdriver/ghostdriver/internal/event"
	"github.com/ghostdriver/ghostdriver/internal/ftrace"
	"github.com/ghostdriver/ghostdriver/internal/kstr"
	"github.com/ghostdriver/ghostdriver/internal/testreq"
)

// hostEvents are tracepoints every kernel has and this test can trigger; together their
// formats print __data_loc strings, char arrays, %d and %03d.
var hostEvents = []string{"sched_process_exec", "sched_process_fork", "sched_wakeup_new"}

// A classic program is not tied to its event at load time, so the raw-copy programs of
// the gpu_scheduler and driver events are attached here to host tracepoints (this host
// has no DRM): the 6.17 done program to sched/sched_process_fork, the add_dep one to
// sched_wakeup_new, every other one to sched_process_exec (so a record's hook says which
// event it copied). Children exec /bin/true while a tracefs instance records the same
// events; every record rendered with the event's real format file must print exactly
// the kernel's own payload for the same event.
func TestClassicRawCopyMatchesKernelText(t *testing.T) {
	requireRoot(t)
	needTracefs(t)
	root := ""
	for _, r := range tracefsRoots {
		if _, err := os.Stat(filepath.Join(r, "instances")); err == nil {
			root = r
			break
		}
	}
	if root == "" {
		testreq.Skip(t, testreq.Tracefs, "no tracefs instances directory")
	}
	cfg, err := DefaultConfig().withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	ld := newLoader(cfg, zaptest.NewLogger(t))
	t.Cleanup(func() { ld.objs.close() })
	if err := ld.loadCommon(); err != nil {
		t.Fatal(err)
	}

	// The host events' formats, and which program copies which event.
	printers := map[string]*ftrace.Printer{}
	hostOf := func(event string) string {
		switch event {
		case "drm_sched_job_done":
			return "sched_process_fork"
		case "drm_sched_job_add_dep":
			return "sched_wakeup_new"
		}
		return "sched_process_exec"
	}
	for _, ev := range hostEvents {
		text, err := readFormat("sched", ev)
		if err != nil {
			t.Fatal(err)
		}
		f, err := ftrace.ParseFormat("sched", ev, text)
		if err != nil {
			t.Fatal(err)
		}
		if printers[ev], err = ftrace.CompilePrinter(f); err != nil {
			t.Fatalf("%s: %v", ev, err)
		}
	}

	wantHooks := map[commonHook]string{}
	for _, def := range hookDefs(cfg) {
		if !def.hasClassic() {
			continue
		}
		r := def.rungs[len(def.rungs)-1]
		f, err := ld.family(r.family)
		if err != nil {
			t.Fatal(err)
		}
		prog, err := ld.loadProgram(f, r.progs[0], r)
		if err != nil {
			t.Fatalf("%s: %v", r.progs[0], err)
		}
		t.Cleanup(func() { prog.Close() })
		l, err := link.Tracepoint("sched", hostOf(def.event), prog, nil)
		if err != nil {
			t.Fatalf("%s on sched/%s: %v", r.progs[0], hostOf(def.event), err)
		}
		t.Cleanup(func() { l.Close() })
		h, ok := classicHook(def.event)
		if !ok {
			t.Fatalf("%s has no hook", def.event)
		}
		wantHooks[h] = def.event
	}
	rd, err := ringbuf.NewReader(ld.objs.eventsMap())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rd.Close() })

	// The kernel's own text of the same events, from a tracefs instance of our own.
	inst := filepath.Join(root, "instances", fmt.Sprintf("ghostdriver-classic-%d", os.Getpid()))
	if err := os.Mkdir(inst, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(rel, v string) {
		if err := os.WriteFile(filepath.Join(inst, rel), []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		for _, ev := range hostEvents {
			os.WriteFile(filepath.Join(inst, "events", "sched", ev, "enable"), []byte("0"), 0o644)
		}
		if err := os.Remove(inst); err != nil {
			t.Errorf("removing the tracefs instance: %v", err)
		}
	})
	for _, ev := range hostEvents {
		write(filepath.Join("events", "sched", ev, "enable"), "1")
	}
	write("tracing_on", "1")

	const children = 5
	start := kclock.MonoNow()
	pids := map[int]bool{}
	for i := 0; i < children; i++ {
		cmd := exec.Command("/bin/true")
		if err := cmd.Run(); err != nil {
			t.Fatal(err)
		}
		pids[cmd.Process.Pid] = true
	}
	time.Sleep(100 * time.Millisecond)
	end := kclock.MonoNow()
	write("tracing_on", "0")
	trace, err := os.ReadFile(filepath.Join(inst, "trace"))
	if err != nil {
		t.Fatal(err)
	}

	// One of our children's events: a pid= or child_pid= of the payload is a child's.
	pidRE := regexp.MustCompile(`(?:^| )(?:child_)?pid=(\d+)`)
	ours := func(payload string) bool {
		for _, m := range pidRE.FindAllStringSubmatch(payload, -1) {
			if n, _ := strconv.Atoi(m[1]); pids[n] {
				return true
			}
		}
		return false
	}
	kernel := map[string][]string{}
	for _, line := range strings.Split(string(trace), "\n") {
		for _, ev := range hostEvents {
			if _, payload, ok := strings.Cut(line, " "+ev+": "); ok && ours(payload) {
				kernel[ev] = append(kernel[ev], payload)
			}
		}
	}
	for _, ev := range hostEvents {
		if len(kernel[ev]) < children {
			t.Fatalf("the kernel traced %d %s events of our %d children:\n%s", len(kernel[ev]), ev, children, trace)
		}
	}

	got := map[commonHook][]string{}
	rd.SetDeadline(time.Now().Add(200 * time.Millisecond))
	var rec ringbuf.Record
	for {
		if err := rd.ReadInto(&rec); err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				break
			}
			t.Fatal(err)
		}
		b := rec.RawSample
		if len(b) != rawRecordSize {
			t.Fatalf("a %d-byte sample from a raw-copy program (want %d)", len(b), rawRecordSize)
		}
		var r commonRawRecord
		copyRaw(&r, b)
		event, ok := wantHooks[commonHook(r.Hook)]
		if !ok || r.RawLen != uint16(rawMax) {
			t.Fatalf("record with hook %d, raw_len %d", r.Hook, r.RawLen)
		}
		p := printers[hostOf(event)]
		payload, err := p.AppendPayload(nil, r.Raw[:])
		if err != nil {
			t.Fatalf("%s: %v", p.Format().Name, err)
		}
		if !ours(string(payload)) {
			continue
		}
		if int64(r.Ts) < start || int64(r.Ts) > end {
			t.Errorf("record time %d outside [%d, %d]", r.Ts, start, end)
		}
		if ev := p.Format().Name; ev == "sched_process_exec" {
			// exec runs in the child: its pid, its new comm.
			if tid := int(uint32(r.PidTgid)); !pids[tid] || int(r.PidTgid>>32) != tid || commOf(r.Comm[:]) != "true" {
				t.Errorf("exec record: pid_tgid %#x comm %q", r.PidTgid, commOf(r.Comm[:]))
			}
		}
		got[commonHook(r.Hook)] = append(got[commonHook(r.Hook)], string(payload))
	}

	for h, event := range wantHooks {
		ev := hostOf(event)
		g, k := slices.Sorted(slices.Values(got[h])), slices.Sorted(slices.Values(kernel[ev]))
		if !slices.Equal(g, k) {
			t.Errorf("program of %s on %s:\nrendered %q\nkernel   %q", event, ev, g, k)
		}
	}
	t.Logf("%d programs; kernel payloads e.g. %q, %q, %q", len(wantHooks), kernel[hostEvents[0]][0], kernel[hostEvents[1]][0], kernel[hostEvents[2]][0])
}

func copyRaw(r *commonRawRecord, b []byte) {
	copy(unsafe.Slice((*byte)(unsafe.Pointer(r)), rawRecordSize), b)
}

// needTracefs makes tracefs available for the test as the loader does (it mounts it where
// nothing is mounted, and unmounts it after the test), or skips saying why not.
func needTracefs(t *testing.T) {
	t.Helper()
	line, held := acquireTracefs(false)
	if held {
		t.Cleanup(func() {
			if err := releaseTracefs(); err != nil {
				t.Error(err)
			}
		})
	}
	if err := HaveTracefs(); err != nil {
		testreq.Skip(t, testreq.Tracefs, "tracefs "+line+": "+err.Error())
	}
}

func commOf(c []int8) string { return kstr.FromC(c) }

// The direct decode on real kernel entries with an oracle of its own: two raw-copy
// programs attached to syscalls/sys_enter_ioctl and sys_exit_ioctl (tracepoints every
// kernel has), decoded with this kernel's format files, must give back the fd, request
// and argument this test passed to ioctl and the error the kernel returned (ENOTTY from
// /dev/null), and the same Event as the former text reading of the same record.
func TestClassicDirectDecodesLiveSyscalls(t *testing.T) {
	requireRoot(t)
	needTracefs(t)
	cfg, err := DefaultConfig().withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	ld := newLoader(cfg, zaptest.NewLogger(t))
	t.Cleanup(func() { ld.objs.close() })
	if err := ld.loadCommon(); err != nil {
		t.Fatal(err)
	}
	var evs classicEvents
	hookOf := map[string]commonHook{}
	for _, def := range hookDefs(cfg) {
		if len(hookOf) == 2 {
			break
		}
		if !def.hasClassic() {
			continue
		}
		target := [...]string{"sys_enter_ioctl", "sys_exit_ioctl"}[len(hookOf)]
		r := def.rungs[len(def.rungs)-1]
		f, err := ld.family(r.family)
		if err != nil {
			t.Fatal(err)
		}
		prog, err := ld.loadProgram(f, r.progs[0], r)
		if err != nil {
			t.Fatalf("%s: %v", r.progs[0], err)
		}
		t.Cleanup(func() { prog.Close() })
		l, err := link.Tracepoint("syscalls", target, prog, nil)
		if err != nil {
			t.Fatalf("%s on syscalls/%s: %v", r.progs[0], target, err)
		}
		t.Cleanup(func() { l.Close() })
		h, _ := classicHook(def.event)
		ce, err := loadClassicEvent("syscalls/" + target)
		if err != nil {
			t.Fatalf("this kernel's syscalls/%s: %v", target, err)
		}
		evs.add(h, ce)
		hookOf[target] = h
	}
	rd, err := ringbuf.NewReader(ld.objs.eventsMap())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rd.Close() })

	null, err := os.Open("/dev/null")
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	const calls, cmd = 8, 0x5401 // TCGETS
	args := map[uint64]bool{}
	func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		for i := range calls {
			arg := uint64(0x7ffd_0000_1000 + i*0x40) // never read: /dev/null has no ioctls
			args[arg] = true
			if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, null.Fd(), cmd, uintptr(arg)); errno != syscall.ENOTTY {
				t.Fatalf("ioctl on /dev/null: %v, want ENOTTY", errno)
			}
		}
	}()

	d, text := decoder{classic: newClassicDecoder(&evs)}, ftrace.NewDecoder()
	var enters, exits int
	var lastEnterTID uint32
	rd.SetDeadline(time.Now().Add(200 * time.Millisecond))
	var rec ringbuf.Record
	for {
		if err := rd.ReadInto(&rec); err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				break
			}
			t.Fatal(err)
		}
		var got, want event.Event
		gerr := d.decode(rec.RawSample, &got)
		ce := evs.byHook[binary.LittleEndian.Uint16(rec.RawSample[rawOffHook:])]
		// The second reading: the entry printed as the kernel prints it, the line read by
		// the text decoder, the record's header taken from the direct decode.
		line, perr := ce.format.Printer().AppendPayload([]byte("x-1 [000] 1.000000000: "+ce.name+": "), rec.RawSample[rawOffRaw:rawOffRaw+rawMax])
		read := perr == nil && text.Decode(line, 0, &want)
		want.Time, want.CPU, want.PID, want.TID, want.Comm = got.Time, got.CPU, got.PID, got.TID, got.Comm
		if (gerr == nil) != read || (read && !reflect.DeepEqual(got, want)) {
			t.Fatalf("direct %+v (%v)\ntext   %+v (%q %v)", got, gerr, want, line, perr)
		}
		if gerr != nil {
			t.Fatalf("a live %s entry: %v", ce.name, gerr)
		}
		if got.PID != uint32(os.Getpid()) {
			continue // another process's ioctl
		}
		switch got.Kind {
		case event.IoctlEnter:
			if got.Fd == int32(null.Fd()) && got.Cmd == cmd && args[got.Arg] {
				delete(args, got.Arg)
				enters++
				lastEnterTID = got.TID
			}
		case event.IoctlExit:
			if got.TID == lastEnterTID && got.Ret == -int64(syscall.ENOTTY) {
				exits++
				lastEnterTID = 0
			}
		}
	}
	if enters != calls || exits != calls {
		t.Fatalf("decoded %d of our %d ioctl entries and %d exits with ENOTTY (arguments not seen: %v)", enters, calls, exits, args)
	}
	t.Logf("%d ioctl enter/exit pairs decoded directly from this kernel's entries (syscalls/sys_enter_ioctl, sys_exit_ioctl) with fd, cmd, arg and ret as called", calls)
}
