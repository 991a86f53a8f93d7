// A tenant controls what sits at the paths its maps name: a mapped library replaced by
// a FIFO cannot block the TLS finder (procfs.OpenRegular opens regular files only).

package appctx

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ghostdriver/ghostdriver/internal/procfs"
)

// within runs f and fails the test if it has not returned after d (the old os.Open of a
// FIFO blocked until a writer came, i.e. forever).
func within[T any](t *testing.T, d time.Duration, f func() T) T {
	t.Helper()
	done := make(chan T, 1)
	go func() { done <- f() }()
	select {
	case v := <-done:
		return v
	case <-time.After(d):
		t.Fatalf("still blocked after %v", d)
	}
	panic("unreachable")
}

// unblockFIFO opens fifo for writing once the test is over, releasing a reader still
// blocked in open(2) (the old code), so the test binary can exit.
func unblockFIFO(t *testing.T, fifo string) {
	t.Cleanup(func() {
		if fd, err := unix.Open(fifo, unix.O_WRONLY|unix.O_NONBLOCK, 0); err == nil {
			unix.Close(fd)
		}
	})
}

// fakeProcess lays out <procRoot>/<pid>/{maps,root/...} with one executable mapping of
// /lib/libtenant.so and returns the path the mapping resolves to under root.
func fakeProcess(t *testing.T, procRoot string, pid string) string {
	t.Helper()
	pidDir := filepath.Join(procRoot, pid)
	if err := os.MkdirAll(filepath.Join(pidDir, "root", "lib"), 0o755); err != nil {
		t.Fatal(err)
	}
	maps := "7f0000000000-7f0000001000 r-xp 00000000 fd:01 1234                       /lib/libtenant.so\n"
	if err := os.WriteFile(filepath.Join(pidDir, "maps"), []byte(maps), 0o644); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(pidDir, "root", "lib", "libtenant.so")
}

// A mapped library replaced by a FIFO: the finder returns at once, with no module found,
// instead of hanging the enrich worker in open(2).
func TestTLSFinderMappedFileIsFIFO(t *testing.T) {
	procRoot := t.TempDir()
	lib := fakeProcess(t, procRoot, "4242")
	if err := unix.Mkfifo(lib, 0o644); err != nil {
		t.Fatal(err)
	}
	unblockFIFO(t, lib)

	mp := procfs.Mapping{Start: 0x7f0000000000, End: 0x7f0000001000, Path: "/lib/libtenant.so"}
	err := within(t, 5*time.Second, func() error {
		_, err := inspectFile(filepath.Join(procRoot, "4242"), mp, ThreadContextSymbol)
		return err
	})
	if !errors.Is(err, procfs.ErrNotRegular) {
		t.Errorf("inspectFile on a FIFO: %v, want procfs.ErrNotRegular", err)
	}
	f := &TLSFinder{ProcRoot: procRoot}
	err = within(t, 5*time.Second, func() error { _, err := f.Find(4242); return err })
	if !errors.Is(err, ErrNoTLSSymbol) {
		t.Errorf("Find with a FIFO mapped: %v, want ErrNoTLSSymbol", err)
	}
}
