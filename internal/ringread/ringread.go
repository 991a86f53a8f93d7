//go:build linux

// Package ringread is the one reader of the live sources' BPF ring buffers (the DRM
// source's events and jobs modes, the CUDA source): it reads a ring in polls and, at a
// cancellation, once more to its end. Every rule of the reading lives here:
//
//   - A poll waits for records until its deadline (the poll interval) and reads the ring
//     to its end once more when the deadline passes: the programs commit most records
//     without waking the reader, and a poll's end says that everything stamped before it
//     began has been read.
//   - A poll reads at least what the ring held when it began (AvailableBytes, counted in
//     the ring's own space per record: Span) before it may end early.
//   - The flood bound: under a sustained stream the deadline never fires (there is always
//     a record), so every floodCheck records the poll looks at the clock and ends once the
//     deadline has passed and what the ring held at the start is read.
//   - A ring closed (Close from Shutdown) ends the reading with ErrClosed, whatever error
//     the ring reports it with.
//   - On cancellation a reader waiting for its deadline is woken at once (WakeOnCancel:
//     Flush, cilium's reader's and Mmap's).
//   - The stop (Stop), the same in every mode and source: what the ring holds when the stop
//     begins is read without waiting and handed over until StopTimeout has passed; what is
//     left of it then is read past and counted (Stopped.Left), and the source counts it
//     lost. Records committed after the stop began are not read (the stop ends what is
//     observed), so a producer that never pauses cannot hold a stop, and neither can a
//     slow consumer.
//
// What a record means, when a poll's watermark is given and what is held back stay with
// each source; loss is counted by the kernel (failed reserves, per CPU), and at a stop by
// Stop.
package ringread

import (
	"context"
	"errors"
	"os"
	"time"

	"github.com/cilium/ebpf/ringbuf"
)

// HeaderSize is BPF_RINGBUF_HDR_SZ: a sample takes its length plus this, rounded up to 8
// bytes (Span).
const HeaderSize = 8

// floodCheck is how many records a poll reads between two looks at the clock under a
// stream that never lets it wait.
const floodCheck = 64

// ErrClosed is returned once the ring is closed.
var ErrClosed = ringbuf.ErrClosed

// ErrStopped is returned by Poll when its record function asked to stop.
var ErrStopped = errors.New("ringread: poll stopped by its caller")

// Span is the ring buffer space a sample of n bytes takes: its header, rounded up to 8.
func Span(n int) int { return (n + HeaderSize + 7) &^ 7 }

// Ring is what a Poller reads: cilium/ebpf's *ringbuf.Reader (Reader), the in-place
// reader (Mmap), or a generated ring of the same semantics in tests and benchmarks.
type Ring interface {
	SetDeadline(time.Time)
	ReadInto(*ringbuf.Record) error
	AvailableBytes() int
	Close() error
}

var _ Ring = (*ringbuf.Reader)(nil)

// Poller reads one Ring from one goroutine (Close and the wake may come from others).
type Poller struct {
	ring Ring
	rec  ringbuf.Record
}

// New returns a Poller over r.
func New(r Ring) *Poller { return &Poller{ring: r} }

// Ring is the ring read.
func (p *Poller) Ring() Ring { return p.ring }

// Poll reads one poll of interval: every record until the deadline, each handed to record
// (the sample is valid until record returns). It returns nil when the poll ends (the
// deadline, the flood bound, a wake-up), ErrStopped as soon as record returns false,
// ErrClosed once the ring is closed, and the ring's other errors as they are.
func (p *Poller) Poll(interval time.Duration, record func(sample []byte) bool) error {
	avail, consumed := p.ring.AvailableBytes(), 0
	end := time.Now().Add(interval)
	p.ring.SetDeadline(end)
	for n := 0; ; n++ {
		// Not before what the ring held at the start is read: a reader slower than the
		// interval (a starved CPU, a loaded guest) would otherwise end its poll with records
		// stamped before it began still unread, and they would come late.
		if n&(floodCheck-1) == floodCheck-1 && consumed >= avail && time.Now().After(end) {
			return nil
		}
		err := p.ring.ReadInto(&p.rec)
		if err == nil {
			consumed += Span(len(p.rec.RawSample))
			if !record(p.rec.RawSample) {
				return ErrStopped
			}
			continue
		}
		return pollEnd(err)
	}
}

// pollEnd maps a ReadInto error to Poll's result.
func pollEnd(err error) error {
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded), errors.Is(err, ringbuf.ErrFlushed):
		return nil
	case errors.Is(err, ringbuf.ErrClosed), errors.Is(err, os.ErrClosed):
		return ErrClosed
	}
	return err
}

// StopTimeout bounds a stop's reading of the ring (Stop): the collector's shutdown waits
// for it, and an 8 MiB ring of the events mode decodes in well under it (≈ 100 000
// records at a few hundred ns each, and the consumer's handling).
const StopTimeout = time.Second

// Stopped is what Stop did with what the ring held at the stop.
type Stopped struct {
	Read int // records handed over
	Left int // records read past, not handed over, once the timeout had passed: lost
}

// Stop reads the ring at a stop: what it holds when Stop begins, without waiting, each
// record handed to record until timeout has passed; the rest of what it held is then read
// past, counted in Left (the source counts them lost). Records committed after Stop began
// are not read. A record still reserved and not committed (a producer in the middle of
// writing it) ends the reading: it and what follows are neither read nor counted. A
// wake-up not yet consumed (ErrFlushed) does not end it. It returns nil at the end of what
// the ring held, at a record not committed, once the ring is closed, and the ring's other
// errors as they are.
func (p *Poller) Stop(timeout time.Duration, record func(sample []byte)) (Stopped, error) {
	var s Stopped
	held := p.ring.AvailableBytes()
	now := time.Now()
	late := now.Add(timeout)
	p.ring.SetDeadline(now)
	for consumed := 0; consumed < held; {
		err := p.ring.ReadInto(&p.rec)
		switch {
		case err == nil:
			consumed += Span(len(p.rec.RawSample))
			if s.Left > 0 || time.Now().After(late) {
				s.Left++
				continue
			}
			record(p.rec.RawSample)
			s.Read++
		case errors.Is(err, ringbuf.ErrFlushed):
		case errors.Is(err, os.ErrDeadlineExceeded), errors.Is(err, ringbuf.ErrClosed), errors.Is(err, os.ErrClosed):
			return s, nil
		default:
			return s, err
		}
	}
	return s, nil
}

// flusher is a Ring whose wait can be ended at once (cilium's Reader.Flush: the records
// pending are returned, then ErrFlushed).
type flusher interface{ Flush() error }

// WakeOnCancel makes the cancellation of ctx end a wait for the poll's deadline at once,
// when the ring can be woken (cilium's reader and Mmap can; a Ring without Flush, a
// generated one, waits out its deadline). The returned
// function stops that.
func (p *Poller) WakeOnCancel(ctx context.Context) (stop func() bool) {
	f, ok := p.ring.(flusher)
	if !ok {
		return func() bool { return false }
	}
	return context.AfterFunc(ctx, func() { _ = f.Flush() })
}
