//go:build linux

package probe

// Both record modes stop the same way (internal/ringread: Stop): what the ring holds at
// the cancellation is read, up to ringread.StopTimeout, and what is left then is counted
// lost. Before, the events mode returned at the cancellation without reading the ring
// (its records were lost uncounted) and the jobs mode read on while a producer kept
// writing (a stop that need not end). The rings here are generated: one that always has
// another record, holding held records' worth of bytes at the stop.

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cilium/ebpf/ringbuf"
	"go.uber.org/zap"

	"github.com/ghostdriver/ghostdriver/internal/event"
	"github.com/ghostdriver/ghostdriver/internal/kclock"
	"github.com/ghostdriver/ghostdriver/internal/ringread"
)

// endlessRing always has one more fence record: a producer that never pauses. avail is
// what it says it holds (the stop reads that much).
type endlessRing struct {
	rec   []byte
	avail int
	reads atomic.Int64
}

func (r *endlessRing) SetDeadline(time.Time) {}
func (r *endlessRing) ReadInto(rec *ringbuf.Record) error {
	r.reads.Add(1)
	rec.RawSample = r.rec
	return nil
}
func (r *endlessRing) AvailableBytes() int { return r.avail }
func (r *endlessRing) Close() error        { return nil }

func newEndlessRing(held int) *endlessRing {
	f := commonFenceRecord{Ts: uint64(kclock.MonoNow()), PidTgid: 7<<32 | 7, FenceCtx: 9, FenceSeqno: 1,
		Hook: uint16(commonHookHOOK_DMA_FENCE_SIGNALED), Flags: uint8(commonRecordFlagRF_HAS_FENCE)}
	b := sampleBytes(&f)
	return &endlessRing{rec: b, avail: held * ringread.Span(len(b))}
}

// slowCountSink counts events, each batch taking perBatch to consume.
type slowCountSink struct {
	events   atomic.Int64
	perBatch time.Duration
}

func (c *slowCountSink) Consume(b []event.Event) {
	c.events.Add(int64(len(b)))
	time.Sleep(c.perBatch)
}
func (c *slowCountSink) Watermark(int64) {}

func stopLive(t *testing.T, ring *endlessRing, jobs bool) *Live {
	t.Helper()
	cfg, err := DefaultConfig().withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	cfg.IRQRefreshInterval = 0
	l := &Live{cfg: cfg, log: zap.NewNop(), rd: ring}
	l.stats.Unknown = map[string]uint64{}
	if jobs {
		l.jobs = &jobsReader{dec: newJobDecoder(&l.dec)}
	}
	return l
}

// runCancelled runs l with its context already cancelled and waits at most 5 s.
func runCancelled(t *testing.T, l *Live, sink event.Sink) time.Duration {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	done := make(chan error, 1)
	begin := time.Now()
	go func() { done <- l.Run(ctx, sink) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run still reads 5 s after its cancellation: the stop is not bounded")
	}
	return time.Since(begin)
}

func TestStopReadsWhatTheRingHolds(t *testing.T) {
	const held = 5000
	for _, jobs := range []bool{false, true} {
		name := map[bool]string{false: "events", true: "jobs"}[jobs]
		t.Run(name, func(t *testing.T) {
			ring := newEndlessRing(held)
			l := stopLive(t, ring, jobs)
			sink := &slowCountSink{}
			runCancelled(t, l, sink)
			if n := sink.events.Load(); n != held || ring.reads.Load() != held || l.lostAtStop.Load() != 0 {
				t.Errorf("%s mode at the stop: %d events of the %d records the ring held (%d reads, %d counted lost)",
					name, n, held, ring.reads.Load(), l.lostAtStop.Load())
			}
		})
	}
}

// A consumer too slow for the ring's contents: the stop ends about StopTimeout after it
// began, and every record the ring held is either handed over or counted lost.
func TestStopIsBoundedAndCountsTheRest(t *testing.T) {
	const held = 50 * maxBatch
	ring := newEndlessRing(held)
	l := stopLive(t, ring, false)
	sink := &slowCountSink{perBatch: 100 * time.Millisecond} // ≈ 10 batches in the timeout
	d := runCancelled(t, l, sink)
	lost, got := l.lostAtStop.Load(), sink.events.Load()
	if lost == 0 || uint64(got)+lost != held || ring.reads.Load() != held {
		t.Errorf("%d events handed over, %d counted lost, %d read: want every one of the %d held either way, some lost", got, lost, ring.reads.Load(), held)
	}
	if d > ringread.StopTimeout+time.Second {
		t.Errorf("the stop took %v, its timeout is %v", d, ringread.StopTimeout)
	}
}
