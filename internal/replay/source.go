// The replay Source: reads the capture, decodes each line with ftrace.Decoder, and hands
// batches to the sink, pacing them when a speed is set.

package replay

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ghostdriver/ghostdriver/internal/event"
	"github.com/ghostdriver/ghostdriver/internal/ftrace"
)

// pacingSlack is how far ahead of its due time an event may be delivered before Run
// sleeps: finer sleeps cost more than they are worth.
const pacingSlack = time.Millisecond

// ctxCheckLines is how often (in lines) Run looks at ctx when no batch is due.
const ctxCheckLines = 4096

// maxEarlyLost bounds the loss notes held until the first event.
const maxEarlyLost = 1024

// Source replays a capture file. It implements event.Source.
type Source struct {
	cfg   Config
	clock *clock

	mu   sync.Mutex // guards dec and runs
	dec  *ftrace.Decoder
	runs int // sorted runs merged by the last Run (0: read in file order)
}

var _ event.Source = (*Source)(nil)

func newSource(cfg Config) *Source {
	s := &Source{cfg: cfg, clock: &clock{}, dec: ftrace.NewDecoder()}
	if cfg.epochSet() {
		s.clock.offset.Store(cfg.Epoch)
	}
	return s
}

// clock is wall = t + offset; the offset is set before the first event is delivered
// when no epoch is configured.
type clock struct{ offset atomic.Int64 }

func (c *clock) WallNanos(t int64) int64 { return t + c.offset.Load() }

// Clock implements event.Source. With an epoch, WallNanos(t) == Epoch + t exactly;
// without one, it is valid once Run has delivered the first event.
func (s *Source) Clock() event.Clock { return s.clock }

// Stats implements event.Source; it may be called while Run runs.
func (s *Source) Stats() event.SourceStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.dec.Stats()
	st.SortedRuns = s.runs
	return st
}

// Run implements event.Source: it delivers every event of the capture and returns nil at
// its end, ctx.Err() when cancelled, or an error for an input that cannot be read to the
// end (a truncated gzip) after delivering everything decodable before it, and for an
// input in which no GPU event was recognised (ErrNoGPUEvents, saying what was expected).
// A regular file whose lines are not in time order (per-CPU files concatenated) is
// delivered merged by time (runs.go). Run starts from the beginning of the file each
// time, with fresh stats. A pipe is read as it is written, in its order; batches are
// handed over whenever the reader would wait. (Opening a FIFO waits for its writer and is
// not interrupted by ctx.)
func (s *Source) Run(ctx context.Context, sink event.Sink) error {
	start := time.Now()
	f, err := os.Open(s.cfg.Path)
	if err != nil {
		return fmt.Errorf("replay: capture %w", err)
	}
	defer f.Close()
	// A pipe (trace_pipe, a FIFO) blocks in Read: closing the file is what unblocks it.
	stop := context.AfterFunc(ctx, func() { f.Close() })
	defer stop()
	live := false
	if fi, err := f.Stat(); err == nil && !fi.Mode().IsRegular() {
		live = true
	}
	s.mu.Lock()
	s.dec = ftrace.NewDecoder()
	s.mu.Unlock()

	if !live {
		// A Perfetto trace in text form: its ftrace events, printed as the kernel prints
		// them (ftrace.TranscodePerfetto), are the capture read below.
		text, err := perfettoAsText(f)
		if err != nil {
			return fmt.Errorf("replay: capture %s: %w", s.cfg.Path, err)
		}
		if text != nil {
			defer text.Close()
			f = text
		}
	}

	lines, gzipped, closeLines, err := s.open(ctx, f, live)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("replay: capture %s: %w", s.cfg.Path, err)
	}
	defer closeLines()

	r := run{s: s, ctx: ctx, sink: sink, start: start, batch: make([]event.Event, 0, s.cfg.BatchSize)}
	for {
		if live && lines.buffered() == 0 {
			// the next read may wait for the writer: hand over what we have
			if err := r.flush(); err != nil {
				return err
			}
		}
		line, tooLong, n, lineNo, err := lines.next()
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if errors.Is(err, io.EOF) {
				if err := r.flush(); err != nil {
					return err
				}
				return s.checkRecognised(r.lines)
			}
			if errors.Is(err, errUnterminated) {
				// the capture was cut inside this line: count it, never decode it
				r.lines++
				s.mu.Lock()
				s.dec.CountTruncated(lineNo, n)
				s.mu.Unlock()
				continue
			}
			if n > 0 {
				s.countMalformed(lineNo, fmt.Sprintf("cut off by a read error after %d bytes", n))
			}
			if ferr := r.flush(); ferr != nil {
				return ferr
			}
			what := "read error"
			if gzipped {
				what = "gzip stream ends early or is corrupt"
			}
			return fmt.Errorf("replay: capture %s: %s after line %d: %w", s.cfg.Path, what, lineNo-1, err)
		}
		if tooLong {
			s.countMalformed(lineNo, fmt.Sprintf("line of %d bytes is longer than %d", n, MaxLineLen))
			continue
		}
		if err := r.line(line, lineNo); err != nil {
			return err
		}
	}
}

