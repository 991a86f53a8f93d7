//go:build linux

// The live reader's watermark against a producer stalled between its reserve and its commit
// (live.go: watermarkHold; internal/ringread: Mmap.BlockedAt).
package probe

import (
	"context"
	"os"
	"slices"
	"testing"
	"time"
	"unsafe"

	"github.com/cilium/ebpf/ringbuf"
	"go.uber.org/zap"

	"github.com/ghostdriver/ghostdriver/internal/event"
	"github.com/ghostdriver/ghostdriver/internal/kclock"
	"github.com/ghostdriver/ghostdriver/internal/ringread"
)

// scriptedRing is a recordReader with no records whose BlockedAt follows a script by poll.
type scriptedRing struct {
	polls   int
	last    int // stop after this many polls
	cancel  context.CancelFunc
	blocked func(poll int) (uint64, bool)
}

func (s *scriptedRing) SetDeadline(time.Time) {
	s.polls++
	if s.polls > s.last {
		s.cancel()
	}
}
func (s *scriptedRing) ReadInto(*ringbuf.Record) error { return os.ErrDeadlineExceeded }
func (s *scriptedRing) AvailableBytes() int            { return 0 }
func (s *scriptedRing) Close() error                   { return nil }
func (s *scriptedRing) BlockedAt() (uint64, bool)      { return s.blocked(s.polls) }

// watermarkSink records at which poll each watermark came.
type watermarkSink struct {
	ring  *scriptedRing
	polls []int
}

func (w *watermarkSink) Consume([]event.Event) {}
func (w *watermarkSink) Watermark(int64)       { w.polls = append(w.polls, w.ring.polls) }

func runScripted(t *testing.T, polls int, blocked func(poll int) (uint64, bool)) (*Live, []int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ring := &scriptedRing{last: polls, cancel: cancel, blocked: blocked}
	cfg, err := DefaultConfig().withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	cfg.IRQRefreshInterval = 0
	l := &Live{cfg: cfg, log: zap.NewNop(), rd: ring}
	sink := &watermarkSink{ring: ring}
	if err := l.Run(ctx, sink); err != nil {
		t.Fatal(err)
	}
	return l, sink.polls
}

// A record found uncommitted at the same place at the end of polls 3 to 6 (a producer
// stalled for four poll intervals) holds the watermark at each of them, the first included
// (the reader may have reached the record long after it was reserved); a record in progress
// at one poll's end only (poll 9, then another at poll 10) holds that poll's.
func TestWatermarkWaitsForAStalledRecord(t *testing.T) {
	l, got := runScripted(t, 12, func(poll int) (uint64, bool) {
		switch {
		case poll >= 3 && poll <= 6:
			return 4096, true
		case poll == 9:
			return 8192, true
		case poll == 10:
			return 8200, true
		}
		return 0, false
	})
	want := []int{1, 2, 7, 8, 11, 12, 13} // 13: the poll during which Run was cancelled
	if !slices.Equal(got, want) {
		t.Errorf("watermarks at polls %v, want %v", got, want)
	}
	if h, f := l.watermark.held.Load(), l.watermark.forced.Load(); h != 6 || f != 0 {
		t.Errorf("held %d, forced %d; want 6, 0", h, f)
	}
}

// A record that stays uncommitted holds the watermark for maxWatermarkHold, then it moves
// on anyway (counted), and waits again.
func TestWatermarkHoldIsBounded(t *testing.T) {
	per := int(maxWatermarkHold / DefaultConfig().PollInterval) // polls held before moving on
	l, got := runScripted(t, 2*per+10, func(int) (uint64, bool) { return 64, true })
	want := []int{per + 1, 2*per + 2}
	if !slices.Equal(got, want) {
		t.Errorf("watermarks at polls %v, want %v", got, want)
	}
	if f := l.watermark.forced.Load(); f != 2 {
		t.Errorf("forced %d times, want 2", f)
	}
}

// slowRing hands out fence records stamped before the test began, one per ReadInto, each
// taking perRecord: a reader slower than the poll interval (a starved CPU, a loaded guest).
// It cancels the run once every record has been read.
type slowRing struct {
	recs      [][]byte
	i         int
	perRecord time.Duration
	cancel    context.CancelFunc
}

func (s *slowRing) SetDeadline(time.Time) {}
func (s *slowRing) ReadInto(rec *ringbuf.Record) error {
	if s.i == len(s.recs) {
		s.cancel()
		return os.ErrDeadlineExceeded
	}
	time.Sleep(s.perRecord)
	rec.RawSample = s.recs[s.i]
	s.i++
	return nil
}
func (s *slowRing) AvailableBytes() int {
	n := 0
	for _, r := range s.recs[s.i:] {
		n += ringread.Span(len(r))
	}
	return n
}
func (s *slowRing) Close() error { return nil }

// orderSink counts events consumed after a watermark that had passed their time.
type orderSink struct {
	mark, behind int64
	events       int
}

func (o *orderSink) Consume(batch []event.Event) {
	for _, e := range batch {
		o.events++
		if e.Time < o.mark {
			o.behind++
		}
	}
}
func (o *orderSink) Watermark(t int64) { o.mark = max(o.mark, t) }

// A reader slower than the poll interval must not give a poll's watermark before it has
// read what the ring held at that watermark: 200 records stamped before the run, read at
// 1 ms each, cross many 10 ms polls, and none of them may come after a watermark past its
// stamp. The first version ended such a poll after 64 records and gave its mark anyway.
func TestWatermarkWaitsForWhatTheRingHeld(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stamp := uint64(kclock.MonoNow() - int64(time.Millisecond))
	ring := &slowRing{perRecord: time.Millisecond, cancel: cancel}
	for i := range 200 {
		r := commonFenceRecord{Ts: stamp + uint64(i), PidTgid: 7<<32 | 7, FenceCtx: 9, FenceSeqno: uint64(i + 1),
			Hook: uint16(commonHookHOOK_DMA_FENCE_SIGNALED), Flags: uint8(commonRecordFlagRF_HAS_FENCE)}
		b := make([]byte, fenceRecordSize)
		copy(b, unsafe.Slice((*byte)(unsafe.Pointer(&r)), fenceRecordSize))
		ring.recs = append(ring.recs, b)
	}
	cfg, err := DefaultConfig().withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	cfg.IRQRefreshInterval = 0
	l := &Live{cfg: cfg, log: zap.NewNop(), rd: ring}
	sink := &orderSink{}
	if err := l.Run(ctx, sink); err != nil {
		t.Fatal(err)
	}
	if sink.events != 200 || sink.behind != 0 {
		t.Fatalf("%d events read, %d after a watermark past their stamp; want 200, 0", sink.events, sink.behind)
	}
}
