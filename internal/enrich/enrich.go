// Package enrich is the enrich stage of the pipeline (docs/design.md "Data flow"): it attributes
// each assembled job to its tenant and completes its application trace context, for the
// live source only (replayed captures come from another machine: the local /proc says
// nothing about them).
//
//	source ──batch──▶ Observe (first sight of a pid, exec/exit) ──▶ assemble ──job──▶ Enrich ──▶ emit
//
// Hot path. Observe runs on the source goroutine for every batch: per event it does one
// map lookup under a mutex, and hands work off: the first submit ioctl of a process queues
// it for a background worker, which reads procfs through tenant.Resolver and pushes the
// process's OTEP 4947 TLS recipe into the kernel (Kernel) so that the next
// ioctls of its threads carry their thread context. Hold (the pipeline's call, hold.go)
// runs for each finished job and only reads what the worker produced. A job is normally
// finished long after its first ioctl, so the process is resolved by then; when its read
// is still in flight (or a job whose ioctl was not seen queues it), Hold keeps the job
// until the read lands, at most Config.MaxWait, without ever stalling the source. Enrich
// (and Lookup, for the CUDA path) waits instead, at most Config.Wait — once per process,
// not per job — then goes on without tenant attributes.
//
// A process whose read found no OTEP 4947 thread context is looked at again when it
// submits and its mapped modules changed (rediscover.go): a publisher loaded late.
//
// Cost of a first sight (worker, off the hot path): tenant reads /proc/<pid>/{stat,comm,
// exe,cgroup,environ,maps}, the fdinfo of its DRM fds, at most 64 KiB of OTEL_CTX memory,
// and, for OTEP 4947, the symbol tables of each mapped executable file that has a TLS
// segment, streamed (cached per file across processes). Measured on this host: see internal/enrich's benchmark.
//
// Staleness. A process is re-read after tenant.Config.Refresh (stale-while-revalidate:
// jobs keep the previous snapshot meanwhile). The kernel reports exec and exit of every
// process it holds a recipe row for (bpf/syscalls.c deletes the row itself first, so a
// recipe never outlives its address space); exec reloads the process, exit keeps the
// snapshot for Config.Linger so that jobs still in flight are attributed, then drops it.
//
// Pid reuse. An exited process's snapshot serves only what it did before its exit: a
// job submitted at or before the exit report's time. Anything the pid does after it (a
// submit ioctl, a job submitted later, a CUDA call, an exec) opens a new record, read
// afresh with its own kernel row (so its thread context and its own exec and exit
// reports), while the old one lingers beside it for its jobs in flight. Where the times
// cannot tell (the CUDA path reports calls and exits without them), the new record's
// first read does: no process, or the old one's start time (/proc/<pid>/stat, read
// anyway), means a straggler of the old process, and the new record folds back into it.
//
// Context tiers. The kernel reads the OTEP 4947 and OBI tiers in their configured
// relative order; TRACEPARENT is applied here. Config.Tiers decides between them: the
// first tier in the list that has a context for the job wins.
//
// The CUDA path uses a second Enricher of its own (cuda_linux.go): Sight at a process's
// calls instead of Observe at its ioctls, the CUDA source's kernel table for the
// recipes, and Lookup + ChooseContext per submission instead of Enrich per job.
package enrich

import (
	"errors"
	"slices"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/ghostdriver/ghostdriver/internal/assemble"
	"github.com/ghostdriver/ghostdriver/internal/attr"
	"github.com/ghostdriver/ghostdriver/internal/ctxtier"
	"github.com/ghostdriver/ghostdriver/internal/event"
	"github.com/ghostdriver/ghostdriver/internal/tenant"
	"github.com/ghostdriver/ghostdriver/internal/tenant/appctx"
)

// DefaultTiers is docs/design.md's order: finest first (names of internal/ctxtier, as in
// the receiver configuration's context.tiers).
var DefaultTiers = []string{ctxtier.NameOTEP4947, ctxtier.NameOBI, ctxtier.NameTraceparent}

