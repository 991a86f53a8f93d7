// Re-discovery of a process's OTEP 4947 thread context: a publisher loaded after the
// process's first read (a tracer library dlopen'ed or imported after the GPU runtime
// initialised) defines otel_thread_ctx_v1 in a module mapped later.

package tenant

import (
	"errors"
	"path/filepath"
	"strconv"

	"github.com/ghostdriver/ghostdriver/internal/tenant/appctx"
)

// SearchesThreadContext says whether the configuration searches p for its thread-context
// symbol (Config.ResolveThreadContext, and an announcing process context or
// Config.ScanThreadContext).
func (r *Resolver) SearchesThreadContext(p *Process) bool {
	return r.cfg.ResolveThreadContext && (p.ThreadLocal.SchemaVersion != "" || r.cfg.ScanThreadContext)
}

// ErrModulesUnchanged: a re-search found the same mapped modules as the last search.
var ErrModulesUnchanged = appctx.ErrModulesUnchanged

// SearchThreadContext searches p's process again for otel_thread_ctx_v1 when its mapped
// modules changed since p's search (Process.Modules). It returns a new snapshot, a copy
// of p with ThreadContextTLS (or ThreadContextErr) and Modules updated, also stored in the
// cache when p is the cached snapshot; p itself is never modified. Errors: the process is
// gone (ErrNoProcess), ErrModulesUnchanged (the copy then only differs from p if p had no
// fingerprint), or why the symbol could not be used (appctx.ErrNoTLSSymbol when no module
// defines it). Cost when unchanged: one read of /proc/<pid>/maps; when changed: the ELF
// dynamic symbols of the modules not seen before (cached per file).
func (r *Resolver) SearchThreadContext(p *Process) (*Process, error) {
	if !r.SearchesThreadContext(p) {
		return p, errors.New("thread-context search is off for this process")
	}
	acc, set, err := r.tls.FindChanged(p.PID, p.Modules)
	if set == 0 && err != nil && !errors.Is(err, appctx.ErrModulesUnchanged) {
		// No maps: the process exited (or hides them).
		if _, serr := readBounded(r.pidPath(p.PID, "stat"), 4096); serr != nil {
			return p, ErrNoProcess
		}
		return p, err
	}
	n := *p
	n.Modules = set
	switch {
	case err == nil:
		n.ThreadContextTLS, n.ThreadContextErr = &acc, ""
	case errors.Is(err, appctx.ErrModulesUnchanged):
		return &n, err
	case n.ThreadLocal.SchemaVersion != "" || !errors.Is(err, appctx.ErrNoTLSSymbol):
		n.ThreadContextErr = err.Error()
	}
	r.mu.Lock()
	if el, ok := r.procs[p.PID]; ok && el.Value.(*entry).p == p {
		el.Value.(*entry).p = &n
	}
	r.mu.Unlock()
	return &n, err
}

// pidPath is /proc/<pid>/name under Config.ProcRoot.
func (r *Resolver) pidPath(pid uint32, name string) string {
	return filepath.Join(r.cfg.ProcRoot, strconv.FormatUint(uint64(pid), 10), name)
}
