// Package cudatest is the stub CUDA setup the tests of several packages share (internal/
// cuda, internal/pipeline, internal/graph, receiver): building the stub driver, runtime and
// two-thread workload of internal/cuda/testdata/stub, the skip when root or gcc is
// missing, and the workload's stdin protocol (it prints "mapped", waits for a line,
// initialises the runtime, prints "ready", waits for a line, runs, prints its "counts").
// It does not import internal/cuda, so internal/cuda's own tests can use it.
package cudatest

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ghostdriver/ghostdriver/internal/testreq"
)

// PrebuiltEnv names a directory of stubs built beforehand (build.sh run with STUB_CC set, e.g.
// aarch64-linux-gnu-gcc for the arm64 guest, which has no compiler): Build and BuildIn
// copy them from there instead of compiling, and Need does not ask for gcc.
const PrebuiltEnv = "GHOSTDRIVER_CUDA_STUBS"

// stubFiles are what build.sh writes (the workload finds the libraries beside itself:
// RUNPATH $ORIGIN, so a copy of the files works anywhere; libcupti.so.13 is the stub CUPTI
// the injection library loads).
var stubFiles = []string{"app", "libcuda.so.1", "libcudart.so.12", "libcupti.so.13"}

// Need skips t, saying why, unless the process is root (BPF, uprobes) and gcc is there
// (the stubs are built at test time) or PrebuiltEnv names built stubs; under a make
// target that requires them it fails.
func Need(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		testreq.Skip(t, testreq.Root, "needs root: loads eBPF programs and attaches uprobes")
	}
	// A test that needs the stubs opens a CUDA source, which hooks every process mapping a
	// CUDA library, and runs a workload that every other source hooks: it holds the lock
	// shared, and internal/cuda's tests (which count what their source saw) hold it
	// exclusive for the whole package (LockPackage).
	hold(t, syscall.LOCK_SH)
	if os.Getenv(PrebuiltEnv) != "" {
		return
	}
	if _, err := exec.LookPath("gcc"); err != nil {
		testreq.Skip(t, testreq.GCC, "needs gcc to build the stub CUDA libraries")
	}
}

// Stubs are the built stub files.
type Stubs struct {
	Dir     string
	App     string // the two-thread workload
	Driver  string // libcuda.so.1
	Runtime string // libcudart.so.12
}

// Libraries are the stub driver and runtime, for the CUDA source's ExtraLibraries: a
// source hooking only these files sees no other test's stub workload (uprobes are
// per file).
func (s Stubs) Libraries() []string { return []string{s.Driver, s.Runtime} }

// Build compiles the stubs into a fresh temporary directory of t.
func Build(t testing.TB) Stubs {
	t.Helper()
	return BuildIn(t, t.TempDir())
}

// BuildIn compiles the stubs into dir (or copies them there from PrebuiltEnv's directory:
// each test gets files of its own, since uprobes are per file).
func BuildIn(t testing.TB, dir string) Stubs {
	t.Helper()
	stubs := Stubs{Dir: dir, App: filepath.Join(dir, "app"), Driver: filepath.Join(dir, "libcuda.so.1"),
		Runtime: filepath.Join(dir, "libcudart.so.12")}
	if from := os.Getenv(PrebuiltEnv); from != "" {
		for _, f := range stubFiles {
			b, err := os.ReadFile(filepath.Join(from, f))
			if err != nil {
				t.Fatalf("%s=%s: %v", PrebuiltEnv, from, err)
			}
			if err := os.WriteFile(filepath.Join(dir, f), b, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		return stubs
	}
	_, self, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("cudatest: cannot locate the stub sources")
	}
	script := filepath.Join(filepath.Dir(self), "..", "testdata", "stub", "build.sh")
	if out, err := exec.Command(script, dir).CombinedOutput(); err != nil {
		t.Fatalf("building the stubs: %v\n%s", err, out)
	}
	return stubs
}

// WaitFor polls cond every 5 ms and fails t after 10 s.
func WaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// Workload is a running stub workload, driven through its stdin protocol.
type Workload struct {
	Cmd   *exec.Cmd
	PID   uint32
	stdin io.WriteCloser
	out   *bufio.Reader
	// Counts is the workload's last line: the stubs' own counts of what they were called for.
	Counts string
}

// lockPath is a lock every test that opens a CUDA source or runs a stub workload holds
// shared (Need): a CUDA source scans /proc for every process that maps a CUDA library,
// so a test that counts what its source saw takes it exclusive (Exclusive, LockPackage)
// to see no other package's workload or source. go test runs packages in parallel.
const lockPath = "/tmp/ghostdriver-cuda-stub-workloads.lock"

// packageHolds: this test binary holds the lock exclusive for all its tests (LockPackage).
var packageHolds atomic.Bool

func hold(t testing.TB, how int) {
	t.Helper()
	if packageHolds.Load() {
		return
	}
	f, err := os.OpenFile(lockPath, os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		// No writable /tmp (the arm64 guest's initrd): nothing else runs there.
		t.Logf("no stub workload lock (%v): running without", err)
		return
	}
	if err := syscall.Flock(int(f.Fd()), how); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() })
}