// ValidateTiers checks a tier list: known names, each at most once.
func ValidateTiers(tiers []string) error {
	seen := map[string]bool{}
	for _, t := range tiers {
		if _, ok := ctxtier.Parse(t); !ok {
			return errors.New("unknown context tier " + `"` + t + `"` + " (want otep4947, obi or traceparent)")
		}
		if seen[t] {
			return errors.New("context tier " + `"` + t + `"` + " listed twice")
		}
		seen[t] = true
	}
	return nil
}

// KernelTiers is the part of tiers the kernel reads (probe.Config.ContextTiers), in order.
func KernelTiers(tiers []string) []string {
	out := []string{}
	for _, t := range tiers {
		if n, _ := ctxtier.Parse(t); ctxtier.InKernel(n) {
			out = append(out, t)
		}
	}
	return out
}

// Config configures an Enricher.
type Config struct {
	// Tiers in lookup order (DefaultTiers when nil; empty: no application context at all).
	Tiers []string
	// Wait bounds how long the source's goroutine waits, in total per process, for a
	// process whose first read is still running (default 20ms): the first job (or CUDA
	// submission) of a process may wait that long; once the budget is spent, the
	// process's jobs go on without attribution until the read lands (counted in
	// WaitedOut). A read can take long (a process mapping hundreds of large libraries),
	// and a per-job wait would then stall the source and overrun its ring buffer.
	Wait time.Duration
	// Linger keeps an exited process's snapshot for jobs still in flight (default 30s).
	Linger time.Duration
	// QueueSize bounds the processes waiting for their first read (default 1024); beyond
	// it first sights are dropped (counted) and retried at the next ioctl.
	QueueSize int
	// MaxProcesses bounds the snapshots kept (default 16384).
	MaxProcesses int

	// MaxWait bounds how long Hold keeps a job whose process's first read is in flight
	// (default 1s; negative: jobs are never held). See hold.go.
	MaxWait time.Duration
	// MaxHeld bounds the jobs held at once, over all processes (default 4096).
	MaxHeld int
	// Rediscover is the least time between two re-discoveries of one process's OTEP 4947
	// thread context after a miss (default 1s; negative: off). See rediscover.go.
	Rediscover time.Duration
}

func (c Config) withDefaults() Config {
	if c.Tiers == nil {
		c.Tiers = DefaultTiers
	}
	if c.Wait <= 0 {
		c.Wait = 20 * time.Millisecond
	}
	if c.Linger <= 0 {
		c.Linger = 30 * time.Second
	}
	if c.QueueSize <= 0 {
		c.QueueSize = 1024
	}
	if c.MaxProcesses <= 0 {
		c.MaxProcesses = 16384
	}
	if c.MaxWait == 0 {
		c.MaxWait = DefaultMaxWait
	}
	if c.MaxHeld <= 0 {
		c.MaxHeld = 4096
	}
	if c.Rediscover == 0 {
		c.Rediscover = time.Second
	}
	return c
}

// Stats counts what the enricher did.
type Stats struct {
	Loads     uint64 // process reads by the worker
	Gone      uint64 // processes that exited before they could be read
	Dropped   uint64 // first sights not queued (queue full)
	WaitedOut uint64 // lookups answered without attribution because their process was still loading
	// SlowestLoad is the longest process read (the OTEP 4947 search of every mapped
	// module included): until it lands, the process's jobs carry no thread context.
	SlowestLoad time.Duration
	Recipes     uint64 // OTEP 4947 recipes pushed into the kernel
	KernelErrs  uint64 // failed pushes into the kernel table
	PidReuses   uint64 // pids acting again after their process exited, read as a new process

	// Re-discovery of the OTEP 4947 thread context of processes whose read found none
	// (rediscover.go), by outcome.
	Rediscovery [numRediscoveryOutcomes]uint64
	// Jobs whose process's first read was in flight when they were assembled (hold.go),
	// by how they went out.
	Held [numHoldOutcomes]uint64
}

