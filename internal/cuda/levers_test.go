//go:build linux

// The levers on the per-call hook cost (Config.Layers, Config.LaunchesAtEntry) must keep
// the launch counts exact: the stub libraries count their own calls (ground truth printed
// by the workload), and the assembler's top-level and nested launch counts must match
// them under every combination.
package cuda

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/ghostdriver/ghostdriver/internal/capability"
)

type stubCounts struct{ table, export, streamSync int }

// leverSink counts the workload's calls recorded at entry (NoReturn), by layer.
type leverSink struct {
	*goneSink
	noReturn [2]int
}

func (l *leverSink) Calls(batch []Call) {
	for _, c := range batch {
		if c.PID == l.pid.Load() && c.NoReturn {
			l.noReturn[c.Info().Layer]++
		}
	}
	l.goneSink.Calls(batch)
}

// runStubCounted runs the two-thread workload under cfg; it returns the stubs' own
// counts, the assembler and the source's stats once every call is read (and calls
// before, when given, with the source still open).
func runStubCounted(t *testing.T, dir, app string, cfg Config, iters int, before ...func(*Source)) (stubCounts, *Assembler, Stats, [2]int) {
	t.Helper()
	cfg.RescanInterval, cfg.NoXid = -1, true
	cfg.ExtraLibraries = []string{filepath.Join(dir, "libcuda.so.1"), filepath.Join(dir, "libcudart.so.12")}
	src, _, err := Open(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if cfg.UprobeMulti {
		checkUprobeMultiOrFallback(t, src)
	}
	asm := NewAssembler(AssemblerConfig{}, func(*Submission) {})
	sink := &leverSink{goneSink: &goneSink{Assembler: asm, gone: map[uint32]bool{}}}
	stop := runSource(t, src, sink)
	cmd := exec.Command(app, strconv.Itoa(iters))
	cmd.Env = append(os.Environ(), "STUB_NO_THREAD_CTX=1")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sink.pid.Store(uint32(cmd.Process.Pid))
	rd := bufio.NewReader(stdout)
	var last string
	for _, prefix := range []string{"mapped", "ready", "counts"} {
		line, err := rd.ReadString('\n')
		if err != nil || !strings.HasPrefix(line, prefix) {
			t.Fatalf("workload said %q (%v), want %q", line, err, prefix)
		}
		last = line
		if prefix == "ready" && !cfg.IgnoreEntryPoints && cfg.hooks(Driver) {
			// the runtime's driver launches go through learned entry points: hooked first
			waitFor(t, "entry points hooked", func() bool { return src.Stats().EntryPointHooks >= 2 })
		}
		io.WriteString(stdin, "\n")
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	stop() // reads the ring to its end
	asm.Flush()
	for _, f := range before {
		f(src)
	}
	var c stubCounts
	if _, err := fmt.Sscanf(last, "counts table_launch=%d export_launch=%d stream_sync=%d", &c.table, &c.export, &c.streamSync); err != nil {
		t.Fatalf("workload said %q: %v", last, err)
	}
	return c, asm, src.Stats(), sink.noReturn
}

// checkUprobeMultiOrFallback: where the kernel has uprobe_multi links (6.6+: the kernel's
// release from uname, not the source's probe) the multi programs must be in use,
// or the case would test the classic uprobes again; where it has none (the arm64 guest's
// 6.1) the source must say so in its report and keep the classic uprobes, and the case
// then checks that the counts stay exact through them.
func checkUprobeMultiOrFallback(t *testing.T, src *Source) {
	t.Helper()
	var multi, refused []string
	for _, e := range src.Report().Entries {
		if e.Stage == "uprobe_multi" {
			if e.Status == capability.StatusAttached {
				multi = append(multi, e.Hook)
			} else {
				refused = append(refused, e.Hook+": "+e.Reason)
			}
		}
	}
	if rel, ok := kernelBefore(t, 6, 6); ok {
		t.Logf("kernel %s has no uprobe_multi (6.6+); the source reported %q", rel, refused)
		if len(refused) == 0 || src.enterMulti != nil {
			t.Fatalf("kernel without uprobe_multi, but the source reports no fallback (attached %q, refused %q)", multi, refused)
		}
		if !strings.Contains(strings.Join(refused, "\n"), "classic uprobes used") {
			t.Errorf("the fallback's report does not say the classic uprobes are used: %q", refused)
		}
		return
	}
	if len(multi) == 0 || len(refused) != 0 || src.enterMulti == nil {
		t.Fatalf("uprobe_multi programs not in use (refused %q): the case would test the classic uprobes again", refused)
	}
}

// kernelBefore says whether the running kernel's release is before major.minor.
func kernelBefore(t *testing.T, major, minor int) (string, bool) {
	t.Helper()
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		t.Fatal(err)
	}
	rel := unix.ByteSliceToString(u.Release[:])
	var ma, mi int
	if _, err := fmt.Sscanf(rel, "%d.%d", &ma, &mi); err != nil {
		t.Fatalf("kernel release %q: %v", rel, err)
	}
	return rel, ma < major || (ma == major && mi < minor)
}

func TestHookLeversKeepLaunchCountsExact(t *testing.T) {
	needRootAndGCC(t)
	dir := t.TempDir()
	app := buildStubs(t, dir)
	for _, c := range []struct {
		layers         string
		atEntry, multi bool
	}{{"", false, false}, {LayersDriver, false, false}, {"", true, false}, {LayersDriver, true, false},
		{LayersRuntime, false, false}, {LayersRuntime, true, false}, {"", false, true}, {"", true, true}, {LayersDriver, true, true}} {
		t.Run(fmt.Sprintf("layers=%s,at_entry=%v,multi=%v", c.layers, c.atEntry, c.multi), func(t *testing.T) {
			cfg := Config{Layers: c.layers, LaunchesAtEntry: c.atEntry, UprobeMulti: c.multi}
			truth, asm, st, noReturn := runStubCounted(t, dir, app, cfg, 50)
			top, nested := asm.Counts[ClassLaunch], asm.NestedCounts[ClassLaunch]
			t.Logf("stub: %+v; top-level launches %d, nested %d; calls %d, lost %d, no frame %d, stale %d",
				truth, top, nested, st.Calls, st.Lost, st.ReturnsWithoutFrame, st.StaleFrames)
			if st.Lost != 0 || st.StaleFrames != 0 {
				t.Fatalf("lost %d, stale %d: the counts would not be exact", st.Lost, st.StaleFrames)
			}
			// Every runtime launch of the stub makes one table launch (libcudart_stub.c);
			// the export launches are the workload's direct driver calls.
			wantTop, wantNested := truth.table+truth.export, truth.table
			switch c.layers {
			case LayersDriver:
				wantNested = 0
			case LayersRuntime:
				wantTop, wantNested = truth.table, 0 // direct driver launches are not seen
			}
			if top != uint64(wantTop) || nested != uint64(wantNested) {
				t.Errorf("top-level launches %d, nested %d; want %d and %d", top, nested, wantTop, wantNested)
			}
			// At entry: the launches of the innermost hooked layer, and nothing else.
			var wantAtEntry [2]int
			if c.atEntry && c.layers == LayersRuntime {
				wantAtEntry[Runtime] = truth.table
			} else if c.atEntry {
				wantAtEntry[Driver] = truth.table + truth.export
			}
			if noReturn != wantAtEntry {
				t.Errorf("calls recorded at entry (driver, runtime) = %v, want %v", noReturn, wantAtEntry)
			}
			if got := asm.Counts[ClassSync]; got != uint64(truth.streamSync+3) {
				t.Errorf("top-level syncs %d, want the stub's %d stream syncs + 2 event syncs + 1 device sync", got, truth.streamSync)
			}
		})
	}
}

// The floor (Config.FloorLaunches, what cudatrace -floor measures) must hook exactly the
// launches LaunchesAtEntry records, run once per launch and record none of them: the
// stubs count their own launches, the program counts its hits.
func TestFloorLaunchesHitOncePerLaunch(t *testing.T) {
	needRootAndGCC(t)
	// The floor's count is the program's hits from every process that maps a hooked file,
	// and the source hooks whatever CUDA libraries /proc shows at its start: the package's
	// TestMain keeps other packages' stub workloads out (main_test.go).
	dir := t.TempDir()
	app := buildStubs(t, dir)
	for _, multi := range []bool{false, true} {
		t.Run(fmt.Sprintf("multi=%v", multi), func(t *testing.T) {
			var hits uint64
			cfg := Config{Layers: LayersDriver, FloorLaunches: true, UprobeMulti: multi}
			truth, asm, st, noReturn := runStubCounted(t, dir, app, cfg, 50, func(src *Source) {
				var err error
				if hits, err = src.FloorHits(); err != nil {
					t.Fatal(err)
				}
			})
			t.Logf("stub: %+v; floor hits %d; launches recorded %d; calls %d", truth, hits, asm.Counts[ClassLaunch], st.Calls)
			if want := uint64(truth.table + truth.export); hits != want {
				t.Errorf("floor hits %d, want the stubs' %d driver launches", hits, want)
			}
			if asm.Counts[ClassLaunch] != 0 || noReturn != [2]int{} {
				t.Errorf("launches recorded under the floor: %d (at entry %v), want none", asm.Counts[ClassLaunch], noReturn)
			}
			if got := asm.Counts[ClassSync]; got != uint64(truth.streamSync+3) {
				t.Errorf("top-level syncs %d, want %d: the other calls must still be traced", got, truth.streamSync+3)
			}
		})
	}
}
