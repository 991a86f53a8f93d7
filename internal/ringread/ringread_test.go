//go:build linux

// The reader's rules, each tested once: on a real BPF ring buffer written by a socket
// filter run with BPF_PROG_TEST_RUN (what the kernel's programs do: bpf_ringbuf_output,
// with or without a wake-up), and on fake rings for what a real one cannot show on demand
// (a flood that never lets the reader wait, a reader slower than the poll, a wake-up not
// yet consumed, a ring's error).

package ringread

import (
	"context"
	"encoding/binary"
	"errors"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/ringbuf"
	"github.com/cilium/ebpf/rlimit"

	"github.com/ghostdriver/ghostdriver/internal/testreq"
)

// testRing is a real ring buffer and a program that writes the 16 bytes it is run on
// into it, with or without waking the reader.
type testRing struct {
	m            *ebpf.Map
	wake, noWake *ebpf.Program
	written      int
	rd           Ring // the Reader (cilium's), or Mmap with newTestMmap
}

const testRecordSize = 16

// ethHeader: a socket filter's test run takes its data as an Ethernet frame and starts the
// program past the 14-byte header.
const ethHeader = 14

func newTestRing(t *testing.T, size int) *testRing {
	t.Helper()
	if os.Geteuid() != 0 {
		testreq.Skip(t, testreq.Root, "needs root: creates a BPF ring buffer and runs a program with BPF_PROG_TEST_RUN")
	}
	_ = rlimit.RemoveMemlock()
	m, err := ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.RingBuf, MaxEntries: uint32(size)})
	if err != nil {
		t.Fatal(err)
	}
	r := &testRing{m: m}
	t.Cleanup(func() { m.Close() })
	prog := func(flags int64) *ebpf.Program {
		p, err := ebpf.NewProgram(&ebpf.ProgramSpec{Type: ebpf.SocketFilter, License: "GPL", Instructions: asm.Instructions{
			asm.Mov.Reg(asm.R6, asm.R1),
			// bpf_skb_load_bytes(skb, 0, fp-16, 16): the run's data onto the stack
			asm.Mov.Reg(asm.R1, asm.R6),
			asm.Mov.Imm(asm.R2, 0),
			asm.Mov.Reg(asm.R3, asm.RFP),
			asm.Add.Imm(asm.R3, -testRecordSize),
			asm.Mov.Imm(asm.R4, testRecordSize),
			asm.FnSkbLoadBytes.Call(),
			// bpf_ringbuf_output(&ring, fp-16, 16, flags)
			asm.LoadMapPtr(asm.R1, m.FD()),
			asm.Mov.Reg(asm.R2, asm.RFP),
			asm.Add.Imm(asm.R2, -testRecordSize),
			asm.Mov.Imm(asm.R3, testRecordSize),
			asm.Mov.Imm(asm.R4, int32(flags)),
			asm.FnRingbufOutput.Call(),
			asm.Return(),
		}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { p.Close() })
		return p
	}
	r.wake, r.noWake = prog(0), prog(1) // BPF_RB_NO_WAKEUP
	if r.rd, err = NewReader(m); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.rd.Close() })
	return r
}

// newTestMmap is newTestRing read in place (Mmap) instead of by cilium's reader.
func newTestMmap(t *testing.T, size int) *testRing {
	t.Helper()
	r := newTestRing(t, size)
	r.rd.Close()
	m, err := NewMmap(r.m)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	r.rd = m
	return r
}

// write commits n records numbered from r.written on, waking the reader or not.
func (r *testRing) write(t *testing.T, n int, wake bool) {
	t.Helper()
	p := r.noWake
	if wake {
		p = r.wake
	}
	data := make([]byte, ethHeader+testRecordSize)
	for range n {
		binary.LittleEndian.PutUint64(data[ethHeader:], uint64(r.written))
		ret, err := p.Run(&ebpf.RunOptions{Data: data})
		if err != nil {
			t.Fatal(err)
		}
		if ret != 0 {
			t.Fatalf("bpf_ringbuf_output returned %d (the ring is full?)", int32(ret))
		}
		r.written++
	}
}

// collector checks that records come whole and in order, and counts them.
type collector struct {
	t    *testing.T
	next atomic.Uint64
}