// Kernel is the live source's table of resolved processes (probe.Live implements it):
// the OTEP 4947 recipe per process, nil for "known, no thread context".
type Kernel interface {
	SetProcess(pid uint32, tls *appctx.TLSAccess) error
}

// Enricher implements pipeline.Enricher.
type Enricher struct {
	cfg    Config
	res    *tenant.Resolver
	read   func(pid uint32) (*tenant.Process, error) // res.Process (tests slow it down)
	kernel Kernel                                    // nil: no in-kernel tiers (tests, or a source without them)
	log    *zap.Logger
	now    func() time.Time
	otep   bool // the OTEP 4947 tier is on: push recipes

	queue chan *proc
	stop  chan struct{}
	wg    sync.WaitGroup

	rediscoverQ chan *proc // processes due for a thread-context re-discovery

	mu    sync.Mutex
	procs map[uint32]*proc // the process that holds each pid now
	st    Stats
	hold  holding // jobs held for their process's first read (hold.go)
}

// proc is one process as the enricher knows it: one holder of a pid.
type proc struct {
	pid      uint32
	ready    chan struct{} // closed when the first read finished
	p        *tenant.Process
	resource []attr.Attribute
	loadedAt time.Time
	waitEnd  time.Time // end of the wait budget for the first read, set at the first wait
	queued   bool      // a (re)load is queued or running
	goneAt   time.Time // exit seen (wall clock, for Linger); zero while alive
	// exitT is the source time of the exit report: jobs submitted at or before it are
	// this process's. 0 when unknown (a report without a time, or a process that was
	// gone at its first read).
	exitT int64

	// prev is the process that held the pid before this one: exited, lingering for its
	// jobs in flight. nil when none (or past Linger).
	prev *proc
	// certain: opened for activity stamped after prev's exit, so a new process even if
	// its first read finds none. Otherwise the first read decides (see foldBack).
	certain bool
	// same is prev when the first read showed this record was prev after all: lookups
	// that took this record answer with it.
	same *proc
	// checkedAt: a new record's first read last found this (exited) process's start time
	// still at the pid (a zombie, or threads that outlived the main thread). Activity
	// within recheck of it is this process's, and costs no new read.
	checkedAt time.Time

	// Thread-context re-discovery (rediscover.go): the last search's time, whether one is
	// queued or running, and how many searched changed modules.
	searchedAt   time.Time
	rediscovery  bool
	rediscovered int

	// Jobs held for this record's first read (hold.go), oldest first.
	held     []heldJob
	draining bool        // a goroutine is releasing held jobs (one at a time, in order)
	timer    *time.Timer // releases held jobs past MaxWait
}

// recheck bounds how often activity after a process's exit re-reads a pid that last
// read as the exited process itself.
const recheck = time.Second

// New starts an enricher with one background worker; Close stops it. kernel may be nil.
func New(cfg Config, res *tenant.Resolver, kernel Kernel, log *zap.Logger) *Enricher {
	cfg = cfg.withDefaults()
	if log == nil {
		log = zap.NewNop()
	}
	e := &Enricher{
		cfg: cfg, res: res, read: res.Process, kernel: kernel, log: log, now: time.Now,
		queue:       make(chan *proc, cfg.QueueSize),
		rediscoverQ: make(chan *proc, rediscoverQueue),
		stop:        make(chan struct{}),
		procs:       map[uint32]*proc{},
	}
	e.hold.init(&e.mu)
	for _, t := range cfg.Tiers {
		e.otep = e.otep || t == ctxtier.NameOTEP4947
	}
	e.wg.Add(1)
	go e.worker()
	return e
}

// Close stops the worker. Jobs enriched afterwards only get what is already known.
func (e *Enricher) Close() {
	select {
	case <-e.stop:
	default:
		close(e.stop)
	}
	e.wg.Wait()
}

// Stats returns a snapshot of the counters.
func (e *Enricher) Stats() Stats {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.st
}

