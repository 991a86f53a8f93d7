//go:build linux

// Channels as the library makes them, in this test process: a real memfd found through
// /proc, opened and mapped a second time, read through that mapping; the refusals
// (another process's channel, a size out of range, another name); a memfd shrunk under
// the mapping faults into an error, not a crash.
package cupti

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/ghostdriver/ghostdriver/internal/testreq"
)

// testMemfd is a channel made the library's way: memfd, ftruncate, mmap shared.
type testMemfd struct {
	fd  int
	mem []byte
}

func newTestMemfd(t *testing.T, name string, flags int, size int) *testMemfd {
	t.Helper()
	fd, err := unix.MemfdCreate(name, flags|unix.MFD_CLOEXEC)
	if err != nil {
		testreq.Skip(t, testreq.Memfd, "memfd_create: "+err.Error()) // kernels before 3.17
	}
	if err := unix.Ftruncate(fd, int64(size)); err != nil {
		t.Fatal(err)
	}
	mem, err := unix.Mmap(fd, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	m := &testMemfd{fd: fd, mem: mem}
	t.Cleanup(func() {
		_ = unix.Munmap(mem)
		m.close()
	})
	return m
}

func (m *testMemfd) close() {
	if m.fd >= 0 {
		_ = unix.Close(m.fd)
		m.fd = -1
	}
}

// newTestChannel is a valid channel of this process with a 64 KiB ring.
func newTestChannel(t *testing.T, flags int) *testMemfd {
	m := newTestMemfd(t, ChannelName, flags, HeaderSize+RingMin)
	writeHeader(m.mem, RingMin, uint32(os.Getpid()))
	return m
}

func findOwn(t *testing.T, fd int) bool {
	t.Helper()
	found, err := Find("/proc")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range found {
		if f.PID == os.Getpid() && f.FD == fd {
			if want := "/proc/" + strconv.Itoa(f.PID) + "/fd/" + strconv.Itoa(fd); f.Path != want {
				t.Fatalf("path %q, want %q", f.Path, want)
			}
			return true
		}
	}
	return false
}

func TestFindAndOpenOwnChannel(t *testing.T) {
	m := newTestChannel(t, 0)
	other := newTestMemfd(t, ChannelName+"-other", 0, HeaderSize+RingMin) // a longer name is not ours
	if !findOwn(t, m.fd) || findOwn(t, other.fd) {
		t.Fatal("Find: the channel not found, or the other name found")
	}
	w := newWriter(m.mem)
	w.must(t, FrameBatch, 0, batchBody(Batch{MonoBefore: 1000, CuptiAt: 100, MonoAfter: 1000}))
	w.must(t, FrameKernel, 0, kernelBody(&Kernel{Start: 200, End: 300, Name: "through the second mapping"}, -1))
	w.publish()
	le.PutUint32(m.mem[hdrLibState:], uint32(StateOn))

	ch, err := OpenChannel("/proc", os.Getpid(), m.fd)
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Close()
	if ch.Sealed || ch.NSPID != uint32(os.Getpid()) || ch.Ring.LibState() != StateOn {
		t.Fatalf("sealed %v (made without MFD_ALLOW_SEALING: cannot be), nspid %d, state %v", ch.Sealed, ch.NSPID, ch.Ring.LibState())
	}
	var s recSink
	d := NewDecoder(uint32(ch.PID), &s)
	if n, err := ch.Drain(d.Frame); n != 2 || err != nil {
		t.Fatalf("Drain: %d, %v", n, err)
	}
	if len(s.kernels) != 1 || s.kernels[0].Start != 1100 || s.kernels[0].End != 1200 || s.kernels[0].Name != "through the second mapping" {
		t.Fatalf("kernels %+v", s.kernels)
	}
	// The collector's writes reach the library's mapping.
	ch.Ring.SetControl(true)
	ch.Ring.Beat(99)
	if le.Uint64(m.mem[hdrTail:]) != w.head || le.Uint32(m.mem[hdrControl:]) != ControlOn || le.Uint64(m.mem[hdrCollectorBeat:]) != 99 {
		t.Fatal("the collector's writes are not in the library's mapping")
	}
	if reason, err := ch.Gone(); reason != "" || err != nil {
		t.Fatalf("Gone: %q %v", reason, err)
	}
	// Closed by the process: the mapping still reads what was written.
	w.must(t, FrameKernel, 0, kernelBody(&Kernel{Start: 400, Name: "after close"}, -1))
	w.publish()
	m.close()
	if reason, err := ch.Gone(); reason != "the descriptor was closed or replaced" || err != nil {
		t.Fatalf("Gone after close: %q %v", reason, err)
	}
	if n, err := ch.Drain(d.Frame); n != 1 || err != nil || s.kernels[1].Name != "after close" {
		t.Fatalf("Drain after close: %d, %v", n, err)
	}
}

// A memfd made with MFD_ALLOW_SEALING is sealed against shrinking by OpenChannel: the
// process can no longer fault the collector.
func TestOpenChannelSeals(t *testing.T) {
	m := newTestChannel(t, unix.MFD_ALLOW_SEALING)
	ch, err := OpenChannel("/proc", os.Getpid(), m.fd)
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Close()
	if !ch.Sealed {
		t.Fatal("not sealed")
	}
	if err := unix.Ftruncate(m.fd, HeaderSize); !errors.Is(err, unix.EPERM) {
		t.Fatalf("shrinking a sealed memfd: %v", err)
	}
	if err := unix.Ftruncate(m.fd, HeaderSize+2*RingMin); err != nil {
		t.Fatalf("growing is still allowed: %v", err)
	}
}

// An unsealable memfd shrunk under the mapping: the access faults (SIGBUS), the guard
// returns ErrFault and the test process lives on.
func TestChannelShrunkUnderTheMappingFaults(t *testing.T) {
	m := newTestChannel(t, 0)
	w := newWriter(m.mem)
	for i := 0; i < 100; i++ {
		w.must(t, FrameState, 0, stateBody(StateChange{Mono: int64(i)}))
	}
	w.publish()
	ch, err := OpenChannel("/proc", os.Getpid(), m.fd)
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Close()
	if err := unix.Ftruncate(m.fd, HeaderSize); err != nil {
		t.Fatal(err)
	}
	var s recSink
	n, err := ch.Drain(NewDecoder(0, &s).Frame)
	if !errors.Is(err, ErrFault) || n != 0 {
		t.Fatalf("Drain of a shrunk memfd: %d, %v", n, err)
	}
}

func TestOpenChannelRefusals(t *testing.T) {
	pid := os.Getpid()
	t.Run("another process's", func(t *testing.T) {
		// What a forked child sees: its parent's channel.
		m := newTestChannel(t, 0)
		le.PutUint32(m.mem[hdrPID:], uint32(pid+1))
		_, err := OpenChannel("/proc", pid, m.fd)
		want := "channel of pid " + strconv.Itoa(pid+1) + " found in pid " + strconv.Itoa(pid)
		if !errors.Is(err, ErrForeignChannel) || !strings.Contains(err.Error(), want) {
			t.Fatalf("err %v, want %q", err, want)
		}
	})
	for _, c := range []struct {
		name string
		size int
		want string
	}{
		{"too small", HeaderSize + RingMin - 4096, "size 65536 outside"},
		{"too large", HeaderSize + RingMax + 4096, "size 268443648 outside"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := newTestMemfd(t, ChannelName, 0, c.size)
			writeHeader(m.mem, RingMin, uint32(pid))
			if _, err := OpenChannel("/proc", pid, m.fd); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err %v, want %q", err, c.want)
			}
		})
	}
	t.Run("bad header", func(t *testing.T) {
		m := newTestMemfd(t, ChannelName, 0, HeaderSize+RingMin)
		if _, err := OpenChannel("/proc", pid, m.fd); err == nil || !strings.Contains(err.Error(), "magic") {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("not a memfd", func(t *testing.T) {
		f, err := os.CreateTemp(t.TempDir(), "x")
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := OpenChannel("/proc", pid, int(f.Fd())); err == nil {
			t.Fatal("a file with a name opened as a channel")
		}
	})
}
