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
	expect("counts")
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	if n := src.Stats().Calls; n != 0 {
		t.Logf("%d calls read before the stop (a wake-up: the check of the stop's own reading is weaker)", n)
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
	if got, want := st.ByAPI["cudaLaunchKernel"], uint64(threads*(iters*3+1)); got != want {
		t.Errorf("cudaLaunchKernel = %d after the stop, want %d (every launch the workload made)", got, want)
	}
	if !sink.exited(pid) {
		t.Error("the workload's exit, committed before the stop, was not read")
	}
}