func (c *collector) record(b []byte) bool {
	if len(b) != testRecordSize {
		c.t.Errorf("record of %d bytes, want %d", len(b), testRecordSize)
		return true
	}
	if got, want := binary.LittleEndian.Uint64(b), c.next.Load(); got != want {
		c.t.Errorf("record %d read where %d was due", got, want)
	}
	c.next.Add(1)
	return true
}

func (c *collector) drained(b []byte) { c.record(b) }

// Records committed without a wake-up (as the kernel's programs commit most of theirs)
// are read by the poll in which they were committed, once its deadline has passed: the
// poll ends at its deadline, not before, and no record is left for the next.
func TestPollReadsRecordsCommittedWithoutWakeup(t *testing.T) {
	r := newTestRing(t, 1<<16)
	r.write(t, 100, false)
	c := &collector{t: t}
	p := New(r.rd)
	begin := time.Now()
	if err := p.Poll(50*time.Millisecond, c.record); err != nil {
		t.Fatal(err)
	}
	// epoll's timeout is in milliseconds: a wait may end a fraction of one early
	if d := time.Since(begin); d < 45*time.Millisecond || d > 5*time.Second {
		t.Errorf("the poll took %v; want its 50ms deadline", d)
	}
	if n := c.next.Load(); n != 100 {
		t.Fatalf("%d of 100 records read by the poll they were committed before", n)
	}
	if a := r.rd.AvailableBytes(); a != 0 {
		t.Errorf("%d bytes left in the ring", a)
	}
}

// A record committed with a wake-up during a poll is read in that poll, and the ring's
// space per record is what Span says (the reader's accounting of what it consumed).
func TestPollReadsWokenRecordsAndSpan(t *testing.T) {
	r := newTestRing(t, 1<<16)
	r.write(t, 10, true)
	if got, want := r.rd.AvailableBytes(), 10*Span(testRecordSize); got != want {
		t.Fatalf("the ring holds %d bytes for 10 records of %d; Span says %d", got, testRecordSize, want)
	}
	c := &collector{t: t}
	done := make(chan error, 1)
	go func() { done <- New(r.rd).Poll(200*time.Millisecond, c.record) }()
	time.Sleep(20 * time.Millisecond)
	r.write(t, 10, true)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n := c.next.Load(); n != 20 {
		t.Fatalf("%d of 20 records read", n)
	}
}

