//go:build linux

// The reader: drains the ring buffer into the sink on a poll deadline and reads it to
// its end at cancellation. Nothing on this path opens a file, parses ELF or attaches a
// probe: that work goes to the hook worker (worker.go) through a bounded queue.

package cuda

import (
	"context"
	"errors"
	"fmt"
	"github.com/ghostdriver/ghostdriver/internal/kclock"
	"os"
	"time"
	"unsafe"

	"github.com/cilium/ebpf/ringbuf"
)

const recordSize = int(unsafe.Sizeof(cudaBPFCudaRecord{}))

// Run reads the ring buffer until ctx is cancelled or Close is called, while the hook
// worker rescans for libraries every RescanInterval and hooks learned entry points, and
// returns nil then (once the worker has stopped). A cancellation ends the wait for
// the poll deadline at once, and Run reads the ring to its end before it returns: every
// record committed before the cancellation reaches the sink (a process that has exited
// has committed all of its records: the uprobes and the exit tracepoint run in it).
func (s *Source) Run(ctx context.Context, sink Sink) error {
	var (
		rec   ringbuf.Record
		batch = make([]Call, 0, 1024)
	)
	stopWorker := s.startHookWorker()
	defer stopWorker()
	flush := func() {
		if len(batch) > 0 {
			sink.Calls(batch)
			batch = batch[:0]
		}
	}
	// The cancellation wakes a reader waiting for its deadline (ringbuf's Flush: the
	// records pending then are returned, then ErrFlushed).
	stopWake := context.AfterFunc(ctx, func() { _ = s.rd.Flush() })
	defer stopWake()
	for {
		if ctx.Err() != nil {
			return s.drain(&rec, &batch, sink, flush)
		}
		mark := kclock.MonoNow()
		// What the ring holds at the mark (every record stamped before it) is read before
		// the poll may end early, as in the DRM reader (internal/probe/live.go).
		avail, consumed := s.rd.AvailableBytes(), 0
		pollEnd := time.Now().Add(s.cfg.PollInterval)
		s.rd.SetDeadline(pollEnd)
		for n := 0; ; n++ {
			// A sustained stream never hits the deadline: end the poll on time anyway
			// so the watermark (and the closing of unsynchronized work) advances.
			if n&63 == 63 && consumed >= avail && time.Now().After(pollEnd) {
				break
			}
			err := s.rd.ReadInto(&rec)
			if err != nil {
				if errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, ringbuf.ErrFlushed) {
					break
				}
				flush()
				if errors.Is(err, ringbuf.ErrClosed) || errors.Is(err, os.ErrClosed) {
					return nil
				}
				return fmt.Errorf("reading the CUDA ring buffer: %w", err)
			}
			consumed += (len(rec.RawSample) + 8 + 7) &^ 7 // the ring's 8-byte header, 8-byte alignment
			s.decode(rec.RawSample, &batch, sink)
			if len(batch) == cap(batch) {
				flush()
			}
		}
		flush()
		sink.Watermark(mark)
	}
}

// drain reads what the ring holds now, without waiting, and hands it to the sink: at
// most a ring's worth of records, so a producer that never pauses cannot hold Run.
func (s *Source) drain(rec *ringbuf.Record, batch *[]Call, sink Sink, flush func()) error {
	defer flush()
	s.rd.SetDeadline(time.Now())
	for n := s.cfg.RingBufferBytes / recordSize; n >= 0; n-- {
		err := s.rd.ReadInto(rec)
		switch {
		case err == nil:
			s.decode(rec.RawSample, batch, sink)
			if len(*batch) == cap(*batch) {
				flush()
			}
		case errors.Is(err, os.ErrDeadlineExceeded), errors.Is(err, ringbuf.ErrFlushed):
			// ErrFlushed first when the cancellation's wake-up was not consumed yet:
			// read on, up to the deadline's end of the ring.
			if errors.Is(err, os.ErrDeadlineExceeded) {
				return nil
			}
		case errors.Is(err, ringbuf.ErrClosed), errors.Is(err, os.ErrClosed):
			return nil
		default:
			return fmt.Errorf("reading the CUDA ring buffer: %w", err)
		}
	}
	return nil
}
