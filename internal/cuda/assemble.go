// The CUDA submission assembler: top-level API calls with the traced calls inside them,
// grouped per stream into submissions closed by the synchronize call that waited for them
// (or left unsynchronized after FlushAfter).

package cuda

import "sort"

// Op is one top-level API call (Depth 0) with the traced calls it made inside itself
// (the runtime's cudaLaunchKernel → the driver's launch through the entry-point table).
type Op struct {
	Call
	Inner []Call
}

// Outcome says how a submission was closed.
type Outcome uint8

const (
	Synced   Outcome = iota // a synchronize call that covers the work returned
	Unsynced                // no sync covered the work within FlushAfter (or the cap was hit, or the source stopped)
)

func (o Outcome) String() string {
	if o == Unsynced {
		return "unsynchronized"
	}
	return "synchronized"
}

// Submission is the CUDA job: the work a process enqueued on a stream (or, for a
// context/device sync, on all its streams) up to the synchronize call that waited for
// it. See doc.go for the span model.
type Submission struct {
	PID  uint32
	Comm string
	// Stream is the stream synchronised (ScopeStream, ScopeEvent), 0 for ScopeContext.
	Stream uint64
	Scope  Scope
	// Ops are the enqueued calls (launches, async copies/sets, event records, allocs,
	// frees, synchronous copies) in start order; at most MaxOps are kept, the rest
	// are counted in Dropped.
	Ops     []Op
	Dropped int
	// Launches counts the launch calls of the submission, kept or dropped.
	Launches int
	// Sync is the synchronize call that closed the submission (nil when Unsynced).
	Sync *Op
	// Start is the first op's entry (or the sync's, when there are no ops); End the
	// sync's return (or the last op's return).
	Start, End int64
	Outcome    Outcome
	// Xids reported by the process's GPU while the submission was open.
	Xids []Xid
	// The application span the work was enqueued under: the in-kernel context of the
	// first op that carried one, else the sync's (CtxTier 0: none). The live wiring
	// may fill TRACEPARENT (tier 3) afterwards. TraceFlags are the span's W3C trace flags
	// (bit 0: sampled), meaningful only when CtxTier != 0.
	CtxTier    uint8
	TraceFlags uint8
	TraceID    [16]byte
	SpanID     [8]byte
	// GPU is what the GPU did for the submission, from the process's CUPTI timeline
	// (gpu.go); nil when the timeline was not on for all of it.
	GPU *GPUWork
}

// AssemblerConfig bounds the assembler.
type AssemblerConfig struct {
	// MaxOps is the most ops kept per submission (default 512).
	MaxOps int
	// FlushAfter closes a stream's open work as Unsynced when no call touched it for
	// this long (source clock ns; default 2 s).
	FlushAfter int64
}

type streamKey struct {
	pid    uint32
	stream uint64
}

type openWork struct {
	ops      []Op
	dropped  int
	launches int
	last     int64
	comm     string
}

type eventRecord struct {
	stream uint64
	at     int64
}

// Assembler turns calls into submissions. It implements Sink; it is not safe for
// concurrent use (one source goroutine drives it).
type Assembler struct {
	cfg   AssemblerConfig
	emit  func(*Submission)
	open  map[streamKey]*openWork
	inner map[uint32][]Call // nested calls waiting for their parent, by thread
	// events maps (pid, event) to the stream and time of its last record.
	events map[streamKey]eventRecord
	xids   []Xid
	// Counts of top-level calls by class, for metrics and validation.
	Counts [classCount]uint64
	// NestedCounts counts nested calls by class.
	NestedCounts [classCount]uint64
}

var _ Sink = (*Assembler)(nil)

// NewAssembler returns an assembler that hands every closed submission to emit.
func NewAssembler(cfg AssemblerConfig, emit func(*Submission)) *Assembler {
	if cfg.MaxOps <= 0 {
		cfg.MaxOps = 512
	}
	if cfg.FlushAfter <= 0 {
		cfg.FlushAfter = 2e9
	}
	return &Assembler{cfg: cfg, emit: emit, open: map[streamKey]*openWork{},
		inner: map[uint32][]Call{}, events: map[streamKey]eventRecord{}}
}

// maxInner bounds the nested calls waiting for a parent on one thread.
const maxInner = 64

// Calls implements Sink.
func (a *Assembler) Calls(batch []Call) {
	for i := range batch {
		c := batch[i]
		if c.Depth > 0 {
			a.NestedCounts[apis[c.API].Class]++
			in := a.inner[c.TID]
			if len(in) == maxInner {
				in = in[1:]
			}
			a.inner[c.TID] = append(in, c)
			continue
		}
		op := Op{Call: c}
		if in := a.inner[c.TID]; len(in) > 0 {
			for _, n := range in {
				if n.PID == c.PID && n.Start >= c.Start && n.End <= c.End {
					op.Inner = append(op.Inner, n)
				}
			}
			delete(a.inner, c.TID)
		}
		a.add(op)
	}
}