// Exclusive waits until no other test's stub workload runs and keeps others from starting
// until t ends (tests of other packages that start theirs through Start).
func Exclusive(t testing.TB) { t.Helper(); hold(t, syscall.LOCK_EX) }

// LockPackage takes the lock exclusive for a whole test binary (its TestMain), for a
// package whose tests run stub workloads of their own and count what the kernel saw from
// every process: no other package's workload runs meanwhile. It returns the release.
func LockPackage() (release func(), err error) {
	f, err := os.OpenFile(lockPath, os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	packageHolds.Store(true)
	return func() { packageHolds.Store(false); f.Close() }, nil
}

// Start starts app for iters iterations with env (nil: this process's) and returns once
// it has printed "mapped" (its libraries are mapped, nothing called yet).
func Start(t testing.TB, app string, iters int, env []string) *Workload {
	t.Helper()
	cmd := exec.Command(app, strconv.Itoa(iters))
	cmd.Env = env
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	w := &Workload{Cmd: cmd, PID: uint32(cmd.Process.Pid), stdin: stdin, out: bufio.NewReader(stdout)}
	w.expect(t, "mapped")
	return w
}

func (w *Workload) expect(t testing.TB, prefix string) string {
	t.Helper()
	line, err := w.out.ReadString('\n')
	if err != nil || !strings.HasPrefix(line, prefix) {
		t.Fatalf("workload said %q (%v), want %q", line, err, prefix)
	}
	return line
}

// Init lets the workload initialise the runtime (cuGetProcAddress calls); returns once
// it has printed "ready".
func (w *Workload) Init(t testing.TB) {
	t.Helper()
	_, _ = io.WriteString(w.stdin, "\n")
	w.expect(t, "ready")
}

// Work lets the workload run its iterations, and waits for it to exit (so every record
// it made is committed to the ring buffers).
func (w *Workload) Work(t testing.TB) {
	t.Helper()
	_, _ = io.WriteString(w.stdin, "\n")
	w.Counts = strings.TrimSpace(w.expect(t, "counts"))
	if err := w.Cmd.Wait(); err != nil {
		t.Fatal(err)
	}
}

// Run runs the whole protocol: afterMapped runs once the libraries are mapped,
// afterInit once the runtime is initialised (either may be nil). It returns the pid.
func Run(t testing.TB, app string, iters int, env []string, afterMapped, afterInit func(pid uint32)) uint32 {
	t.Helper()
	w := Start(t, app, iters, env)
	if afterMapped != nil {
		afterMapped(w.PID)
	}
	w.Init(t)
	if afterInit != nil {
		afterInit(w.PID)
	}
	w.Work(t)
	return w.PID
}

// BuildInjection compiles the CUDA injection library (cuptilib/, the GPU timeline) into
// dir and returns its path; it needs gcc (the arm64 guest has none: the caller skips).
func BuildInjection(t testing.TB, dir string) string {
	t.Helper()
	if _, err := exec.LookPath("gcc"); err != nil {
		testreq.Skip(t, testreq.GCC, "needs gcc to build the injection library")
	}
	_, file, _, _ := runtime.Caller(0)
	src := filepath.Join(filepath.Dir(file), "..", "..", "..", "cuptilib")
	out := filepath.Join(dir, "libghostdriver_cupti.so")
	cmd := exec.Command("gcc", "-O2", "-Wall", "-Wextra", "-Werror", "-fPIC", "-shared", "-fvisibility=hidden", "-o", out,
		filepath.Join(src, "ghostdriver_cupti.c"), filepath.Join(src, "peer.c"), "-ldl", "-lpthread")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the injection library: %v\n%s", err, b)
	}
	return out
}

// BuildPeer compiles internal/cupti/testdata/peer (a stand-in for the user's own
// profiler, LD_PRELOAD'ed into the workload) against the stub libcupti of stubs.
func BuildPeer(t testing.TB, stubs Stubs) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	src := filepath.Join(filepath.Dir(file), "..", "..", "cupti", "testdata", "peer", "peer_profiler.c")
	out := filepath.Join(stubs.Dir, "libpeer_profiler.so")
	cmd := exec.Command("gcc", "-O2", "-Wall", "-fPIC", "-shared", "-o", out, src, "-L"+stubs.Dir, "-l:libcupti.so.13",
		"-lpthread", "-ldl", "-Wl,-rpath,"+stubs.Dir)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the peer profiler: %v\n%s", err, b)
	}
	return out
}
