//go:build linux

// The reader never waits on the hook worker. Here the worker is stuck for as long as the
// test wants: the fake proc root's maps file of the workload is a FIFO, so the first
// learned entry point's maps read blocks in open(2). Meanwhile the stub workload's calls
// must all be read from a small ring (none lost), and the learned entry points that
// did not fit in the worker's queue must be counted as dropped.
//
// On the code before the worker (the reader learned entry points itself), the reader
// blocked in that open and read nothing more: the launches were never counted and the
// 64 KiB ring overflowed (records lost).
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
	"time"

	"golang.org/x/sys/unix"
)

// stubTable is the stub driver's cuGetProcAddress table (testdata/stub/libcuda_stub.c):
// the names it answers with status 0.
var stubTable = []string{"cuLaunchKernel", "cuMemcpyHtoD", "cuStreamSynchronize", "cuCtxSynchronize",
	"cuEventRecord", "cuEventSynchronize", "cuMemAlloc", "cuMemFree"}

func TestReaderDrainsWhileHookWorkerBlocked(t *testing.T) {
	needRootAndGCC(t)
	const iters, threads, queue = 50, 2, 2
	dir := t.TempDir()
	app := buildStubs(t, dir)
	procRoot := t.TempDir()
	src, _, err := Open(Config{ProcRoot: procRoot, RescanInterval: -1, NoXid: true, RingBufferBytes: 64 << 10,
		hookQueue: queue, ExtraLibraries: []string{filepath.Join(dir, "libcuda.so.1"), filepath.Join(dir, "libcudart.so.12")}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	asm := NewAssembler(AssemblerConfig{}, func(*Submission) {})
	sink := &goneSink{Assembler: asm, gone: map[uint32]bool{}}
	stop := runSource(t, src, sink)
	defer stop()

	cmd := exec.Command(app, strconv.Itoa(iters))
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	rd := bufio.NewReader(stdout)
	expect := func(prefix string) {
		if line, err := rd.ReadString('\n'); err != nil || !strings.HasPrefix(line, prefix) {
			t.Fatalf("workload said %q (%v), want %q", line, err, prefix)
		}
	}
	expect("mapped")
	pid := uint32(cmd.Process.Pid)
	sink.pid.Store(pid)
	maps := filepath.Join(procRoot, strconv.Itoa(int(pid)), "maps")
	if err := os.MkdirAll(filepath.Dir(maps), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mkfifo(maps, 0o644); err != nil {
		t.Fatal(err)
	}
	// release lets the blocked open(2) return (a writer appears, then EOF) after the
	// maps file became an empty regular file, so that later reads do not block again.
	released := false
	release := func() {
		if released {
			return
		}
		released = true
		fd := -1
		for deadline := time.Now().Add(5 * time.Second); fd < 0 && time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			fd, _ = unix.Open(maps, unix.O_WRONLY|unix.O_NONBLOCK, 0) // ENXIO until a reader waits
		}
		if err := os.WriteFile(maps+".new", nil, 0o644); err != nil {
			t.Error(err)
		}
		if err := os.Rename(maps+".new", maps); err != nil {
			t.Error(err)
		}
		if fd >= 0 {
			unix.Close(fd)
		} else {
			t.Error("the hook worker never opened the workload's maps")
		}
	}
	defer release()

	io.WriteString(stdin, "\n") // cudaFree(0): the runtime's cuGetProcAddress calls
	expect("ready")
	io.WriteString(stdin, "\n")
	expect("counts")
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	want := uint64(threads * (iters*3 + 1))
	deadline := time.Now().Add(10 * time.Second)
	for src.Stats().ByAPI["cudaLaunchKernel"] < want && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	st := src.Stats()
	t.Logf("while the worker is blocked: cudaLaunchKernel %d of %d, procaddr %d, dropped %d, lost %d",
		st.ByAPI["cudaLaunchKernel"], want, st.ProcAddress, st.EntryPointsDropped, st.Lost)
	if got := st.ByAPI["cudaLaunchKernel"]; got != want {
		t.Errorf("cudaLaunchKernel read = %d, want %d: the reader stopped behind the hook worker", got, want)
	}
	if st.Lost != 0 {
		t.Errorf("%d records lost to the ring while the hook worker was blocked", st.Lost)
	}
	for _, name := range stubTable {
		if !isProcAddressTarget(name) {
			t.Fatalf("%s of the stub's table is not hooked when learned: the counts below assume all %d are", name, len(stubTable))
		}
	}
	// One request is with the blocked worker, at most queue more wait: the rest dropped.
	if lo, hi := uint64(len(stubTable)-1-queue), uint64(len(stubTable)-queue); st.EntryPointsDropped < lo || st.EntryPointsDropped > hi {
		t.Errorf("entry points dropped = %d, want %d..%d (%d learned, 1 with the worker, %d queued)",
			st.EntryPointsDropped, lo, hi, len(stubTable), queue)
	}
	// Every learned entry point is either dropped or examined once the worker is free:
	// the workload's maps now map nothing, so each examined one is refused.
	release()
	waitFor(t, "the queued entry points examined", func() bool {
		st := src.Stats()
		return st.EntryPointsDropped+st.EntryPointsRefused >= uint64(len(stubTable))
	})
	st = src.Stats()
	if st.EntryPointsDropped+st.EntryPointsRefused != uint64(len(stubTable)) || st.EntryPointHooks != 0 {
		t.Errorf("dropped %d + refused %d (hooked %d), want %d learned entry points, none hooked",
			st.EntryPointsDropped, st.EntryPointsRefused, st.EntryPointHooks, len(stubTable))
	}
}
