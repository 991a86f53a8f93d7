//go:build linux

// Loaders attached and detached one after another, as a test binary's ioctl tests do: each
// one's ioctl enter program must run for the ioctls made while it is attached. Written for
// the arm64 guest (scripts/test-arm64.sh), where a loader's enter program now and then was
// never run; at such a miss the test asks a second, independent consumer of the same kernel
// tracepoint (the tracefs event syscalls/sys_enter_ioctl, read from the trace buffer) whether
// the kernel reaches the tracepoint at all, which tells our program from the kernel's site.
package probe

import (
	"bufio"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/cilium/ebpf"
	"go.uber.org/zap"
	"golang.org/x/sys/unix"
)

// GHOSTDRIVER_REATTACH_LOOPS sets the number of loaders (default 3);
// GHOSTDRIVER_REATTACH_SPIN=1 keeps another thread making syscalls the whole time, so that
// the other CPU runs the syscall entry path while each loader attaches.
func TestIoctlEnterHookAfterReattach(t *testing.T) {
	requireRoot(t)
	loops := 3
	if s := os.Getenv("GHOSTDRIVER_REATTACH_LOOPS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("GHOSTDRIVER_REATTACH_LOOPS=%q: want a positive number", s)
		}
		loops = n
	}
	stats, err := ebpf.EnableStats(uint32(unix.BPF_STATS_RUN_TIME))
	if err != nil {
		t.Fatalf("enable bpf stats: %v", err)
	}
	defer stats.Close()
	if os.Getenv("GHOSTDRIVER_REATTACH_SPIN") == "1" {
		stop, wg := make(chan struct{}), sync.WaitGroup{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			for {
				select {
				case <-stop:
					return
				default:
					unix.Getppid()
				}
			}
		}()
		defer func() { close(stop); wg.Wait() }()
	}
	const n = 5
	var dead []string
	hook := ""
	for i := 0; i < loops; i++ {
		cfg := DefaultConfig()
		cfg.DRMMajors = []uint32{1}
		l, rep, err := Open(cfg, zap.NewNop())
		if err != nil {
			t.Fatalf("loader %d: Open: %v\n%s", i, err, rep)
		}
		hook = expectedIoctlHook(rep)
		enter, exit := l.program(t, "sys_enter"), l.program(t, "sys_exit")
		e0, x0 := runCount(t, enter), runCount(t, exit)
		ioctlsOnOwnThread(t, "/dev/null", n)
		de, dx := runCount(t, enter)-e0, runCount(t, exit)-x0
		if dx < n {
			l.Close()
			t.Fatalf("loader %d: the exit program ran %d times for %d ioctls", i, dx, n)
		}
		if de < n {
			enters, exits, why := tracefsIoctls(t, n)
			de2 := runCount(t, enter) - e0 - de
			attached, aerr := kernelText("syscall_trace_enter")
			l.Close()
			detached, derr := kernelText("syscall_trace_enter")
			dead = append(dead, fmt.Sprintf("loader %d (%s): enter program ran %d, exit %d for %d ioctls; "+
				"tracefs sys_enter_ioctl/sys_exit_ioctl saw %d/%d of %d more (%s), enter program ran %d for those; "+
				"syscall_trace_enter's words that differ attached/detached: %s",
				i, hook, de, dx, n, enters, exits, n, why, de2, textDiff(attached, aerr, detached, derr)))
			continue
		}
		l.Close()
	}
	t.Logf("%d loaders on %s, %d with an enter program that did not run", loops, hook, len(dead))
	for _, d := range dead {
		t.Error(d)
	}
}