// open returns the capture's lines: in file order for a pipe and for a file of one
// sorted run, else merged by time (runs.go). closeLines releases what the merge opened.
func (s *Source) open(ctx context.Context, f *os.File, live bool) (lines lineSource, gzipped bool, closeLines func(), err error) {
	noop := func() {}
	sequential := func() (lineSource, bool, func(), error) {
		if _, err := f.Seek(0, io.SeekStart); err != nil && !live {
			return nil, false, noop, err
		}
		lr, err := newLineReader(f, MaxLineLen)
		if err != nil {
			return nil, false, noop, err
		}
		return &inOrder{lr: lr}, lr.gzipped, noop, nil
	}
	if live {
		return sequential()
	}
	runs, gz, err := scanRuns(f)
	if errors.Is(err, errTooManyRuns) {
		return nil, gz, noop, fmt.Errorf("not in time order: more than %d sorted runs; ghostdriver merges "+
			"concatenated per-CPU files (one run each), but this input is not that: use the tracefs `trace` "+
			"file or `trace-cmd report`, which write one sorted stream", MaxRuns)
	}
	if err != nil || len(runs) <= 1 || ctx.Err() != nil {
		// one run, or a scan that could not read to the end: read in order, and meet any
		// error where it is
		return sequential()
	}
	var src io.ReaderAt = f
	release := noop
	if gz {
		tmp, err := spill(s.cfg.Path)
		if err != nil {
			return nil, gz, noop, err
		}
		src, release = tmp, func() { tmp.Close() }
	}
	s.mu.Lock()
	s.runs = len(runs)
	s.mu.Unlock()
	return newMerged(src, runs), gz, release, nil
}

func (s *Source) countMalformed(lineNo int, reason string) {
	s.mu.Lock()
	s.dec.CountMalformed(lineNo, reason)
	s.mu.Unlock()
}

// run is the state of one Run.
type run struct {
	s       *Source
	ctx     context.Context
	sink    event.Sink
	start   time.Time
	batch   []event.Event
	started bool  // the first event has been seen
	first   int64 // its capture time
	latest  int64 // the latest capture time delivered
	lines   int
	lost    []event.Event // loss notes before the first event (held for its time)
}

// line decodes one line and delivers or paces as needed. The event is decoded in place,
// into the batch's next slot: an Event is a few hundred bytes, not worth a second copy.
func (r *run) line(line []byte, lineNo int) error {
	n := len(r.batch)
	r.batch = r.batch[:n+1] // flush keeps len < cap
	ev := &r.batch[n]
	r.s.mu.Lock()
	ok := r.s.dec.Decode(line, lineNo, ev)
	r.s.mu.Unlock()
	if !ok {
		r.batch = r.batch[:n]
	}
	if r.lines++; r.lines%ctxCheckLines == 0 {
		if err := r.ctx.Err(); err != nil {
			return err
		}
	}
	if !ok {
		return nil
	}
	if ev.Kind == event.EventsLost && !r.started {
		// a loss note before the first event: it goes out at that event's time (past
		// maxEarlyLost such notes, only their counts in the stats remain)
		if len(r.lost) < maxEarlyLost {
			r.lost = append(r.lost, *ev)
		}
		r.batch = r.batch[:n]
		return nil
	}
	t := ev.Time
	if !r.started {
		r.started, r.first = true, t
		if len(r.lost) > 0 {
			cur := *ev
			r.batch = r.batch[:n]
			for _, l := range r.lost {
				l.Time = t
				r.batch = append(r.batch, l)
			}
			r.lost = nil
			r.batch = append(r.batch, cur)
			n = len(r.batch) - 1
			ev = &r.batch[n]
		}
		if !r.s.cfg.epochSet() {
			r.s.clock.offset.Store(r.start.UnixNano() - t)
		}
	}
	if sp := r.s.cfg.Speed; sp > 0 {
		due := r.start.Add(time.Duration(float64(t-r.first) / sp))
		if wait := time.Until(due); wait > pacingSlack {
			// the event is due later: deliver what came before it, wait, then keep it
			cur := *ev
			r.batch = r.batch[:n]
			if err := r.flush(); err != nil {
				return err
			}
			if err := sleep(r.ctx, wait); err != nil {
				return err
			}
			r.batch = append(r.batch, cur)
		}
	}
	if len(r.batch) == cap(r.batch) {
		return r.flush()
	}
	return nil
}

// flush delivers the batch and the watermark, then checks ctx.
func (r *run) flush() error {
	if len(r.batch) > 0 {
		for i := range r.batch {
			if r.batch[i].Time > r.latest {
				r.latest = r.batch[i].Time
			}
		}
		r.sink.Consume(r.batch)
		r.sink.Watermark(r.latest)
		r.batch = r.batch[:0] // the slots are decoded over: no need to clear them
	}
	return r.ctx.Err()
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// perfettoAsText returns, when f holds a Perfetto textproto trace, an unlinked temporary
// file of its ftrace events as tracefs text (nil when f is not one).
func perfettoAsText(f *os.File) (*os.File, error) {
	head := make([]byte, 4096)
	n, err := f.ReadAt(head, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	if !ftrace.LooksLikePerfettoText(head[:n]) {
		return nil, nil
	}
	tmp, err := os.CreateTemp("", "ghostdriver-perfetto-*.txt")
	if err != nil {
		return nil, err
	}
	os.Remove(tmp.Name()) // unlinked: gone when closed
	if _, err := ftrace.TranscodePerfetto(io.NewSectionReader(f, 0, 1<<62), tmp); err != nil {
		tmp.Close()
		return nil, err
	}
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		tmp.Close()
		return nil, err
	}
	return tmp, nil
}
