//go:build linux

// Package lifecycle holds the whole-receiver tests of SECURITY.md: lifecycle leaks
// (goroutines, file descriptors, BPF programs/maps/links checked against the kernel's
// own lists), kill -9 of a live process, dropped privileges, ring buffer overrun.
// Tests that load eBPF programs skip with a reason when not root.
package lifecycle

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"

	"github.com/ghostdriver/ghostdriver/internal/testreq"
)

func requireRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		testreq.Skip(t, testreq.Root, "needs root: loads and attaches eBPF programs (CAP_BPF+CAP_PERFMON)")
	}
}

// bpfObject is one entry of the kernel's program, map or link list.
type bpfObject struct {
	kind string // "prog", "map", "link"
	id   uint32
	name string
}

// kernelObjects lists every BPF program, map and link the kernel holds (all processes).
func kernelObjects(t testing.TB) map[bpfObject]bool {
	t.Helper()
	out := map[bpfObject]bool{}
	var pid ebpf.ProgramID
	for {
		next, err := ebpf.ProgramGetNextID(pid)
		if err != nil {
			break
		}
		pid = next
		name := ""
		if p, err := ebpf.NewProgramFromID(pid); err == nil {
			if info, err := p.Info(); err == nil {
				name = info.Name
			}
			p.Close()
		}
		out[bpfObject{"prog", uint32(pid), name}] = true
	}
	var mid ebpf.MapID
	for {
		next, err := ebpf.MapGetNextID(mid)
		if err != nil {
			break
		}
		mid = next
		name := ""
		if m, err := ebpf.NewMapFromID(mid); err == nil {
			if info, err := m.Info(); err == nil {
				name = info.Name
			}
			m.Close()
		}
		out[bpfObject{"map", uint32(mid), name}] = true
	}
	it := new(link.Iterator)
	for it.Next() {
		name := ""
		if info, err := it.Link.Info(); err == nil {
			name = "prog" + itoa(uint32(info.Program))
		}
		out[bpfObject{"link", uint32(it.ID), name}] = true
	}
	it.Close()
	return out
}

func itoa(v uint32) string {
	if v == 0 {
		return "0"
	}
	var b [10]byte
	i := len(b)
	for v > 0 {
		i--
		b[i] = byte('0' + v%10)
		v /= 10
	}
	return string(b[i:])
}

// added returns the objects in after that are not in before.
func added(before, after map[bpfObject]bool) []bpfObject {
	var out []bpfObject
	for o := range after {
		if !before[o] {
			out = append(out, o)
		}
	}
	return out
}

// heldByOthers lists the BPF objects other processes hold through a file descriptor
// (fdinfo's prog_id/map_id/link_id): `go test ./...` runs packages in parallel, so the
// kernel's lists also hold other test binaries' programs and maps, named like ours.
func heldByOthers() map[string]bool {
	out := map[string]bool{}
	self := strconv.Itoa(os.Getpid())
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range procs {
		if filepath.Base(p) == self {
			continue
		}
		infos, _ := filepath.Glob(p + "/fdinfo/*")
		for _, fi := range infos {
			b, err := os.ReadFile(fi)
			if err != nil {
				continue
			}
			for _, line := range strings.Split(string(b), "\n") {
				for _, kind := range []string{"prog", "map", "link"} {
					if v, ok := strings.CutPrefix(line, kind+"_id:"); ok {
						out[kind+"/"+strings.TrimSpace(v)] = true
					}
				}
			}
		}
	}
	// Maps a held program uses are held through it (.rodata, .bss, shared maps).
	for k := range out {
		v, ok := strings.CutPrefix(k, "prog/")
		if !ok {
			continue
		}
		id, _ := strconv.ParseUint(v, 10, 32)
		p, err := ebpf.NewProgramFromID(ebpf.ProgramID(id))
		if err != nil {
			continue
		}
		if info, err := p.Info(); err == nil {
			if ids, ok := info.MapIDs(); ok {
				for _, m := range ids {
					out["map/"+strconv.FormatUint(uint64(m), 10)] = true
				}
			}
		}
		p.Close()
	}
	return out
}

// waitGone waits (programs and maps are freed after an RCU grace period) until none of
// ours is in the kernel's lists any more, and fails with those that stay. Objects another
// process holds are not ours.
func waitGone(t *testing.T, ours []bpfObject) {
	t.Helper()
	began := time.Now()
	// Links on the syscall tracepoints (faultable on recent kernels) and the programs and
	// maps behind them are freed after an RCU tasks-trace grace period: measured 2-3 s
	// on an idle 2-core VM with kernel 6.18, and over 5 s on a busy one. A leak stays
	// forever; 60 s tells the two apart without flaking.
	deadline := began.Add(60 * time.Second)
	for {
		now := kernelObjects(t)
		var left []bpfObject
		for _, o := range ours {
			if now[o] {
				left = append(left, o)
			}
		}
		if len(left) == 0 {
			t.Logf("waitGone: %d objects gone after %v", len(ours), time.Since(began).Round(time.Millisecond))
			return
		}
		if time.Now().After(deadline) {
			others := heldByOthers()
			var mine []bpfObject
			for _, o := range left {
				if !others[o.kind+"/"+strconv.FormatUint(uint64(o.id), 10)] {
					mine = append(mine, o)
				}
			}
			if len(mine) == 0 {
				return
			}
			t.Fatalf("%d BPF objects still in the kernel, held by no other process: %v", len(mine), mine)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// openFDs counts this process's file descriptors.
func openFDs(t testing.TB) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

// statusHost is a component.Host that keeps the status events the receiver reports.
type statusHost struct {
	mu     sync.Mutex
	events []*componentstatus.Event
}

func (h *statusHost) GetExtensions() map[component.ID]component.Component { return nil }

func (h *statusHost) Report(ev *componentstatus.Event) {
	h.mu.Lock()
	h.events = append(h.events, ev)
	h.mu.Unlock()
}

func (h *statusHost) snapshot() []*componentstatus.Event {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]*componentstatus.Event(nil), h.events...)
}

var (
	cliOnce sync.Once
	cliPath string
	cliErr  error
)

// cli builds the ghostdriver command once per test binary.
func cli(t *testing.T) string {
	t.Helper()
	cliOnce.Do(func() {
		dir, err := os.MkdirTemp("", "ghostdriver-cli-")
		if err != nil {
			cliErr = err
			return
		}
		cliPath = filepath.Join(dir, "ghostdriver")
		cmd := exec.Command("go", "build", "-o", cliPath, "github.com/ghostdriver/ghostdriver/cmd/ghostdriver")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			cliErr = errors.New(string(out))
		}
	})
	if cliErr != nil {
		t.Fatalf("building the CLI: %v", cliErr)
	}
	return cliPath
}

// ioctlFlood runs ioctl(TCGETS) on /dev/null for d on a thread of its own.
func ioctlFlood(t *testing.T, d time.Duration) (ioctls int) {
	t.Helper()
	f, err := os.Open("/dev/null")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		for i := 0; i < 1000; i++ {
			ioctlTCGETS(int(f.Fd()))
		}
		ioctls += 1000
	}
	return ioctls
}
