//go:build linux

// Lifecycle: Start/Shutdown many times leaves no goroutine, file descriptor or BPF
// object behind; Shutdown works without Start and twice; kill -9 of a live process
// leaves nothing attached or pinned, and a restarted one sees events again.
package lifecycle

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.uber.org/goleak"
	"golang.org/x/sys/unix"

	"github.com/ghostdriver/ghostdriver/internal/metadata"
	"github.com/ghostdriver/ghostdriver/internal/testreq"
	gdreceiver "github.com/ghostdriver/ghostdriver/receiver/ghostdriverreceiver"
)

func ioctlTCGETS(fd int) {
	_, _, _ = unix.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(unix.TCGETS), 0)
}

// ignoreCollectorGlobals: goroutines the collector libraries start once per process.
var ignoreCollectorGlobals = goleak.IgnoreTopFunction("go.opencensus.io/stats/view.(*worker).start")

// lifecycleRounds is the number of rounds that Start and Shut down (cycles adds the
// rounds without Start).
func lifecycleRounds() int {
	if n, err := strconv.Atoi(os.Getenv("GHOSTDRIVER_LIFECYCLE_ROUNDS")); err == nil && n > 0 {
		return n
	}
	return 100
}

// smallCapture writes a capture of a few hundred jobs (a replay that is still running
// when some rounds shut it down, and finished in others).
func smallCapture(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	for i := 1; i <= 300; i++ {
		us := int64(100_000_000 + i*200)
		st := func(u int64) string { return fmt.Sprintf("%d.%06d", u/1e6, u%1e6) }
		fmt.Fprintf(&b, "             app-234     [001] .....  %s: drm_sched_job_queue: dev=vgpu, fence=4:%d, ring=vgpu-ring0, job count:0, hw job count:0, client_id:1\n", st(us), i)
		fmt.Fprintf(&b, "    kworker/u8:1-29      [002] .....  %s: drm_sched_job_run: dev=vgpu, fence=4:%d, ring=vgpu-ring0, job count:0, hw job count:1, client_id:1\n", st(us+20), i)
		fmt.Fprintf(&b, "          <idle>-0       [000] d.h1.  %s: drm_sched_job_done: fence=4:%d signaled\n", st(us+120), i)
	}
	path := filepath.Join(t.TempDir(), "capture.txt")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// cycle creates the traces+metrics receiver of one ID, starts it (unless skipStart),
// and shuts it down twice.
func cycle(t *testing.T, cfg *gdreceiver.Config, skipStart bool, host component.Host) {
	t.Helper()
	f := gdreceiver.NewFactory()
	set := receivertest.NewNopSettings(metadata.Type)
	var tr receiver.Traces
	tr, err := f.CreateTraces(context.Background(), set, cfg, consumertest.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.CreateMetrics(context.Background(), set, cfg, consumertest.NewNop()); err != nil {
		t.Fatal(err)
	}
	if !skipStart {
		if err := tr.Start(context.Background(), host); err != nil {
			t.Fatalf("Start: %v", err)
		}
	}
	if err := tr.Shutdown(context.Background()); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if err := tr.Shutdown(context.Background()); err != nil {
		t.Fatalf("second Shutdown: %v", err)
	}
}

func TestLifecycleReplay(t *testing.T) {
	defer goleak.VerifyNone(t, ignoreCollectorGlobals)
	cfg := gdreceiver.NewFactory().CreateDefaultConfig().(*gdreceiver.Config)
	cfg.Source = gdreceiver.SourceReplay
	cfg.Replay.Path = smallCapture(t)
	cfg.FlushInterval = time.Millisecond
	fds := openFDs(t)
	cycles(t, cfg, &statusHost{})
	if now := openFDs(t); now != fds {
		t.Errorf("file descriptors: %d before, %d after %d Start/Shutdown rounds", fds, now, lifecycleRounds())
	}
}

// cycles runs lifecycleRounds() rounds that Start and Shut down twice and, after every
// tenth of them, one more round that Shuts down twice without Start.
func cycles(t *testing.T, cfg *gdreceiver.Config, host component.Host) {
	t.Helper()
	for i := 0; i < lifecycleRounds(); i++ {
		cycle(t, cfg, false, host)
		if i%10 == 9 {
			cycle(t, cfg, true, host)
		}
	}
}

func TestLifecycleLive(t *testing.T) {
	requireRoot(t)
	defer goleak.VerifyNone(t, ignoreCollectorGlobals)
	cfg := gdreceiver.NewFactory().CreateDefaultConfig().(*gdreceiver.Config)
	cfg.Source = gdreceiver.SourceLive
	cfg.Live.DRMMajors = []uint32{1}
	before := kernelObjects(t)
	fds := openFDs(t)

	// One round held open: what it adds to the kernel's lists is ours.
	f := gdreceiver.NewFactory()
	set := receivertest.NewNopSettings(metadata.Type)
	tr, err := f.CreateTraces(context.Background(), set, cfg, consumertest.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	host := &statusHost{}
	if err := tr.Start(context.Background(), host); err != nil {
		t.Fatalf("Start: %v", err)
	}
	ours := added(before, kernelObjects(t))
	kinds := map[string]int{}
	for _, o := range ours {
		kinds[o.kind]++
	}
	if kinds["prog"] == 0 || kinds["map"] == 0 || kinds["link"] == 0 {
		t.Fatalf("Start loaded %v: expected programs, maps and links", kinds)
	}
	if err := tr.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitGone(t, ours)

	start := time.Now()
	cycles(t, cfg, host)
	t.Logf("%d live Start/Shutdown rounds (and %d Shutdown without Start) in %v; one round loads %v",
		lifecycleRounds(), lifecycleRounds()/10, time.Since(start).Round(time.Millisecond), kinds)
	after := kernelObjects(t)
	// Everything new since before must be gone (allowing other processes' objects whose
	// names are not ours).
	names := map[string]bool{}
	for _, o := range ours {
		names[o.kind+"/"+o.name] = true
	}
	var left []bpfObject
	for _, o := range added(before, after) {
		if names[o.kind+"/"+o.name] || o.kind == "link" {
			left = append(left, o)
		}
	}
	if len(left) > 0 {
		waitGone(t, left)
	}
	if now := openFDs(t); now != fds {
		t.Errorf("file descriptors: %d before, %d after", fds, now)
	}
	for _, ev := range host.snapshot() {
		if ev.Err() != nil {
			t.Errorf("status reported: %v", ev.Err())
		}
	}
}

// pinned lists /sys/fs/bpf (recursively).
func pinned(t *testing.T) []string {
	var out []string
	_ = filepath.Walk("/sys/fs/bpf", func(p string, _ os.FileInfo, err error) error {
		if err == nil {
			out = append(out, p)
		}
		return nil
	})
	return out
}

func waitFile(t *testing.T, path string, cmd *exec.Cmd, stderr *strings.Builder) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		if cmd.ProcessState != nil || time.Now().After(deadline) {
			t.Fatalf("%s never appeared; stderr:\n%s", path, stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

var eventsDecoded = regexp.MustCompile(`ioctl_enter=(\d+)`)

func TestKill9LeavesNothingAttached(t *testing.T) {
	requireRoot(t)
	bin := cli(t)
	dir := t.TempDir()
	before := kernelObjects(t)
	pinsBefore := pinned(t)

	ready := filepath.Join(dir, "ready")
	cmd := exec.Command(bin, "live", "--drm-major", "1", "--no-tenant", "--quiet", "--duration", "5m", "--ready-file", ready)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFile(t, ready, cmd, &stderr)
	ours := added(before, kernelObjects(t))
	if len(ours) == 0 {
		t.Fatal("the live process added nothing to the kernel's lists")
	}
	kill9Released(t, cmd, ours, pinsBefore, "the CLI")

	// A restarted one attaches again and sees events.
	ready2 := filepath.Join(dir, "ready2")
	cmd = exec.Command(bin, "live", "--drm-major", "1", "--no-tenant", "--duration", "4s", "--ready-file", ready2)
	var stdout strings.Builder
	stderr.Reset()
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFile(t, ready2, cmd, &stderr)
	ioctlFlood(t, 500*time.Millisecond)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("restarted live: %v\n%s", err, stderr.String())
	}
	m := eventsDecoded.FindStringSubmatch(stdout.String())
	if m == nil || m[1] == "0" {
		t.Fatalf("the restarted process saw no ioctl events:\n%s", stdout.String())
	}
	t.Logf("restarted: %s ioctl_enter events", m[1])
}

// kill9Released sends SIGKILL to cmd and checks that the kernel frees every BPF object it
// had loaded (ours) and that nothing new stays pinned under /sys/fs/bpf.
func kill9Released(t *testing.T, cmd *exec.Cmd, ours []bpfObject, pinsBefore []string, what string) {
	t.Helper()
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	waitGone(t, ours)
	if p := pinned(t); strings.Join(p, "\n") != strings.Join(pinsBefore, "\n") {
		t.Errorf("pins under /sys/fs/bpf changed: before %v, after %v", pinsBefore, p)
	}
	t.Logf("kill -9 of %s: %d BPF objects released by the kernel", what, len(ours))
}

// The CLI as the collector's process stand-in: without CAP_BPF/CAP_PERFMON (and
// CAP_SYS_ADMIN), or as nobody, `live` fails with one line naming what is missing.
func TestDroppedCapabilitiesOneClearError(t *testing.T) {
	requireRoot(t)
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		testreq.Skip(t, testreq.Setpriv, "setpriv (util-linux) not installed")
	}
	bin := cli(t)
	if err := os.Chmod(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, args := range map[string][]string{
		"no_bpf_perfmon_sysadmin": {"--inh-caps=-all", "--bounding-set=-bpf,-perfmon,-sys_admin"},
		"nobody":                  {"--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all"},
	} {
		t.Run(name, func(t *testing.T) {
			cmd := exec.Command(setpriv, append(args, "--", bin, "live", "--no-tenant", "--duration", "1s")...)
			out, err := cmd.CombinedOutput()
			ee, ok := err.(*exec.ExitError)
			if !ok || ee.ExitCode() != 1 {
				t.Fatalf("exit: %v\n%s", err, out)
			}
			var errLines []string
			sc := bufio.NewScanner(strings.NewReader(string(out)))
			for sc.Scan() {
				if strings.HasPrefix(sc.Text(), "ghostdriver live:") {
					errLines = append(errLines, sc.Text())
				}
			}
			if len(errLines) != 1 || !strings.Contains(errLines[0], "CAP_BPF") || !strings.Contains(errLines[0], "CAP_PERFMON") {
				t.Fatalf("want one error line naming CAP_BPF and CAP_PERFMON, got %q\nfull output:\n%s", errLines, out)
			}
			t.Logf("%s", errLines[0])
		})
	}
}