// Observe implements pipeline.Enricher: first sights and process lifecycle, on the
// source goroutine.
//
// A process's submits come in runs: after one want of a pid, the rest of the batch's
// submits of that pid ask nothing new (its record is known, queued or just replaced)
// until an exec or exit report, so they are skipped — want takes the lock and reads
// the clock, a fifth of the reader's CPU per event under an ioctl flood.
func (e *Enricher) Observe(batch []event.Event) {
	var seen [8]uint32 // pids wanted in this batch since the last lifecycle report
	n := 0
	for i := range batch {
		ev := &batch[i]
		switch ev.Kind {
		case event.IoctlEnter:
			if ev.PID == 0 || slices.Contains(seen[:n], ev.PID) {
				continue
			}
			e.want(ev.PID, ev.Time, true)
			if n < len(seen) {
				seen[n] = ev.PID
				n++
			}
		case event.ProcessExec:
			e.gone(ev.PID, true, ev.Time)
			n = 0
		case event.ProcessExit:
			e.gone(ev.PID, false, ev.Time)
			n = 0
		}
	}
}

// Sight queues pid for its first read (or a refresh when stale) and never blocks: a
// source other than the DRM one (CUDA) calls it when a process makes a traced call.
func (e *Enricher) Sight(pid uint32) {
	if pid != 0 {
		e.want(pid, 0, true)
	}
}

// Gone is the kernel's report that pid exec'd (reloaded at its next sight; the old
// snapshot serves meanwhile) or exited (kept for Config.Linger, then dropped). It has
// no time: after it, any activity of pid is checked for a new process by start time.
func (e *Enricher) Gone(pid uint32, exec bool) { e.gone(pid, exec, 0) }

// gone is Gone at source time t (0: unknown).
func (e *Enricher) gone(pid uint32, exec bool, t int64) {
	e.res.Forget(pid)
	e.mu.Lock()
	if p, ok := e.procs[pid]; ok {
		switch {
		case exec:
			p.loadedAt = time.Time{}
		case p.goneAt.IsZero():
			p.goneAt, p.exitT = e.now(), t
		}
	}
	e.mu.Unlock()
	if exec {
		e.want(pid, t, true)
	}
}

// want makes sure the process that holds pid is known or queued, and refreshed when
// stale, and returns its record. t is the source time of what asks (0: unknown);
// activity says the process itself acted (an ioctl, a CUDA call, an exec) rather than
// a job being looked up. After the exit of the pid's holder, activity, or a job known
// to be submitted after the exit, opens a new record. It never blocks.
func (e *Enricher) want(pid uint32, t int64, activity bool) *proc {
	e.mu.Lock()
	defer e.mu.Unlock()
	p, ok := e.procs[pid]
	if ok {
		switch {
		case p.goneAt.IsZero():
			if !p.queued && e.now().Sub(p.loadedAt) >= e.res.Refresh() {
				p.queued = e.enqueue(p)
			} else if !p.queued {
				e.maybeRediscover(p)
			}
		case e.afterExit(p, t, activity):
			if n := e.successor(p, t); n != nil {
				return n
			}
		}
		return p
	}
	if len(e.procs) >= e.cfg.MaxProcesses {
		e.sweep()
	}
	p = &proc{pid: pid, ready: make(chan struct{})}
	if p.queued = e.enqueue(p); !p.queued {
		return nil
	}
	e.procs[pid] = p
	return p
}

// afterExit says whether what happens at source time t on the pid of exited process p
// is another process's: certainly when both times are known; for activity also when
// they are not (the first read then decides), unless a read just found p still there.
// Runs under e.mu.
func (e *Enricher) afterExit(p *proc, t int64, activity bool) bool {
	known := t != 0 && p.exitT != 0
	switch {
	case known && t <= p.exitT:
		return false
	case !known && !activity:
		return false
	}
	return p.checkedAt.IsZero() || e.now().Sub(p.checkedAt) >= recheck
}