// Close (from Shutdown) ends a poll at once with ErrClosed, and every later poll too: a
// source closed between two polls starts the next one on a closed ring (cilium's own
// reader panics there, in AvailableBytes).
func TestCloseEndsThePoll(t *testing.T) {
	r := newTestRing(t, 1<<16)
	p := New(r.rd)
	done := make(chan error, 1)
	go func() { done <- p.Poll(time.Minute, func([]byte) bool { return true }) }()
	time.Sleep(20 * time.Millisecond)
	r.rd.Close()
	select {
	case err := <-done:
		if !errors.Is(err, ErrClosed) {
			t.Fatalf("poll ended with %v after Close; want ErrClosed", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the poll still waits 5s after Close (deadline a minute away)")
	}
	if a := r.rd.AvailableBytes(); a != 0 {
		t.Errorf("AvailableBytes after Close = %d", a)
	}
	if err := p.Poll(time.Millisecond, func([]byte) bool { return true }); !errors.Is(err, ErrClosed) {
		t.Errorf("a poll after Close gave %v; want ErrClosed", err)
	}
	if st, err := p.Stop(time.Second, func([]byte) {}); err != nil || st != (Stopped{}) {
		t.Errorf("a stop after Close gave %+v, %v; want nothing read, nil", st, err)
	}
}

// A cancellation ends a poll waiting for a deadline a minute away at once, and Stop
// reads every record committed before it, with either reader. The records are committed
// without a wake-up, so nothing is read before the cancellation: the stop's reading is
// what is tested.
func TestCancelWakesThePollAndStopReadsTheRing(t *testing.T) {
	t.Run("cilium", func(t *testing.T) { testCancelAndStop(t, newTestRing(t, 1<<16)) })
	t.Run("mmap", func(t *testing.T) { testCancelAndStop(t, newTestMmap(t, 1<<16)) })
}

func testCancelAndStop(t *testing.T, r *testRing) {
	c := &collector{t: t}
	p := New(r.rd)
	ctx, cancel := context.WithCancel(context.Background())
	stop := p.WakeOnCancel(ctx)
	defer stop()
	done := make(chan error, 1)
	go func() { done <- p.Poll(time.Minute, c.record) }()
	time.Sleep(20 * time.Millisecond)
	r.write(t, 500, false)
	time.Sleep(20 * time.Millisecond)
	if n := c.next.Load(); n != 0 {
		t.Fatalf("%d records read before the cancellation: a wake-up came, so this run cannot test the drain", n)
	}
	begin := time.Now()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("the woken poll ended with %v; want nil", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the poll still waits 5s after the cancellation (deadline a minute away)")
	}
	st, err := p.Stop(StopTimeout, c.drained)
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(begin); d > time.Second {
		t.Errorf("cancellation to stopped: %v", d)
	}
	// The woken poll reads what is pending before it ends (Flush's rule), the stop the rest.
	if n := c.next.Load(); n != 500 || st.Left != 0 {
		t.Fatalf("%d of the 500 records committed before the cancellation read (stop: %+v)", n, st)
	}
	// Records committed with no poll under way: the stop alone reads them.
	r.write(t, 300, false)
	if st, err = p.Stop(StopTimeout, c.drained); err != nil || st != (Stopped{Read: 300}) || c.next.Load() != 800 {
		t.Fatalf("stop of 300 records committed after the poll: %+v, %v (%d read in all)", st, err, c.next.Load())
	}
}

// floodRing always has a record: a producer that never lets the reader wait. Each record
// takes perRecord to read. It counts what was read.
type floodRing struct {
	rec       [testRecordSize]byte
	avail     int
	perRecord time.Duration
	reads     int
	deadline  time.Time
	errAt     int   // the read that returns err (0: none)
	err       error // returned at errAt, then records again
}

func (f *floodRing) SetDeadline(t time.Time) { f.deadline = t }
func (f *floodRing) AvailableBytes() int     { return f.avail }
func (f *floodRing) Close() error            { return nil }
func (f *floodRing) ReadInto(r *ringbuf.Record) error {
	f.reads++
	if f.errAt != 0 && f.reads == f.errAt {
		return f.err
	}
	if f.perRecord > 0 {
		time.Sleep(f.perRecord)
	}
	r.RawSample = f.rec[:]
	return nil
}

// Under a flood the deadline never fires; the poll ends on time anyway, looking at the
// clock every floodCheck records.
func TestPollEndsOnTimeUnderAFlood(t *testing.T) {
	f := &floodRing{avail: 10 * Span(testRecordSize)}
	begin := time.Now()
	if err := New(f).Poll(10*time.Millisecond, func([]byte) bool { return true }); err != nil {
		t.Fatal(err)
	}
	d := time.Since(begin)
	if d < 10*time.Millisecond || d > time.Second {
		t.Errorf("the flooded poll took %v; want its 10ms deadline", d)
	}
	if f.reads%floodCheck != floodCheck-1 {
		t.Errorf("%d records read: the poll ended between two looks at the clock (every %d)", f.reads, floodCheck)
	}
}

// A reader slower than the poll must still read what the ring held when the poll began
// before the flood bound ends it: 200 records at 1ms each cross twenty 10ms deadlines.
func TestPollReadsWhatTheRingHeldFirst(t *testing.T) {
	const held = 200
	f := &floodRing{avail: held * Span(testRecordSize), perRecord: time.Millisecond}
	n := 0
	if err := New(f).Poll(10*time.Millisecond, func([]byte) bool { n++; return true }); err != nil {
		t.Fatal(err)
	}
	if n < held {
		t.Fatalf("the poll ended after %d records; the ring held %d when it began", n, held)
	}
	if n >= held+floodCheck {
		t.Errorf("the poll read %d records, more than the %d held and one look at the clock", n, held)
	}
}

// The record function may end a poll at once (a source whose batch filled as its
// context was cancelled).
func TestPollStopsWhenAsked(t *testing.T) {
	f := &floodRing{}
	n := 0
	err := New(f).Poll(time.Minute, func([]byte) bool { n++; return n < 5 })
	if !errors.Is(err, ErrStopped) || n != 5 || f.reads != 5 {
		t.Fatalf("got %v after %d records (%d reads); want ErrStopped after 5", err, n, f.reads)
	}
}

// What a ring reports an end with: a deadline or a wake-up end the poll (nil), either
// closed error is ErrClosed, anything else comes as it is.
func TestPollEnds(t *testing.T) {
	other := errors.New("read record header: 3 bytes left")
	for _, tc := range []struct {
		err, want error
	}{
		{os.ErrDeadlineExceeded, nil},
		{ringbuf.ErrFlushed, nil},
		{ringbuf.ErrClosed, ErrClosed},
		{os.ErrClosed, ErrClosed},
		{other, other},
	} {
		f := &floodRing{errAt: 3, err: tc.err}
		n := 0
		got := New(f).Poll(time.Minute, func([]byte) bool { n++; return true })
		if tc.want == nil && got != nil || tc.want != nil && !errors.Is(got, tc.want) || n != 2 {
			t.Errorf("ring error %v: poll gave %v after %d records; want %v after 2", tc.err, got, n, tc.want)
		}
	}
}

// Stop reads what the ring held when it began and no more: a producer that never pauses
// (the old drains read on while records kept coming, or up to a count) cannot hold it.
// It never waits, reads on past a wake-up not yet consumed, ends at the ring's end or its
// close, and gives the ring's other errors.
func TestStopReadsWhatTheRingHeld(t *testing.T) {
	f := &floodRing{avail: 1000 * Span(testRecordSize)}
	n := 0
	done := make(chan struct{})
	var st Stopped
	var err error
	go func() {
		defer close(done)
		st, err = New(f).Stop(time.Minute, func([]byte) { n++ })
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the stop of a flood still reads after 5s: it does not end at what the ring held")
	}
	if err != nil || n != 1000 || st != (Stopped{Read: 1000}) {
		t.Fatalf("stop of a flood holding 1000 records: %+v, %v after %d records; want all 1000 read, nil", st, err, n)
	}
	if !f.deadline.Before(time.Now()) {
		t.Error("stop set a deadline in the future: it may wait")
	}
	other := errors.New("epoll_wait: bad")
	for _, tc := range []struct {
		err, want error
		records   int
	}{
		{ringbuf.ErrFlushed, nil, 9}, // read on: 2 records, the wake-up, 7 more up to what was held
		{os.ErrDeadlineExceeded, nil, 2},
		{ringbuf.ErrClosed, nil, 2},
		{os.ErrClosed, nil, 2},
		{other, other, 2},
	} {
		f := &floodRing{errAt: 3, err: tc.err, avail: 9 * Span(testRecordSize)}
		n := 0
		st, got := New(f).Stop(time.Minute, func([]byte) { n++ })
		if tc.want == nil && got != nil || tc.want != nil && !errors.Is(got, tc.want) || n != tc.records || st.Read != n || st.Left != 0 {
			t.Errorf("ring error %v: stop gave %+v, %v after %d records; want %v after %d", tc.err, st, got, n, tc.want, tc.records)
		}
	}
}

// A consumer slower than the timeout allows: what the ring held at the stop is handed
// over until the timeout, and the rest is read past and counted, not waited for.
func TestStopIsBoundedAndCountsWhatIsLeft(t *testing.T) {
	const held, per, timeout = 300, time.Millisecond, 50 * time.Millisecond
	f := &floodRing{avail: held * Span(testRecordSize)}
	n := 0
	begin := time.Now()
	st, err := New(f).Stop(timeout, func([]byte) { n++; time.Sleep(per) })
	d := time.Since(begin)
	if err != nil {
		t.Fatal(err)
	}
	if st.Read != n || st.Read+st.Left != held || f.reads != held {
		t.Fatalf("%+v, %d handed over, %d read of the %d held: every record held is read or counted, once", st, n, f.reads, held)
	}
	if st.Left == 0 || d > timeout+100*time.Millisecond {
		t.Errorf("the stop took %v for a %v timeout and left %d: it is not bounded (%d records at %v each)", d, timeout, st.Left, held, per)
	}
}

// A ring that cannot be woken (no Flush: the in-place reader, a generated ring) waits out
// its deadline; WakeOnCancel then does nothing.
func TestWakeOnCancelWithoutFlush(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	stop := New(&floodRing{}).WakeOnCancel(ctx)
	cancel()
	if stop() {
		t.Error("stop reported a wake-up it could not have set")
	}
}
