// Package enrich is the enrich stage of the pipeline (DESIGN.md "Data flow"): it attributes
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
// ioctls of its threads carry their thread context. Enrich runs for each finished job and
// only reads what the worker produced. A job is normally finished long after its first
// ioctl, so the process is resolved by then; when it is not (a job whose ioctl was not
// seen), Enrich queues it and waits at most Config.Wait — once per process, not per job —
// then emits the job without tenant attributes rather than stall the source.
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
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/ghostdriver/ghostdriver/internal/assemble"
	"github.com/ghostdriver/ghostdriver/internal/emit"
	"github.com/ghostdriver/ghostdriver/internal/event"
	"github.com/ghostdriver/ghostdriver/internal/tenant"
	"github.com/ghostdriver/ghostdriver/internal/tenant/appctx"
)

// Tier names, as in the receiver configuration (context.tiers) and in the span attribute
// ghostdriver.context.tier.
const (
	TierOTEP4947    = "otep4947"
	TierOBI         = "obi"
	TierTraceparent = "traceparent"
)

// DefaultTiers is DESIGN.md's order: finest first.
var DefaultTiers = []string{TierOTEP4947, TierOBI, TierTraceparent}

// tierNumber maps a tier name to Job.CtxTier.
var tierNumber = map[string]uint8{
	TierOTEP4947:    emit.CtxTierOTEP4947,
	TierOBI:         emit.CtxTierOBI,
	TierTraceparent: emit.CtxTierTraceparent,
}

