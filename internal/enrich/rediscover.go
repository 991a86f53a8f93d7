// Re-discovery of a process's OTEP 4947 thread context after a miss. A publisher loaded
// after the process's first read (a tracer library dlopen'ed, or a Python tracer imported,
// after the GPU runtime initialised) defines otel_thread_ctx_v1 in a module mapped later:
// without this, its threads' contexts would be read only after the next Refresh (30 s).
//
// Trigger: activity or a job of a process whose last read found no thread context (and
// whose configuration searches for one). Bounds: at most one re-discovery per process per
// Config.Rediscover (default 1 s); the check reads /proc/<pid>/maps and searches the
// modules again only when the set of mapped executable files changed since the last search
// (files already inspected come from the per-file cache); at most maxRediscoveries searches
// of changed modules per process between two full reads; at most rediscoverQueue
// processes queued. Triggers inside these bounds are counted as rate_limited.

package enrich

import (
	"errors"

	"go.uber.org/zap"

	"github.com/ghostdriver/ghostdriver/internal/tenant"
)

// RediscoveryOutcome says how a trigger for a re-discovery ended.
type RediscoveryOutcome uint8

const (
	// RediscoveryFound: the modules changed and one of them defines the symbol; the
	// recipe went into the kernel.
	RediscoveryFound RediscoveryOutcome = iota
	// RediscoveryNotFound: the process was checked (its maps read, its new modules
	// searched when they changed) and still has no thread context.
	RediscoveryNotFound
	// RediscoveryRateLimited: not checked: too soon after the last check, the per-process
	// search budget spent, or the queue full.
	RediscoveryRateLimited
	numRediscoveryOutcomes
)

// String is the outcome as the metric attribute has it.
func (o RediscoveryOutcome) String() string {
	switch o {
	case RediscoveryFound:
		return "found"
	case RediscoveryNotFound:
		return "not_found"
	}
	return "rate_limited"
}

const (
	// rediscoverQueue bounds the processes waiting for a re-discovery.
	rediscoverQueue = 64
	// maxRediscoveries bounds the searches of changed modules per process between two
	// full reads (a process that maps and unmaps files all the time costs no more).
	maxRediscoveries = 16
)

// maybeRediscover queues p for a re-discovery when it is due. Runs under e.mu, from want:
// on the source goroutine for activity, cheap (no I/O).
func (e *Enricher) maybeRediscover(p *proc) {
	if !e.otep || e.cfg.Rediscover < 0 || p.p == nil || p.p.ThreadContextTLS != nil || p.rediscovery ||
		p.same != nil || !e.res.SearchesThreadContext(p.p) {
		return
	}
	if p.rediscovered >= maxRediscoveries || e.now().Sub(p.searchedAt) < e.cfg.Rediscover {
		e.st.Rediscovery[RediscoveryRateLimited]++
		return
	}
	select {
	case e.rediscoverQ <- p:
		p.rediscovery = true
		p.searchedAt = e.now()
	default:
		e.st.Rediscovery[RediscoveryRateLimited]++
	}
}

// rediscover searches p again (worker goroutine) and, when the symbol is found now, pushes
// the recipe into the kernel so that the next ioctls of its threads carry their context.
func (e *Enricher) rediscover(p *proc) {
	e.mu.Lock()
	tp := p.p
	current := e.procs[p.pid] == p && p.goneAt.IsZero()
	e.mu.Unlock()
	if !current || tp == nil {
		e.mu.Lock()
		p.rediscovery = false
		e.mu.Unlock()
		return
	}
	np, err := e.res.SearchThreadContext(tp)
	found := err == nil && np.ThreadContextTLS != nil
	if found && e.kernel != nil {
		e.mu.Lock()
		alive := e.procs[p.pid] == p && p.goneAt.IsZero() // the kernel deletes an exited process's row itself
		e.mu.Unlock()
		if alive {
			e.push(p.pid, np)
		}
	}

	e.mu.Lock()
	defer e.mu.Unlock()
	p.rediscovery = false
	p.searchedAt = e.now()
	if !errors.Is(err, tenant.ErrModulesUnchanged) {
		p.rediscovered++
	}
	if p.p == tp && !errors.Is(err, tenant.ErrNoProcess) {
		p.p = np // a full read that landed meanwhile is newer: keep it
	}
	if found {
		e.st.Rediscovery[RediscoveryFound]++
		e.log.Debug("thread context found on re-discovery", zap.Uint32("pid", p.pid), zap.String("module", np.ThreadContextTLS.Module))
	} else {
		e.st.Rediscovery[RediscoveryNotFound]++
	}
}