// successor opens and queues the record of a new process on exited p's pid; p lingers
// as its prev. nil when the queue is full (p serves until the next try). Runs under e.mu.
func (e *Enricher) successor(p *proc, t int64) *proc {
	n := &proc{pid: p.pid, ready: make(chan struct{}), prev: p, certain: t != 0 && p.exitT != 0}
	if n.queued = e.enqueue(n); !n.queued {
		return nil
	}
	p.prev = nil // one lingering predecessor is enough: pid reuse within Linger is rare
	e.procs[p.pid] = n
	return n
}

// enqueue runs under e.mu.
func (e *Enricher) enqueue(p *proc) bool {
	select {
	case e.queue <- p:
		return true
	default:
		e.st.Dropped++
		return false
	}
}

// expire drops exited processes past Linger (under e.mu).
func (e *Enricher) expire() {
	now := e.now()
	for pid, p := range e.procs {
		if p.prev != nil && now.Sub(p.prev.goneAt) >= e.cfg.Linger {
			p.prev = nil
		}
		if !p.goneAt.IsZero() && now.Sub(p.goneAt) >= e.cfg.Linger {
			delete(e.procs, pid)
		}
	}
}

// sweep drops exited processes past Linger, and when still full the least recently read
// half. Runs under e.mu, only when the table is full.
func (e *Enricher) sweep() {
	e.expire()
	if len(e.procs) < e.cfg.MaxProcesses {
		return
	}
	cut := e.now().Add(-e.res.Refresh())
	for pid, p := range e.procs {
		if !p.queued && p.loadedAt.Before(cut) {
			delete(e.procs, pid)
		}
	}
}

func (e *Enricher) worker() {
	defer e.wg.Done()
	lingerTick := time.NewTicker(e.cfg.Linger)
	defer lingerTick.Stop()
	for {
		select {
		case <-e.stop:
			return
		case <-lingerTick.C:
			e.mu.Lock()
			e.expire()
			e.mu.Unlock()
		case p := <-e.queue:
			e.load(p)
			e.drain(p)
		case p := <-e.rediscoverQ:
			e.rediscover(p)
		}
	}
}

// load reads p's pid and publishes the result in p.
func (e *Enricher) load(p *proc) {
	e.mu.Lock()
	pid := p.pid
	if e.procs[pid] != p {
		// Superseded (or dropped) while queued: the pid is no longer this process's,
		// so a read now would describe another one.
		p.queued = false
		markReady(p)
		e.mu.Unlock()
		return
	}
	first := p.prev != nil && p.loadedAt.IsZero() // a successor's first read
	var was *tenant.Process
	if first {
		was = p.prev.p
	}
	e.mu.Unlock()

	t0 := time.Now()
	if first {
		e.res.Forget(pid) // a read that raced the exit may have cached the old process
	}
	tp, err := e.read(pid)
	took := time.Since(t0)

	e.mu.Lock()
	e.st.Loads++
	e.st.SlowestLoad = max(e.st.SlowestLoad, took)
	p.queued = false
	if first {
		stillPrev := err == nil && was != nil && tp.StartTime == was.StartTime
		if stillPrev || errors.Is(err, tenant.ErrNoProcess) && !p.certain {
			e.foldBack(p, stillPrev)
			e.mu.Unlock()
			return
		}
		if err == nil {
			e.st.PidReuses++
		}
	}
	e.mu.Unlock()

	if err == nil && e.kernel != nil {
		e.push(pid, tp)
	}

	e.mu.Lock()
	defer e.mu.Unlock()
	switch {
	case err == nil:
		p.p, p.resource, p.loadedAt = tp, tp.ResourceAttributes(), e.now()
		p.searchedAt, p.rediscovered = p.loadedAt, 0
	case errors.Is(err, tenant.ErrNoProcess):
		e.st.Gone++
		if p.goneAt.IsZero() {
			p.goneAt = e.now()
		}
		p.loadedAt = e.now()
	default:
		e.log.Debug("reading a submitting process", zap.Uint32("pid", pid), zap.Error(err))
		p.loadedAt = e.now()
	}
	markReady(p)
}