// ValidateTiers checks a tier list: known names, each at most once.
func ValidateTiers(tiers []string) error {
	seen := map[string]bool{}
	for _, t := range tiers {
		if _, ok := tierNumber[t]; !ok {
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
		if t == TierOTEP4947 || t == TierOBI {
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
	kernel Kernel // nil: no in-kernel tiers (tests, or a source without them)
	log    *zap.Logger
	now    func() time.Time
	otep   bool // the OTEP 4947 tier is on: push recipes

	queue chan uint32
	stop  chan struct{}
	wg    sync.WaitGroup

	mu    sync.Mutex
	procs map[uint32]*proc
	st    Stats
}

// proc is one process as the enricher knows it.
type proc struct {
	ready    chan struct{} // closed when the first read finished
	p        *tenant.Process
	resource []appctx.Attribute
	loadedAt time.Time
	waitEnd  time.Time // end of the wait budget for the first read, set at the first wait
	queued   bool      // a (re)load is queued or running
	goneAt   time.Time // exit seen; zero while alive
}

// New starts an enricher with one background worker; Close stops it. kernel may be nil.
func New(cfg Config, res *tenant.Resolver, kernel Kernel, log *zap.Logger) *Enricher {
	cfg = cfg.withDefaults()
	if log == nil {
		log = zap.NewNop()
	}
	e := &Enricher{
		cfg: cfg, res: res, kernel: kernel, log: log, now: time.Now,
		queue: make(chan uint32, cfg.QueueSize),
		stop:  make(chan struct{}),
		procs: map[uint32]*proc{},
	}
	for _, t := range cfg.Tiers {
		e.otep = e.otep || t == TierOTEP4947
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
func (e *Enricher) Observe(batch []event.Event) {
	for i := range batch {
		ev := &batch[i]
		switch ev.Kind {
		case event.IoctlEnter:
			if ev.PID != 0 {
				e.want(ev.PID)
			}
		case event.ProcessExec:
			e.Gone(ev.PID, true)
		case event.ProcessExit:
			e.Gone(ev.PID, false)
		}
	}
}

// Sight queues pid for its first read (or a refresh when stale) and never blocks: a
// source other than the DRM one (CUDA) calls it when a process makes a traced call.
func (e *Enricher) Sight(pid uint32) {
	if pid != 0 {
		e.want(pid)
	}
}

// Gone is the kernel's report that pid exec'd (reloaded at its next sight; the old
// snapshot serves meanwhile) or exited (kept for Config.Linger, then dropped).
func (e *Enricher) Gone(pid uint32, exec bool) {
	e.res.Forget(pid)
	e.mu.Lock()
	if p, ok := e.procs[pid]; ok {
		switch {
		case exec:
			p.loadedAt = time.Time{}
		case p.goneAt.IsZero():
			p.goneAt = e.now()
		}
	}
	e.mu.Unlock()
	if exec {
		e.want(pid)
	}
}

// want makes sure pid is known or queued, and refreshed when stale. It never blocks.
func (e *Enricher) want(pid uint32) *proc {
	e.mu.Lock()
	defer e.mu.Unlock()
	p, ok := e.procs[pid]
	if ok {
		if !p.queued && p.goneAt.IsZero() && e.now().Sub(p.loadedAt) >= e.res.Refresh() {
			p.queued = e.enqueue(pid)
		}
		return p
	}
	if len(e.procs) >= e.cfg.MaxProcesses {
		e.sweep()
	}
	p = &proc{ready: make(chan struct{})}
	if p.queued = e.enqueue(pid); !p.queued {
		return nil
	}
	e.procs[pid] = p
	return p
}

// enqueue runs under e.mu.
func (e *Enricher) enqueue(pid uint32) bool {
	select {
	case e.queue <- pid:
		return true
	default:
		e.st.Dropped++
		return false
	}
}

// sweep drops exited processes past Linger, and when still full the least recently read
// half. Runs under e.mu, only when the table is full.
func (e *Enricher) sweep() {
	now := e.now()
	for pid, p := range e.procs {
		if !p.goneAt.IsZero() && now.Sub(p.goneAt) >= e.cfg.Linger {
			delete(e.procs, pid)
		}
	}
	if len(e.procs) < e.cfg.MaxProcesses {
		return
	}
	cut := now.Add(-e.res.Refresh())
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
			now := e.now()
			for pid, p := range e.procs {
				if !p.goneAt.IsZero() && now.Sub(p.goneAt) >= e.cfg.Linger {
					delete(e.procs, pid)
				}
			}
			e.mu.Unlock()
		case pid := <-e.queue:
			e.load(pid)
		}
	}
}

// load reads pid and publishes the result.
func (e *Enricher) load(pid uint32) {
	t0 := time.Now()
	tp, err := e.res.Process(pid)
	if err == nil && e.kernel != nil {
		e.push(pid, tp)
	}
	took := time.Since(t0)
	e.mu.Lock()
	defer e.mu.Unlock()
	e.st.Loads++
	e.st.SlowestLoad = max(e.st.SlowestLoad, took)
	p, ok := e.procs[pid]
	if !ok {
		return
	}
	p.queued = false
	switch {
	case err == nil:
		p.p, p.resource, p.loadedAt = tp, tp.ResourceAttributes(), e.now()
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
	}
}

// Enrich implements pipeline.Enricher: tenant attributes and the tier decision for one
// finished job.
func (e *Enricher) Enrich(j *assemble.Job) {
	tp, resource := e.Lookup(j.PID)
	j.Resource = resource
	j.Attrs = e.jobAttrs(j, tp)
	j.TraceID, j.SpanID, j.CtxTier = e.ChooseContext(j.CtxTier, j.TraceID, j.SpanID, tp)
}

// Lookup returns what is known of pid (nil, nil when nothing): its tenant snapshot and
// resource attributes. A process whose first read is still running is waited for at
// most what is left of its Config.Wait budget; one never seen is queued and waited for
// the same.
func (e *Enricher) Lookup(pid uint32) (*tenant.Process, []appctx.Attribute) {
	if pid == 0 {
		return nil, nil
	}
	p := e.want(pid)
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
	e.mu.Lock()
	defer e.mu.Unlock()
	return p.p, p.resource
}

// jobAttrs are the per-job tenant attributes: DRM client and device.
func (e *Enricher) jobAttrs(j *assemble.Job, tp *tenant.Process) []appctx.Attribute {
	var out []appctx.Attribute
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
			out = append(out, appctx.String(tenant.KeyDRMClientName, c.ClientName))
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
// as kernelTier with its ids; TRACEPARENT comes from tp's environment.
func (e *Enricher) ChooseContext(kernelTier uint8, trace [16]byte, span [8]byte, tp *tenant.Process) ([16]byte, [8]byte, uint8) {
	for _, t := range e.cfg.Tiers {
		n := tierNumber[t]
		switch {
		case n == kernelTier && kernelTier != emit.CtxTierNone:
			return trace, span, kernelTier
		case t == TierTraceparent && tp != nil && tp.TraceParent != nil:
			return tp.TraceParent.TraceID, tp.TraceParent.SpanID, emit.CtxTierTraceparent
		}
	}
	// No configured tier had a context (a kernel tier that is switched off never fills one).
	return [16]byte{}, [8]byte{}, emit.CtxTierNone
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
