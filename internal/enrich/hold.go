// Holding a job until its process's first read lands. A process's first jobs are often
// assembled while its first read (procfs, OTEL_CTX, the OTEP 4947 search of every mapped
// module: 139 ms for a process under load, 195 ms for PyTorch) is still running; emitted
// then, they would lack the process's TRACEPARENT and resource (a root span under the
// executable's name). Hold keeps such a job, and every later job of that process behind
// it, until the read lands, at most Config.MaxWait per job, then hands them on in the
// order they came. Jobs of processes with no read in flight are handed on at once.
//
// Bounds: Config.MaxWait per job; Config.MaxHeld jobs over all processes (when full, a
// process's held jobs and the new one go on at once, without waiting); the source's
// goroutine never waits. Every job that found its process's read in flight is counted
// once, by how it went on (HoldOutcome).

package enrich

import (
	"sync"
	"time"

	"github.com/ghostdriver/ghostdriver/internal/assemble"
)

// DefaultMaxWait is Config.MaxWait's default (the receiver's context.max_wait).
const DefaultMaxWait = time.Second

// HoldOutcome says how a job whose process's first read was in flight went on.
type HoldOutcome uint8

const (
	HoldReadLanded HoldOutcome = iota // held until the read landed: emitted with its context
	HoldMaxWait                       // held for Config.MaxWait: emitted without the read
	HoldMaxHeld                       // not held, or let go early: Config.MaxHeld jobs were held
	HoldShutdown                      // let go when the pipeline stopped (ReleaseHeld)
	numHoldOutcomes
)

// String is the outcome as the metric attribute has it.
func (o HoldOutcome) String() string {
	switch o {
	case HoldReadLanded:
		return "read_landed"
	case HoldMaxWait:
		return "max_wait"
	case HoldMaxHeld:
		return "max_held"
	}
	return "shutdown"
}

// heldJob is one job waiting for its process's read.
type heldJob struct {
	j       *assemble.Job
	until   time.Time // real time at which it goes on without the read
	release func(*assemble.Job)
}

// holding is the enricher's state of held jobs (guarded by the enricher's mu).
type holding struct {
	n         int            // jobs held now
	procs     map[*proc]bool // records with held jobs
	draining  int            // goroutines releasing jobs
	drained   *sync.Cond     // signalled when draining drops
	releasing bool           // ReleaseHeld ran: nothing is held any more
}

func (h *holding) init(mu *sync.Mutex) {
	h.procs = map[*proc]bool{}
	h.drained = sync.NewCond(mu)
}

// Hold implements pipeline.JobHolder. It completes j and hands it to now (on the caller's
// goroutine, before returning), or, when j's process's first read is in flight (or jobs
// of that process are held already), keeps it and hands it, completed, to later from
// another goroutine once the read lands or MaxWait has passed. Jobs handed to now that
// were held before j precede it. later must not be called with the caller's locks held:
// it takes them itself.
func (e *Enricher) Hold(j *assemble.Job, now, later func(*assemble.Job)) {
	p := e.pick(j.PID, submitted(j))
	if p == nil || e.cfg.MaxWait < 0 {
		e.finish(j, p)
		now(j)
		return
	}
	e.mu.Lock()
	ready := isReady(p)
	switch {
	case e.hold.releasing || ready && !p.draining && len(p.held) == 0:
		e.mu.Unlock()
		e.finish(j, p)
		now(j)
		return
	case !p.draining && !ready && e.hold.n >= e.cfg.MaxHeld:
		// Full: this process's held jobs (if any) and j go on now, in order.
		early := e.take(p, len(p.held), HoldMaxHeld)
		e.st.Held[HoldMaxHeld]++
		e.mu.Unlock()
		for _, h := range early {
			e.finish(h.j, p)
			now(h.j)
		}
		e.finish(j, p)
		now(j)
		return
	}
	p.held = append(p.held, heldJob{j: j, until: time.Now().Add(e.cfg.MaxWait), release: later})
	e.hold.n++
	e.hold.procs[p] = true
	if len(p.held) == 1 && !p.draining {
		e.arm(p)
	}
	e.mu.Unlock()
}