// tracefsIoctls enables syscalls/sys_enter_ioctl and sys_exit_ioctl in a tracefs mount of
// its own, makes n ioctls on /dev/null from a thread of its own and counts that thread's
// enter and exit lines in the trace buffer.
func tracefsIoctls(t *testing.T, n int) (enters, exits int, why string) {
	dir := filepath.Join(os.TempDir(), "reattach-tracefs")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return -1, -1, err.Error()
	}
	if err := unix.Mount("nodev", dir, "tracefs", 0, ""); err != nil {
		return -1, -1, "mount tracefs: " + err.Error()
	}
	defer unix.Unmount(dir, 0)
	write := func(p, v string) error { return os.WriteFile(filepath.Join(dir, p), []byte(v), 0) }
	events := []string{"events/syscalls/sys_enter_ioctl/enable", "events/syscalls/sys_exit_ioctl/enable"}
	if err := write("trace", ""); err != nil {
		return -1, -1, "clear trace: " + err.Error()
	}
	for _, e := range events {
		if err := write(e, "1"); err != nil {
			return -1, -1, e + ": " + err.Error()
		}
		defer write(e, "0")
	}
	f, err := os.Open("/dev/null")
	if err != nil {
		return -1, -1, err.Error()
	}
	defer f.Close()
	done := make(chan int)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		for i := 0; i < n; i++ {
			_, _, _ = syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), uintptr(unix.TCGETS), 0)
		}
		done <- unix.Gettid()
	}()
	tid := <-done
	for _, e := range events {
		write(e, "0")
	}
	b, err := os.ReadFile(filepath.Join(dir, "trace"))
	if err != nil {
		return -1, -1, "read trace: " + err.Error()
	}
	// Lines look like "  probe.test-123  [001] ..... 12.3: sys_ioctl(fd: 3, cmd: 5401, arg: 0)"
	// and "... sys_ioctl -> 0xfffffffffffffff3".
	me := fmt.Sprintf("-%d ", tid)
	for _, line := range strings.Split(string(b), "\n") {
		if !strings.Contains(line, me) {
			continue
		}
		switch {
		case strings.Contains(line, "sys_ioctl("):
			enters++
		case strings.Contains(line, "sys_ioctl ->"):
			exits++
		}
	}
	return enters, exits, fmt.Sprintf("tid %d", tid)
}

// kernelText reads a kernel function's instructions from /proc/kcore: what the memory holds,
// whatever a CPU (or an emulator's translation of it) executes.
func kernelText(sym string) ([]byte, error) {
	f, err := os.Open("/proc/kallsyms")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var start, end uint64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 3 {
			continue
		}
		a, err := strconv.ParseUint(fields[0], 16, 64)
		if err != nil {
			continue
		}
		if start != 0 && a > start {
			end = a
			break
		}
		if fields[2] == sym && start == 0 {
			start = a
		}
	}
	if start == 0 || end == 0 || end-start > 1<<14 {
		return nil, fmt.Errorf("%s not in /proc/kallsyms with an address (start %#x end %#x)", sym, start, end)
	}
	kc, err := elf.Open("/proc/kcore")
	if err != nil {
		return nil, err
	}
	defer kc.Close()
	for _, p := range kc.Progs {
		if p.Type == elf.PT_LOAD && p.Vaddr <= start && end <= p.Vaddr+p.Memsz {
			b := make([]byte, end-start)
			_, err := p.ReadAt(b, int64(start-p.Vaddr))
			return b, err
		}
	}
	return nil, fmt.Errorf("%s at %#x is in no /proc/kcore segment", sym, start)
}

// textDiff lists the 32-bit words (offset: attached -> detached) that differ.
func textDiff(a []byte, aerr error, d []byte, derr error) string {
	if aerr != nil || derr != nil {
		return fmt.Sprintf("unread (%v, %v)", aerr, derr)
	}
	var out []string
	for i := 0; i+4 <= len(a) && i+4 <= len(d); i += 4 {
		x, y := binary.LittleEndian.Uint32(a[i:]), binary.LittleEndian.Uint32(d[i:])
		if x != y {
			out = append(out, fmt.Sprintf("+%#x: %08x -> %08x", i, x, y))
		}
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, ", ")
}
