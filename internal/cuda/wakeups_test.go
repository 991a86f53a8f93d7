//go:build linux

// The blocking-sync split on the stubs: with STUB_KERNEL_NS long enough that a stream sync
// sleeps (the stub driver's wait nanosleeps while more than 200 µs are left, as a blocking
// sync sleeps in the kernel), every sync call of the workload carries the scheduler's last
// wake-up of its thread, checked against the stub's own log of when each sleep returned
// (STUB_WAKE_LOG); with short kernels the syncs spin and are never woken.

package cuda

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// syncSink keeps the workload's top-level sync calls.
type syncSink struct {
	*goneSink
	mu    sync.Mutex
	syncs []Call
}

func (s *syncSink) Calls(batch []Call) {
	s.mu.Lock()
	for _, c := range batch {
		if c.PID == s.pid.Load() && c.Depth == 0 && c.Info().Class == ClassSync {
			s.syncs = append(s.syncs, c)
		}
	}
	s.mu.Unlock()
	s.goneSink.Calls(batch)
}

// runWakeups runs the two-thread workload with the wake-up hooks; it returns the
// workload's sync calls and the stub's wake log (tid → the times its sleeps returned).
func runWakeups(t *testing.T, kernelNs string, iters int) ([]Call, map[uint32][]int64, *Source) {
	t.Helper()
	needRootAndGCC(t)
	dir := t.TempDir()
	app := buildStubs(t, dir)
	cfg := Config{RescanInterval: -1, NoXid: true, SyncWakeups: true,
		ExtraLibraries: []string{filepath.Join(dir, "libcuda.so.1"), filepath.Join(dir, "libcudart.so.12")}}
	src, _, err := Open(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	if !src.wakeups {
		t.Fatalf("sched_waking not attached: %s", src.Report().Text())
	}
	asm := NewAssembler(AssemblerConfig{}, func(*Submission) {})
	sink := &syncSink{goneSink: &goneSink{Assembler: asm, gone: map[uint32]bool{}}}
	stop := runSource(t, src, sink)
	logPath := filepath.Join(dir, "wake.log")
	cmd := exec.Command(app, strconv.Itoa(iters))
	cmd.Env = append(os.Environ(), "STUB_NO_THREAD_CTX=1", "STUB_KERNEL_NS="+kernelNs, "STUB_WAKE_LOG="+logPath)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sink.pid.Store(uint32(cmd.Process.Pid))
	rd := bufio.NewReader(stdout)
	for _, prefix := range []string{"mapped", "ready", "counts"} {
		line, err := rd.ReadString('\n')
		if err != nil || !strings.HasPrefix(line, prefix) {
			t.Fatalf("workload said %q (%v), want %q", line, err, prefix)
		}
		if prefix == "ready" {
			waitFor(t, "entry points hooked", func() bool { return src.Stats().EntryPointHooks >= 2 })
		}
		io.WriteString(stdin, "\n")
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	stop()
	wakes := map[uint32][]int64{}
	if data, err := os.ReadFile(logPath); err == nil {
		for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			f := strings.Fields(l)
			if len(f) != 2 {
				continue
			}
			tid, _ := strconv.ParseUint(f[0], 10, 32)
			at, _ := strconv.ParseInt(f[1], 10, 64)
			wakes[uint32(tid)] = append(wakes[uint32(tid)], at)
		}
	}
	return sink.syncs, wakes, src
}

func TestSyncWakeupsOfASleepingSync(t *testing.T) {
	// 4 launches of 2 ms per stream and iteration: the stream sync, after its 1 ms spin,
	// sleeps ≈ 7 ms.
	syncs, wakes, src := runWakeups(t, "2000000", 6)
	streamSyncs, slept := 0, 0
	for _, c := range syncs {
		if c.Name() != "cudaStreamSynchronize" {
			continue
		}
		streamSyncs++
		// The stub's own reading after its last sleep in this call. A sync whose spin was
		// stretched by preemption past its kernels' end (a loaded host) never sleeps: it
		// must then have no wake-up either.
		var resumed int64
		for _, at := range wakes[c.TID] {
			if at >= c.Start && at <= c.End {
				resumed = at
			}
		}
		switch {
		case !c.WakeTraced:
			t.Errorf("%s [%d, %d] tid %d: not traced", c.Name(), c.Start, c.End, c.TID)
		case resumed == 0 && c.Wake != 0:
			t.Errorf("%s [%d, %d] tid %d: woken at %d, but the stub logged no sleep in the call", c.Name(), c.Start, c.End, c.TID, c.Wake)
		case resumed != 0 && c.Wake == 0:
			t.Errorf("%s [%d, %d] tid %d: the stub slept and resumed at %d, no wake-up recorded", c.Name(), c.Start, c.End, c.TID, resumed)
		case resumed != 0:
			slept++
			// Woken before the stub ran again, and it ran within 5 ms (a loaded 2-core host).
			if c.Wake < c.Start || c.Wake > resumed || resumed-c.Wake > 5e6 {
				t.Errorf("%s [%d, %d] tid %d: woken at %d, the stub resumed at %d", c.Name(), c.Start, c.End, c.TID, c.Wake, resumed)
			}
		}
	}
	if streamSyncs < 2*6 || slept < streamSyncs/2 {
		t.Fatalf("%d stream syncs read (the workload makes %d), %d of them slept: want most to sleep", streamSyncs, 2*6, slept)
	}
	// No nvidia interrupt on this host: the report says the split has no interrupt point.
	if !strings.Contains(src.Report().Text(), "irq_handler_entry") {
		t.Errorf("report does not mention the interrupt hook:\n%s", src.Report().Text())
	}
}

func TestSyncWakeupsOfASpinningSync(t *testing.T) {
	// 50 µs kernels end during the sync's 1 ms spin: it never sleeps.
	syncs, wakes, _ := runWakeups(t, "50000", 6)
	n := 0
	for _, c := range syncs {
		if c.Name() != "cudaStreamSynchronize" {
			continue
		}
		n++
		if !c.WakeTraced || c.Wake != 0 {
			t.Errorf("%s [%d, %d]: traced %v, woken at %d; a spinning sync is never woken", c.Name(), c.Start, c.End, c.WakeTraced, c.Wake)
		}
	}
	if n == 0 || len(wakes) != 0 {
		t.Errorf("%d stream syncs, stub sleeps logged %v: want syncs and no sleep", n, wakes)
	}
}
