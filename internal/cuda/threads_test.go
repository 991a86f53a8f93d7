//go:build linux

// The kernel's per-thread frame table (cuda_threads) is an LRU: with more threads inside
// traced calls at once than it holds, a thread's live frames are evicted and its calls'
// returns come without a frame. Those calls are lost; they must be counted
// (Stats.ReturnsWithoutFrame, lost_calls{reason=no_frame}), not silently missing.
//
// The oracle is the same workload run with the default table: every call recorded there
// (checked against the stub's own launch count) must, with a table of one thread, be
// either recorded or counted as lost.
package cuda

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// runStubWorkload runs the two-thread stub workload (iters iterations) under a source
// opened with cfg and returns the source's counts once every call is read.
func runStubWorkload(t *testing.T, dir, app string, cfg Config, iters int) Stats {
	t.Helper()
	cfg.RescanInterval, cfg.IgnoreEntryPoints, cfg.NoXid = -1, true, true
	cfg.ExtraLibraries = []string{filepath.Join(dir, "libcuda.so.1"), filepath.Join(dir, "libcudart.so.12")}
	src, _, err := Open(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	asm := NewAssembler(AssemblerConfig{}, func(*Submission) {})
	sink := &goneSink{Assembler: asm, gone: map[uint32]bool{}}
	stop := runSource(t, src, sink)
	cmd := exec.Command(app, strconv.Itoa(iters))
	cmd.Env = append(os.Environ(), "STUB_NO_THREAD_CTX=1")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	rd := bufio.NewReader(stdout)
	for _, prefix := range []string{"mapped", "ready", "counts"} {
		if line, err := rd.ReadString('\n'); err != nil || !strings.HasPrefix(line, prefix) {
			t.Fatalf("workload said %q (%v), want %q", line, err, prefix)
		}
		io.WriteString(stdin, "\n")
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	stop() // reads the ring to its end: everything the workload committed
	return src.Stats()
}

func TestThreadTableEvictionCounted(t *testing.T) {
	needRootAndGCC(t)
	const iters, threads = 50, 2
	dir := t.TempDir()
	app := buildStubs(t, dir)

	ref := runStubWorkload(t, dir, app, Config{}, iters)
	refTotal := ref.Calls + ref.ProcAddress
	t.Logf("default table: calls %d, procaddr %d, returns without frame %d, stale %d, lost %d",
		ref.Calls, ref.ProcAddress, ref.ReturnsWithoutFrame, ref.StaleFrames, ref.Lost)
	if got, want := ref.ByAPI["cudaLaunchKernel"], uint64(threads*(iters*3+1)); got != want {
		t.Fatalf("reference run: cudaLaunchKernel %d, want the stub's %d", got, want)
	}
	if ref.ReturnsWithoutFrame != 0 || ref.StaleFrames != 0 || ref.Lost != 0 {
		t.Fatalf("reference run lost calls: %d without frame, %d stale, %d ring", ref.ReturnsWithoutFrame, ref.StaleFrames, ref.Lost)
	}

	small := runStubWorkload(t, dir, app, Config{threadTable: 1}, iters)
	t.Logf("one-thread table: calls %d, procaddr %d, returns without frame %d, stale %d, lost %d",
		small.Calls, small.ProcAddress, small.ReturnsWithoutFrame, small.StaleFrames, small.Lost)
	if small.Lost != 0 {
		t.Fatalf("%d records lost to the ring: the accounting below would not close", small.Lost)
	}
	if small.ReturnsWithoutFrame == 0 {
		t.Errorf("no return without a frame counted: the two threads' 1 ms syncs overlap, the table holds one thread")
	}
	// Every call is recorded or counted: recorded + returns without a frame, plus at most
	// the stale frames. A frame dropped as stale whose return still comes is counted a
	// second time at that return (no frame left), so stale frames bound the sum rather
	// than add to it (a CI run: 469 recorded + 155 without frame = 624, with 2 stale).
	rec := small.Calls + small.ProcAddress
	if lo, hi := rec+small.ReturnsWithoutFrame, rec+small.ReturnsWithoutFrame+small.StaleFrames; refTotal < lo || refTotal > hi {
		t.Errorf("recorded %d + without frame %d (+ up to %d stale) = %d..%d, want the %d calls of the reference run",
			rec, small.ReturnsWithoutFrame, small.StaleFrames, lo, hi, refTotal)
	}
}