func (a *Assembler) add(op Op) {
	info := apis[op.API]
	a.Counts[info.Class]++
	switch info.Class {
	case ClassProcAddress:
		return
	case ClassSync:
		a.sync(op, info)
		return
	case ClassEventRecord:
		a.events[streamKey{op.PID, op.Handle}] = eventRecord{stream: op.Stream, at: op.Start}
	}
	k := streamKey{op.PID, op.Stream}
	w := a.open[k]
	if w == nil {
		w = &openWork{}
		a.open[k] = w
	}
	if info.Class == ClassLaunch {
		w.launches++
	}
	if len(w.ops) < a.cfg.MaxOps {
		w.ops = append(w.ops, op)
	} else {
		w.dropped++
	}
	w.last = op.End
	w.comm = op.Comm
}

func (a *Assembler) sync(op Op, info API) {
	s := &Submission{PID: op.PID, Comm: op.Comm, Scope: info.Scope, Sync: &op, Outcome: Synced}
	take := func(k streamKey, before int64) {
		w := a.open[k]
		if w == nil {
			return
		}
		if before == 0 {
			s.Ops = append(s.Ops, w.ops...)
			s.Dropped += w.dropped
			s.Launches += w.launches
			delete(a.open, k)
			return
		}
		// Event sync: only the work enqueued before the event was recorded.
		keep := w.ops[:0]
		for _, o := range w.ops {
			if o.Start <= before {
				s.Ops = append(s.Ops, o)
				if apis[o.API].Class == ClassLaunch {
					s.Launches++
					w.launches--
				}
			} else {
				keep = append(keep, o)
			}
		}
		w.ops = keep
		if len(keep) == 0 {
			s.Dropped += w.dropped
			delete(a.open, k)
		}
	}
	switch info.Scope {
	case ScopeStream:
		s.Stream = op.Stream
		take(streamKey{op.PID, op.Stream}, 0)
	case ScopeEvent:
		if ev, ok := a.events[streamKey{op.PID, op.Stream}]; ok {
			s.Stream = ev.stream
			take(streamKey{op.PID, ev.stream}, ev.at)
		}
	case ScopeContext:
		for k := range a.open {
			if k.pid == op.PID {
				take(k, 0)
			}
		}
	}
	a.close(s, op.End)
}

func (a *Assembler) close(s *Submission, end int64) {
	sort.SliceStable(s.Ops, func(i, j int) bool { return s.Ops[i].Start < s.Ops[j].Start })
	switch {
	case len(s.Ops) > 0:
		s.Start = s.Ops[0].Start
	case s.Sync != nil:
		s.Start = s.Sync.Start
	}
	s.End = end
	s.setContext()
	for _, x := range a.xids {
		if x.Time >= s.Start && x.Time <= s.End {
			s.Xids = append(s.Xids, x)
		}
	}
	a.emit(s)
}

// setContext takes the first in-kernel application context among the ops, then the sync.
func (s *Submission) setContext() {
	for i := range s.Ops {
		if c := &s.Ops[i].Call; c.CtxTier != 0 {
			s.CtxTier, s.TraceFlags, s.TraceID, s.SpanID = c.CtxTier, c.TraceFlags, c.TraceID, c.SpanID
			return
		}
	}
	if s.Sync != nil && s.Sync.CtxTier != 0 {
		s.CtxTier, s.TraceFlags, s.TraceID, s.SpanID = s.Sync.CtxTier, s.Sync.TraceFlags, s.Sync.TraceID, s.Sync.SpanID
	}
}

// ProcessGone implements Sink: the process's open work can no longer be synchronized,
// so it is closed now as Unsynced rather than after FlushAfter.
func (a *Assembler) ProcessGone(pid uint32, _ bool) {
	for k, w := range a.open {
		if k.pid == pid {
			a.flush(k, w)
		}
	}
	for k := range a.events {
		if k.pid == pid {
			delete(a.events, k)
		}
	}
}

// Xid implements Sink: an Xid is attached to every submission open while it happened
// (the tracepoint does not say which process's channel faulted; see Xid.PID).
func (a *Assembler) Xid(x Xid) {
	a.xids = append(a.xids, x)
	if len(a.xids) > 256 {
		a.xids = a.xids[len(a.xids)-256:]
	}
}

// Watermark implements Sink: work no call touched for FlushAfter is closed Unsynced.
func (a *Assembler) Watermark(t int64) {
	for k, w := range a.open {
		if t-w.last >= a.cfg.FlushAfter || len(w.ops)+w.dropped >= 16*a.cfg.MaxOps {
			a.flush(k, w)
		}
	}
	// Xids older than any open work cannot attach anywhere any more.
	keep := a.xids[:0]
	for _, x := range a.xids {
		if t-x.Time < a.cfg.FlushAfter {
			keep = append(keep, x)
		}
	}
	a.xids = keep
}

// Flush closes all open work as Unsynced (the source stopped).
func (a *Assembler) Flush() {
	for k, w := range a.open {
		a.flush(k, w)
	}
}

func (a *Assembler) flush(k streamKey, w *openWork) {
	delete(a.open, k)
	if len(w.ops) == 0 {
		return
	}
	s := &Submission{PID: k.pid, Comm: w.comm, Stream: k.stream, Scope: ScopeStream, Ops: w.ops,
		Dropped: w.dropped, Launches: w.launches, Outcome: Unsynced}
	a.close(s, w.last)
}