// foldBack undoes successor n whose first read found no process (activity of unknown
// time: most likely a straggler of prev's) or prev's own start time (prev's zombie, or
// its threads outliving the main thread, whose exit the kernel reported): the pid is
// still prev's. No kernel row is pushed: the kernel deleted prev's at its exit report,
// and one written now would never be. Runs under e.mu.
func (e *Enricher) foldBack(n *proc, stillThere bool) {
	prev := n.prev
	n.same, n.prev, n.loadedAt = prev, nil, e.now()
	if e.procs[n.pid] == n {
		e.procs[n.pid] = prev
	}
	if stillThere {
		prev.checkedAt = e.now()
	}
	markReady(n)
}

func markReady(p *proc) {
	select {
	case <-p.ready:
	default:
		close(p.ready)
	}
}

// push writes the process's row of the kernel's table: its OTEP 4947 recipe, or "known,
// no thread context" so that its exec and exit are still reported.
func (e *Enricher) push(pid uint32, tp *tenant.Process) {
	var recipe *appctx.TLSAccess
	if e.otep {
		recipe = tp.ThreadContextTLS
	}
	err := e.kernel.SetProcess(pid, recipe)
	e.mu.Lock()
	if err != nil {
		e.st.KernelErrs++
	} else if recipe != nil {
		e.st.Recipes++
	}
	e.mu.Unlock()
	if err != nil {
		e.log.Debug("pushing a process into the kernel table", zap.Uint32("pid", pid), zap.Error(err))
		return
	}
	// From here on the kernel reads the process's thread context at its submits: the virtual
	// GPU rig waits for this line (`live --verbose`) before the process submits its first job.
	e.log.Debug("process pushed into the kernel table", zap.Uint32("pid", pid), zap.Bool("thread_context", recipe != nil))
}

// Enrich implements pipeline.Enricher: tenant attributes and the tier decision for one
// finished job. It may wait (Config.Wait) for a process's first read; Hold does not.
func (e *Enricher) Enrich(j *assemble.Job) {
	tp, resource := e.lookup(j.PID, submitted(j))
	e.apply(j, tp, resource)
}

// apply completes j with what is known of its process (tp nil: nothing).
func (e *Enricher) apply(j *assemble.Job, tp *tenant.Process, resource []attr.Attribute) {
	j.Resource = resource
	j.Attrs = e.jobAttrs(j, tp)
	j.TraceID, j.SpanID, j.TraceFlags, j.CtxTier = e.ChooseContext(j.CtxTier, j.TraceID, j.SpanID, j.TraceFlags, tp)
}

// submitted is the source time of the job's submission (0 when unknown).
func submitted(j *assemble.Job) int64 {
	if b := j.Points[assemble.PointIoctlEnter]; b.Known() {
		return b.Time
	}
	if b := j.Points[assemble.PointQueued]; b.Known() {
		return b.Time
	}
	return j.Start
}

// Lookup returns what is known of the process that holds pid now (nil, nil when
// nothing): its tenant snapshot and resource attributes. A process whose first read is
// still running is waited for at most what is left of its Config.Wait budget; one never
// seen is queued and waited for the same.
func (e *Enricher) Lookup(pid uint32) (*tenant.Process, []attr.Attribute) {
	return e.lookup(pid, 0)
}

// lookup is Lookup for work submitted at source time t (0: unknown): the process that
// held pid then, the exited one while it lingers when t is at or before its exit.
func (e *Enricher) lookup(pid uint32, t int64) (*tenant.Process, []attr.Attribute) {
	p := e.pick(pid, t)
	if p == nil {
		return nil, nil
	}
	select {
	case <-p.ready:
	default:
		e.mu.Lock()
		now := time.Now() // the budget is real time, like the timer below (e.now may be a test's clock)
		if p.waitEnd.IsZero() {
			p.waitEnd = now.Add(e.cfg.Wait)
		}
		left := p.waitEnd.Sub(now)
		e.mu.Unlock()
		ready := false
		if left > 0 {
			t := time.NewTimer(left)
			select {
			case <-p.ready:
				ready = true
			case <-t.C:
			}
			t.Stop()
		}
		if !ready {
			select {
			case <-p.ready:
				ready = true
			default:
			}
		}
		if !ready {
			e.mu.Lock()
			e.st.WaitedOut++
			e.mu.Unlock()
		}
	}
	return e.snapshot(p)
}

