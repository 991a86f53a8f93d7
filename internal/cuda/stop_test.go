//go:build linux

// Stopping the source loses nothing and does not wait for the poll deadline: with a
// poll interval of a minute and no wake-up (the stub workload writes far less than the
// ring's wake-up threshold), every record sits in the ring until the cancellation, which
// must read them all and return at once.
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

	"github.com/ghostdriver/ghostdriver/internal/tenant"
)

func TestCancelReadsTheRingAtOnce(t *testing.T) {
	needRootAndGCC(t)
	const iters, threads = 50, 2
	dir := t.TempDir()
	app := buildStubs(t, dir)
	src, _, err := Open(Config{RescanInterval: -1, PollInterval: time.Minute, IgnoreEntryPoints: true,
		NoXid: true, ExtraLibraries: []string{filepath.Join(dir, "libcuda.so.1"), filepath.Join(dir, "libcudart.so.12")}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	asm := NewAssembler(AssemblerConfig{}, func(*Submission) {})
	sink := &goneSink{Assembler: asm, gone: map[uint32]bool{}}
	stop := runSource(t, src, sink)

	cmd := exec.Command(app, "50")
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
	// a procs row, so that the kernel reports the process's exit too
	p, err := tenant.NewResolver(tenant.DefaultConfig()).Process(pid)
	if err != nil || p.ThreadContextTLS == nil {
		t.Fatalf("no otel_thread_ctx_v1 recipe for the workload: %v %+v", err, p)
	}
	if err := src.SetProcess(pid, p.ThreadContextTLS); err != nil {
		t.Fatal(err)
	}
	io.WriteString(stdin, "\n")
	expect("ready")
	io.WriteString(stdin, "\n")
	// The workload's own count of what it called, the oracle below.
	line, err := rd.ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "counts ") {
		t.Fatalf("workload said %q (%v), want its counts", line, err)
	}
	counts := map[string]uint64{}
	for _, f := range strings.Fields(line)[1:] {
		k, v, _ := strings.Cut(f, "=")
		counts[k], _ = strconv.ParseUint(v, 10, 64)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	// Nothing may have been read yet: the records stay below the wake-up threshold and the
	// poll deadline is a minute away, so what follows tests the stop's own reading.
	if n := src.Stats().Calls; n != 0 {
		t.Fatalf("%d calls read before the stop: a wake-up came, so this run cannot test the stop's reading", n)
	}
	begin := time.Now()
	stopped := make(chan struct{})
	go func() { stop(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(5 * time.Second):
		t.Fatal("Run still waiting 5s after the cancellation (the poll interval is a minute)")
	}
	t.Logf("Run returned %v after the cancellation", time.Since(begin).Round(time.Microsecond))
	st := src.Stats()
	// The runtime's launches reach the stub driver through its entry-point table, its
	// stream syncs as cuStreamSynchronize: the workload counts both where they land.
	if want := counts["table_launch"]; want != threads*(iters*3+1) || st.ByAPI["cudaLaunchKernel"] != want {
		t.Errorf("cudaLaunchKernel = %d after the stop; the workload made %d (app.c: %d)", st.ByAPI["cudaLaunchKernel"], want, threads*(iters*3+1))
	}
	if want := counts["stream_sync"]; want != threads*iters || st.ByAPI["cudaStreamSynchronize"] != want {
		t.Errorf("cudaStreamSynchronize = %d after the stop; the workload made %d (app.c: %d)", st.ByAPI["cudaStreamSynchronize"], want, threads*iters)
	}
	if !sink.exited(pid) {
		t.Error("the workload's exit, committed before the stop, was not read")
	}
}
