// A tenant controls what sits at the paths its maps name: only regular files are opened,
// and nothing there can block the reader.

package procfs

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
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

func TestOpenRegular(t *testing.T) {
	dir := t.TempDir()
	at := func(name string) string { return filepath.Join(dir, name) }
	if err := os.WriteFile(at("lib.so"), []byte("\x7fELF"), 0o644); err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(unix.Mkfifo(at("fifo"), 0o644))
	unblockFIFO(t, at("fifo"))
	must(os.Symlink(at("lib.so"), at("link-to-lib")))
	must(os.Symlink(at("fifo"), at("link-to-fifo")))
	must(os.Mkdir(at("dir"), 0o755))
	must(unix.Mknod(at("sock"), unix.S_IFSOCK|0o644, 0))
	if os.Geteuid() == 0 {
		must(unix.Mknod(at("null"), unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3))))
	}

	cases := []struct {
		name   string
		follow bool
		ok     bool
		want   error // nil: any error
	}{
		{"lib.so", false, true, nil},
		{"fifo", false, false, ErrNotRegular},
		{"fifo", true, false, ErrNotRegular},
		{"dir", false, false, ErrNotRegular},
		{"sock", false, false, ErrNotRegular},
		{"null", false, false, ErrNotRegular},        // never opened: a device open can have effects
		{"link-to-lib", false, false, ErrNotRegular}, // O_PATH|O_NOFOLLOW opens the link itself
		{"link-to-lib", true, true, nil},
		{"link-to-fifo", true, false, ErrNotRegular},
		{"missing", false, false, os.ErrNotExist},
	}
	for _, c := range cases {
		if c.name == "null" && os.Geteuid() != 0 {
			continue
		}
		open := OpenRegular
		if c.follow {
			open = OpenRegularLink
		}
		type opened struct {
			f   *os.File
			err error
		}
		r := within(t, 5*time.Second, func() opened { f, err := open(at(c.name)); return opened{f, err} })
		f, err := r.f, r.err
		switch {
		case c.ok && err != nil:
			t.Errorf("%s (follow %v): %v", c.name, c.follow, err)
		case !c.ok && err == nil:
			t.Errorf("%s (follow %v): opened", c.name, c.follow)
		case !c.ok && c.want != nil && !errors.Is(err, c.want):
			t.Errorf("%s (follow %v): %v, want %v", c.name, c.follow, err, c.want)
		}
		if f != nil {
			var b [4]byte
			if _, err := f.ReadAt(b[:], 0); err != nil || string(b[:]) != "\x7fELF" {
				t.Errorf("%s: read %q, %v", c.name, b, err)
			}
			f.Close()
		}
	}
}
