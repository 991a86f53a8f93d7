//go:build linux

package probe

import (
	"errors"
	"os"
	"testing"
	"time"

	"github.com/cilium/ebpf/ringbuf"

	"go.uber.org/zap"

	"github.com/ghostdriver/ghostdriver/internal/event"
	"github.com/ghostdriver/ghostdriver/internal/ringread"
)

// The in-place reader (ringread.go) over a 16 KiB ring, so that the records of 100 000
// ioctls wrap it thousands of times: every record of the loop's thread arrives in order
// and whole (fd, return value), or is counted lost by the kernel — a record read twice,
// skipped or torn at the wrap breaks the alternation, the fields or the count. It also
// shows the consumer position reaching the kernel: never published, the ring stays full
// after its first 16 KiB and nearly everything is lost.
func TestMmapRingWrapsAndPublishes(t *testing.T) {
	requireRoot(t)
	cfg := DefaultConfig()
	cfg.DRMMajors = []uint32{1}
	cfg.RingBufferBytes = 16 << 10
	l, rep, err := Open(cfg, zap.NewNop())
	if err != nil {
		t.Fatalf("Open: %v\n%s", err, rep)
	}
	defer l.Close()
	if _, ok := l.rd.(*ringread.Mmap); !ok {
		t.Fatalf("events mode reads with %T, want the in-place reader", l.rd)
	}
	sink, stop := startRun(t, l)
	const n = 100_000
	tid, fd := ioctlsOnOwnThread(t, "/dev/null", n)
	time.Sleep(200 * time.Millisecond) // past a poll: the reader has drained the ring
	stop()
	evs, _ := sink.snapshot()
	// unmatched: enters followed by another enter, whose exit the kernel could not reserve
	// (the ring had room for the 104-byte entry, not for the 48-byte exit after it).
	var enters, exits, unmatched int
	for _, e := range evs {
		if int(e.TID) != tid {
			continue
		}
		switch e.Kind {
		case event.IoctlEnter:
			if enters != exits+unmatched {
				unmatched++
			}
			enters++
			if e.Fd != int32(fd) {
				t.Fatalf("enter %d: fd %d, want %d (a torn record?)", enters, e.Fd, fd)
			}
		case event.IoctlExit:
			if exits+unmatched+1 != enters {
				// An exit whose enter could not be reserved is not written (the enter's
				// reservation comes first): an exit always follows its own enter.
				t.Fatalf("exit %d after %d enters (%d without exit): a record read twice or out of order", exits+1, enters, unmatched)
			}
			exits++
			if e.Fd != int32(fd) || e.Ret >= 0 {
				t.Fatalf("exit %d: fd %d ret %d (a torn record?)", exits, e.Fd, e.Ret)
			}
		}
	}
	st := l.Stats()
	// Each ioctl's enter is either received or counted lost; a received enter's exit is
	// either received or counted lost; an enter that was lost writes no exit. So the
	// kernel's lost count is at least (n − enters) + unmatched (other threads' ioctls on
	// major 1 can only add to it), and a record read twice would make enters or exits
	// exceed n. (The last enter's exit, if missing, is one more loss not counted here.)
	if enters > n || exits > n {
		t.Fatalf("%d enters, %d exits for %d ioctls: records read twice", enters, exits, n)
	}
	if st.Lost < uint64(n-enters+unmatched) {
		t.Fatalf("%d enters (%d without exit) received, %d lost < %d: records vanished", enters, unmatched, st.Lost, n-enters+unmatched)
	}
	// Never published, the kernel sees the ring full once its first 16 KiB are written:
	// at most ringBytes/exitRecordBytes exits (fewer, with their enters) ever arrive. How
	// many more arrive depends on how often the reader runs (a loaded 2-core machine lets
	// the loop fill the ring many times between two reads), so the check is against that
	// ceiling, not a share of the loop.
	const exitRecordBytes = 8 + 40 // ring header + struct ioctl_exit_record (bpf/syscalls.c)
	if ceiling := cfg.RingBufferBytes / exitRecordBytes; exits < 4*ceiling {
		t.Fatalf("only %d of %d ioctls' exits received (%d lost), < 4× the %d a never-freed ring can hold: the consumer position does not reach the kernel", exits, n, st.Lost, ceiling)
	}
	t.Logf("%d enters (%d without exit) and %d exits of %d ioctls received through a 16 KiB ring, %d records lost (counted by the kernel)", enters, unmatched, exits, n, st.Lost)
}

// A wait that ends at its deadline must still hand over what was committed meanwhile: the
// programs commit with BPF_RB_NO_WAKEUP until a batch has gathered, so one ioctl's two
// records wake no reader, and a reader that reported the deadline without looking again
// left them behind the live reader's watermark (the e2e Jaeger test lost whole jobs).
func TestMmapRingReadsRecordsCommittedWithoutWakeup(t *testing.T) {
	requireRoot(t)
	cfg := DefaultConfig()
	cfg.DRMMajors = []uint32{1}
	l, rep, err := Open(cfg, zap.NewNop())
	if err != nil {
		t.Fatalf("Open: %v\n%s", err, rep)
	}
	defer l.Close()
	r, ok := l.rd.(*ringread.Mmap)
	if !ok {
		t.Fatalf("events mode reads with %T, want the in-place reader", l.rd)
	}
	defer r.Release()
	// Drain whatever other processes' ioctls on major 1 left, so the wait below starts
	// on an empty ring.
	var rec ringbuf.Record
	for {
		r.SetDeadline(time.Now().Add(20 * time.Millisecond))
		if err := r.ReadInto(&rec); err != nil {
			if !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatal(err)
			}
			break
		}
	}
	type result struct {
		n   int
		err error
	}
	got := make(chan result, 1)
	r.SetDeadline(time.Now().Add(400 * time.Millisecond))
	go func() {
		err := r.ReadInto(&rec)
		got <- result{len(rec.RawSample), err}
	}()
	time.Sleep(100 * time.Millisecond) // the reader is in its wait
	ioctlsOnOwnThread(t, "/dev/null", 1)
	res := <-got
	if res.err != nil {
		t.Fatalf("ReadInto: %v with %d bytes committed and unread: records committed without a wakeup were left behind the deadline", res.err, r.AvailableBytes())
	}
	if res.n == 0 {
		t.Fatal("ReadInto returned an empty record")
	}
}
