//go:build linux

// What a tenant controls, taken as hostile: the size of its maps, the addresses its
// cuGetProcAddress returns, what sits at the paths its maps name. These run without
// root: nothing here attaches (the Source has no programs: an accepted entry point gets
// as far as the attach, which fails, and says so in the report).
package cuda

import (
	"debug/elf"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
	"golang.org/x/sys/unix"

	"github.com/ghostdriver/ghostdriver/internal/capability"
	"github.com/ghostdriver/ghostdriver/internal/testreq"
)

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func copyFile(t *testing.T, from, to string) int64 {
	t.Helper()
	src, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	dst, err := os.Create(to)
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	n, err := io.Copy(dst, src)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

const junkMapping = "7f0000000000-7f0000001000 rw-p 00000000 00:00 0 \n"

// The scan reads each process's maps within bounds: what lies beyond is not seen and the
// read is counted as truncated; what came before is still used.
func TestScanLibrariesBoundedMaps(t *testing.T) {
	procRoot := t.TempDir()
	lib := func(pid, name string) string {
		copyFile(t, "/proc/self/exe", filepath.Join(procRoot, pid, "root", "usr/lib", name))
		return "7f1000000000-7f1000100000 r-xp 00000000 fd:01 42   /usr/lib/" + name + "\n"
	}
	writeFile(t, filepath.Join(procRoot, "100", "maps"), strings.Repeat(junkMapping, 10)+lib("100", "libcuda.so.1"))
	writeFile(t, filepath.Join(procRoot, "101", "maps"), lib("101", "libcudart.so.12")+strings.Repeat(junkMapping, 10))
	writeFile(t, filepath.Join(procRoot, "102", "maps"), junkMapping+"7f0000000000-7f0000001000 r-xp 0 0:0 0 /"+
		strings.Repeat("x", maxMapsLine)+"\n"+lib("102", "libcuda.so.2"))
	writeFile(t, filepath.Join(procRoot, "103", "maps"), lib("103", "libcuda.so.3"))

	found := func(libs []Library) string {
		var names []string
		for _, l := range libs {
			names = append(names, fmt.Sprintf("%d:%s", l.PID, filepath.Base(l.Mapped)))
		}
		return strings.Join(names, " ")
	}
	// 100: its library is on line 11, past 5 lines; 101: found on line 1, then cut;
	// 102: a line no kernel writes (longer than maxMapsLine) ends the read; 103: in bounds.
	libs, truncated := scanLibraries(procRoot, nil, mapsBounds{lines: 5, bytes: 1 << 20})
	if got := found(libs); got != "101:libcudart.so.12 103:libcuda.so.3" || truncated != 3 {
		t.Errorf("5-line bound: found %q, %d truncated; want 101 and 103, 3 truncated", got, truncated)
	}
	// The byte bound: 100's library line ends past 300 bytes, 101's before.
	libs, truncated = scanLibraries(procRoot, nil, mapsBounds{lines: 1 << 10, bytes: 300})
	if got := found(libs); got != "101:libcudart.so.12 103:libcuda.so.3" || truncated != 3 {
		t.Errorf("300-byte bound: found %q, %d truncated; want 101 and 103, 3 truncated", got, truncated)
	}
	libs, truncated = scanLibraries(procRoot, nil, defaultMapsBounds)
	if got := found(libs); got != "100:libcuda.so.1 101:libcudart.so.12 103:libcuda.so.3" || truncated != 1 {
		t.Errorf("default bounds: found %q, %d truncated; want 100, 101 and 103, 1 truncated (102)", got, truncated)
	}

	// The default line bound holds for a maps file of more mappings than it allows.
	writeFile(t, filepath.Join(procRoot, "104", "maps"), strings.Repeat(junkMapping, defaultMapsBounds.lines)+lib("104", "libcuda.so.4"))
	libs, truncated = scanLibraries(procRoot, nil, defaultMapsBounds)
	if got := found(libs); strings.Contains(got, "104:") || truncated != 2 {
		t.Errorf("%d mappings: found %q, %d truncated; want 104 cut before its library", defaultMapsBounds.lines+1, got, truncated)
	}
}

// stubSymbol returns the file offset where a function symbol of the stub library starts.
func stubSymbol(t *testing.T, path, name string) uint64 {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, _ := f.Symbols()
	dyn, _ := f.DynamicSymbols()
	for _, s := range append(syms, dyn...) {
		if s.Name != name || elf.ST_TYPE(s.Info) != elf.STT_FUNC {
			continue
		}
		for _, p := range f.Progs {
			if p.Type == elf.PT_LOAD && p.Flags&elf.PF_X != 0 && p.Vaddr <= s.Value && s.Value < p.Vaddr+p.Filesz {
				return s.Value - p.Vaddr + p.Off
			}
		}
	}
	t.Fatalf("%s: no function %s", path, name)
	return 0
}

// A process's cuGetProcAddress can return any address. Only the start of a function
// symbol of a hooked driver library is hooked, at most maxLearntHooks per library; every
// other address is refused and counted, and nothing a tenant puts at a mapped path blocks.
func TestLearnEntryPointRefusals(t *testing.T) {
	if _, err := exec.LookPath("gcc"); err != nil {
		testreq.Skip(t, testreq.GCC, "needs gcc to build the stub CUDA libraries")
	}
	dir := t.TempDir()
	buildStubs(t, dir)
	procRoot := filepath.Join(dir, "proc")
	root := filepath.Join(procRoot, "4242", "root")
	const driverBase, runtimeBase, otherBase, fifoBase = 0x7f1000000000, 0x7f2000000000, 0x7f3000000000, 0x7f4000000000
	mapLine := func(base uint64, size int64, path string) string {
		return fmt.Sprintf("%x-%x r-xp 00000000 fd:01 42   %s\n", base, base+uint64(size+4095)&^4095, path)
	}
	driver := copyFile(t, filepath.Join(dir, "libcuda.so.1"), filepath.Join(root, "usr/lib/libcuda.so.1"))
	runtime := copyFile(t, filepath.Join(dir, "libcudart.so.12"), filepath.Join(root, "usr/lib/libcudart.so.12"))
	other := copyFile(t, filepath.Join(dir, "libcuda.so.1"), filepath.Join(root, "opt/libnotcuda.so"))
	if err := unix.Mkfifo(filepath.Join(root, "usr/lib/libcuda.so.9"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { // releases an open(2) still blocked on the FIFO (the old code)
		if fd, err := unix.Open(filepath.Join(root, "usr/lib/libcuda.so.9"), unix.O_WRONLY|unix.O_NONBLOCK, 0); err == nil {
			unix.Close(fd)
		}
	})
	writeFile(t, filepath.Join(procRoot, "4242", "maps"), mapLine(driverBase, driver, "/usr/lib/libcuda.so.1")+
		mapLine(runtimeBase, runtime, "/usr/lib/libcudart.so.12")+mapLine(otherBase, other, "/opt/libnotcuda.so")+
		mapLine(fifoBase, 4096, "/usr/lib/libcuda.so.9")+"7f5000000000-7f5000100000 rwxp 00000000 00:00 0 \n")

	core, logs := observer.New(zap.DebugLevel)
	s := &Source{cfg: Config{ProcRoot: procRoot}, log: zap.New(core), libs: map[[2]uint64]*hookedLib{}}
	refusals := func() uint64 { // Stats would read the kernel's counters: there is no kernel side here
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.stats.EntryPointsRefused
	}
	libs, _ := scanLibraries(procRoot, nil, defaultMapsBounds) // the FIFO is no library: lstat sees a FIFO, the open refuses it
	for _, l := range libs {
		s.hookLibrary(l, false)
	}
	var driverLib *hookedLib
	for _, h := range s.libs {
		if h.Mapped == "/usr/lib/libcuda.so.1" {
			driverLib = h
		}
	}
	if driverLib == nil || len(driverLib.funcs) == 0 {
		t.Fatalf("the stub driver is not a hooked driver library with function symbols: %+v", s.libs)
	}

	hidden := stubSymbol(t, filepath.Join(dir, "libcuda.so.1"), "launch_via_table")
	htod := stubSymbol(t, filepath.Join(dir, "libcuda.so.1"), "memcpy_htod_via_table")
	rtLaunch := stubSymbol(t, filepath.Join(dir, "libcudart.so.12"), "cudaLaunchKernel")
	attempted := func() (n int) {
		for _, e := range s.Report().Entries {
			if e.Stage == "entry_point" && strings.Contains(e.Hook, "cuGetProcAddress") {
				n++
			}
		}
		return n
	}
	cases := []struct {
		what   string
		symbol string
		addr   uint64
		why    string // "": hooked
	}{
		{"a hidden function of the driver (the stub's table)", "cuLaunchKernel", driverBase + hidden, ""},
		{"one byte into that function", "cuLaunchKernel", driverBase + hidden + 1, "not the start of a function symbol"},
		{"a function of the runtime, a hooked library but not the driver", "cuMemcpyHtoD", runtimeBase + rtLaunch, "not in a hooked driver library"},
		{"the same code in a file that is no CUDA library", "cuMemcpyHtoD", otherBase + htod, "not in a hooked driver library"},
		{"anonymous memory (JIT code)", "cuCtxSynchronize", 0x7f5000000100, "not in a file mapping"},
		{"a mapped path that is now a FIFO", "cuCtxSynchronize", fifoBase, "not openable as a regular file"},
		{"unmapped", "cuCtxSynchronize", 0x1000, "not in a file mapping"},
	}
	for _, c := range cases {
		before, refusedBefore := attempted(), refusals()
		within := make(chan struct{})
		go func() { s.learnEntryPoint(4242, c.symbol, c.addr); close(within) }()
		select {
		case <-within:
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: learnEntryPoint still blocked after 5s", c.what)
		}
		hooked, refused := attempted()-before, refusals()-refusedBefore
		why := ""
		if refused > 0 {
			all := logs.FilterMessage("entry point refused").All()
			why = all[len(all)-1].ContextMap()["why"].(string)
		}
		if c.why == "" && (hooked != 1 || refused != 0) || c.why != "" && (hooked != 0 || refused != 1 || !strings.Contains(why, c.why)) {
			t.Errorf("%s (%#x): %d attach attempts, %d refusals (%q); want %s", c.what, c.addr, hooked, refused, why,
				map[bool]string{true: "hooked", false: "refused: " + c.why}[c.why == ""])
		}
	}

	// The cap: a library with maxLearntHooks learnt entry points takes no more, and says
	// so once in the report.
	s.mu.Lock()
	driverLib.learnt = maxLearntHooks
	s.mu.Unlock()
	refusedBefore := refusals()
	s.learnEntryPoint(4242, "cuMemcpyHtoD", driverBase+htod)
	s.learnEntryPoint(4242, "cuMemcpyHtoD", driverBase+htod)
	if got := refusals() - refusedBefore; got != 2 {
		t.Errorf("over the cap: %d refusals, want 2", got)
	}
	capEntries := 0
	for _, e := range s.Report().Entries {
		if e.Stage == "entry_point" && e.Hook == "/usr/lib/libcuda.so.1" && e.Status == capability.StatusUnavailable {
			capEntries++
		}
	}
	if capEntries != 1 {
		t.Errorf("%d report entries for the cap, want 1", capEntries)
	}
}

// NVIDIA's libcuda is stripped: no .symtab, so the hidden functions cuGetProcAddress
// returns (5 of 96 on the H200, cuCtxSynchronize's among them) are known as function
// starts only from the unwind table (.eh_frame_hdr). A stripped stub must still accept its
// hidden table function, and still refuse the middle of it.
func TestStrippedDriverFunctionStartsFromUnwindTable(t *testing.T) {
	if _, err := exec.LookPath("gcc"); err != nil {
		testreq.Skip(t, testreq.GCC, "needs gcc to build the stub CUDA libraries")
	}
	strip, err := exec.LookPath("strip")
	if err != nil {
		testreq.Skip(t, testreq.GCC, "needs strip (binutils, installed with gcc)")
	}
	dir := t.TempDir()
	buildStubs(t, dir)
	full := filepath.Join(dir, "libcuda.so.1")
	hidden := stubSymbol(t, full, "launch_via_table")
	stripped := filepath.Join(dir, "libcuda-stripped.so.1")
	if out, err := exec.Command(strip, "--strip-all", "-o", stripped, full).CombinedOutput(); err != nil {
		t.Fatalf("strip: %v: %s", err, out)
	}
	ef, err := elf.Open(stripped)
	if err != nil {
		t.Fatal(err)
	}
	defer ef.Close()
	if _, err := ef.Symbols(); err == nil {
		t.Fatal("the stripped stub still has a .symtab: the test would not show anything")
	}
	if len(ehFrameStarts(ef)) == 0 {
		t.Fatal("no FDEs read from the stub's .eh_frame_hdr")
	}
	f, err := os.Open(stripped)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	exports, funcs, err := librarySymbols(f, true)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := exports["launch_via_table"]; ok {
		t.Fatal("the hidden function is exported: the stub does not model a hidden entry point")
	}
	if !funcs[hidden] {
		t.Errorf("hidden function at %#x not a function start of the stripped library (%d starts)", hidden, len(funcs))
	}
	if funcs[hidden+1] {
		t.Errorf("one byte into the hidden function counted as a function start")
	}
}