// pick is the record of the process that held pid at source time t (0: unknown): the
// exited one while it lingers when t is at or before its exit, else the current one
// (queued for its first read when new). nil for pid 0 or when the queue is full.
func (e *Enricher) pick(pid uint32, t int64) *proc {
	if pid == 0 {
		return nil
	}
	if t != 0 {
		e.mu.Lock()
		if cur := e.procs[pid]; cur != nil && cur.prev != nil && cur.prev.exitT != 0 && t <= cur.prev.exitT {
			e.mu.Unlock()
			return cur.prev
		}
		e.mu.Unlock()
	}
	return e.want(pid, t, false)
}

// snapshot is what p's reads produced so far (the record it folded back into, if any).
func (e *Enricher) snapshot(p *proc) (*tenant.Process, []attr.Attribute) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if p.same != nil {
		p = p.same
	}
	return p.p, p.resource
}

// jobAttrs are the per-job tenant attributes: DRM client and device.
func (e *Enricher) jobAttrs(j *assemble.Job, tp *tenant.Process) []attr.Attribute {
	var out []attr.Attribute
	if tp != nil {
		c, ok := tp.DRMClient(j.ClientID)
		if !ok && j.ClientID == 0 {
			// Kernels before 6.17 do not say which client submitted: fdinfo does when
			// the process has exactly one DRM client.
			n := 0
			for _, dc := range tp.DRMClients {
				if dc.HasID {
					c, n = dc, n+1
				}
			}
			ok = n == 1
			if ok {
				j.ClientID = c.ClientID
			}
		}
		if ok && c.ClientName != "" {
			out = append(out, attr.String(tenant.KeyDRMClientName, c.ClientName))
		}
		// Scheduler events name no driver; fdinfo's drm-driver does (the submitting
		// client's, or the one driver all the process's DRM files agree on).
		if j.Driver == "" {
			if ok && c.Driver != "" {
				j.Driver = c.Driver
			} else {
				j.Driver = commonDriver(tp.DRMClients)
			}
		}
	}
	if j.Device != "" {
		if d, ok := e.res.Device(j.Device); ok {
			for _, a := range d.Attributes() {
				if a.Key != tenant.KeyDevice { // the job span has it already
					out = append(out, a)
				}
			}
		}
	}
	return out
}

// ChooseContext applies Config.Tiers to a job's or submission's context: the first tier
// that has one wins. The kernel tiers arrive already chosen (in their relative order)
// as kernelTier with its ids and W3C trace flags; TRACEPARENT comes from tp's environment,
// with its flags. It returns the chosen context's trace id, span id, trace flags and tier
// (ctxtier.None: none, all zero).
func (e *Enricher) ChooseContext(kernelTier uint8, trace [16]byte, span [8]byte, flags uint8,
	tp *tenant.Process) ([16]byte, [8]byte, uint8, uint8) {
	for _, t := range e.cfg.Tiers {
		n, _ := ctxtier.Parse(t)
		switch {
		case n == kernelTier && kernelTier != ctxtier.None:
			return trace, span, flags, kernelTier
		case n == ctxtier.Traceparent && tp != nil && tp.TraceParent != nil:
			return tp.TraceParent.TraceID, tp.TraceParent.SpanID, tp.TraceParent.Flags, ctxtier.Traceparent
		}
	}
	// No configured tier had a context (a kernel tier that is switched off never fills one).
	return [16]byte{}, [8]byte{}, 0, ctxtier.None
}

// commonDriver returns the drm-driver shared by every DRM file of a process, or "".
func commonDriver(cs []tenant.DRMClient) string {
	d := ""
	for _, c := range cs {
		switch {
		case c.Driver == "":
		case d == "":
			d = c.Driver
		case d != c.Driver:
			return ""
		}
	}
	return d
}