// ReleaseHeld implements pipeline.JobHolder: at the end of input, every held job goes on
// now (counted as shutdown) and Hold holds nothing any more. It returns once every job
// held is handed on, including those another goroutine was handing on.
func (e *Enricher) ReleaseHeld() {
	e.mu.Lock()
	e.hold.releasing = true
	ps := make([]*proc, 0, len(e.hold.procs))
	for p := range e.hold.procs {
		ps = append(ps, p)
	}
	e.mu.Unlock()
	for _, p := range ps {
		e.drain(p)
	}
	e.mu.Lock()
	for e.hold.draining > 0 {
		e.hold.drained.Wait()
	}
	e.mu.Unlock()
}

// ContextCounts implements the pipeline's hook for the metrics
// ghostdriver.context.held_jobs (by HoldOutcome) and ghostdriver.context.rediscoveries
// (by RediscoveryOutcome); the pipeline hands them to emit.
func (e *Enricher) ContextCounts() (held [numHoldOutcomes]uint64, rediscovery [numRediscoveryOutcomes]uint64) {
	st := e.Stats()
	return st.Held, st.Rediscovery
}

// HeldJobs is the number of jobs held now.
func (e *Enricher) HeldJobs() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.hold.n
}

// finish completes j with what p's reads produced (nothing when p is nil).
func (e *Enricher) finish(j *assemble.Job, p *proc) {
	if p == nil {
		e.apply(j, nil, nil)
		return
	}
	tp, resource := e.snapshot(p)
	e.apply(j, tp, resource)
}

// drain hands on p's held jobs that may go: all of them once its read landed (or at
// shutdown), those past MaxWait otherwise. One goroutine drains a record at a time, so a
// release under way and a later one never overtake each other; jobs held meanwhile are
// taken by the same loop.
func (e *Enricher) drain(p *proc) {
	e.mu.Lock()
	if p.draining || len(p.held) == 0 {
		e.mu.Unlock()
		return
	}
	p.draining = true
	e.hold.draining++
	for {
		var batch []heldJob
		switch {
		case isReady(p):
			batch = e.take(p, len(p.held), HoldReadLanded)
		case e.hold.releasing:
			batch = e.take(p, len(p.held), HoldShutdown)
		default:
			now, n := time.Now(), 0
			for n < len(p.held) && !p.held[n].until.After(now) {
				n++
			}
			batch = e.take(p, n, HoldMaxWait)
		}
		if len(batch) == 0 {
			break
		}
		e.mu.Unlock()
		for _, h := range batch {
			e.finish(h.j, p)
			h.release(h.j)
		}
		e.mu.Lock()
	}
	p.draining = false
	e.hold.draining--
	e.hold.drained.Broadcast()
	e.arm(p)
	e.mu.Unlock()
}

// take removes p's n oldest held jobs, counted under outcome. Runs under e.mu.
func (e *Enricher) take(p *proc, n int, outcome HoldOutcome) []heldJob {
	if n == 0 {
		return nil
	}
	out := append([]heldJob(nil), p.held[:n]...)
	clear(p.held[:n])
	p.held = p.held[n:]
	if len(p.held) == 0 {
		p.held = nil
		delete(e.hold.procs, p)
	}
	e.hold.n -= n
	e.st.Held[outcome] += uint64(n)
	return out
}

// arm sets p's timer for its oldest held job's MaxWait (nothing when none is held, or
// when the read landed: the worker drains then). Runs under e.mu.
func (e *Enricher) arm(p *proc) {
	if len(p.held) == 0 || isReady(p) {
		return
	}
	d := time.Until(p.held[0].until)
	if p.timer == nil {
		p.timer = time.AfterFunc(d, func() { e.drain(p) })
		return
	}
	p.timer.Reset(d)
}

// isReady says whether p's first read finished.
func isReady(p *proc) bool {
	select {
	case <-p.ready:
		return true
	default:
		return false
	}
}
