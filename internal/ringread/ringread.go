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
//   - On cancellation a reader waiting for its deadline can be woken at once (WakeOnCancel:
//     cilium's Flush), and Drain reads what the ring holds then without waiting, at most a
//     given number of records, so a producer that never pauses cannot hold a stop.
//
// What a record means, when a poll's watermark is given and what is held back stay with
// each source; loss is counted by the kernel (failed reserves, per CPU), not here.
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

// Ring is what a Poller reads: cilium/ebpf's *ringbuf.Reader, the DRM events mode's
// in-place reader, or a generated ring of the same semantics in tests and benchmarks.
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

// Drain reads what the ring holds now, without waiting, at most limit records (none: a
// negative limit), each handed to record. It returns nil once the ring is read to its end,
// the limit is reached or the ring is closed, and the ring's other errors as they are. A
// wake-up not yet consumed (ErrFlushed) does not end it.
func (p *Poller) Drain(limit int, record func(sample []byte)) error {
	p.ring.SetDeadline(time.Now())
	for n := 0; limit < 0 || n < limit; n++ {
		err := p.ring.ReadInto(&p.rec)
		switch {
		case err == nil:
			record(p.rec.RawSample)
		case errors.Is(err, ringbuf.ErrFlushed):
		case errors.Is(err, os.ErrDeadlineExceeded), errors.Is(err, ringbuf.ErrClosed), errors.Is(err, os.ErrClosed):
			return nil
		default:
			return err
		}
	}
	return nil
}

// flusher is a Ring whose wait can be ended at once (cilium's Reader.Flush: the records
// pending are returned, then ErrFlushed).
type flusher interface{ Flush() error }

// WakeOnCancel makes the cancellation of ctx end a wait for the poll's deadline at once,
// when the ring can be woken (a Ring without Flush waits out its deadline). The returned
// function stops that.
func (p *Poller) WakeOnCancel(ctx context.Context) (stop func() bool) {
	f, ok := p.ring.(flusher)
	if !ok {
		return func() bool { return false }
	}
	return context.AfterFunc(ctx, func() { _ = f.Flush() })
}
