//go:build linux

// The hook worker: everything after Open that reads files, parses ELF or attaches
// probes (library rescans of /proc/*/maps, entry points learned from cuGetProcAddress)
// runs on its own goroutine, so that the ring-buffer reader never waits on a file. The
// reader hands it learned entry points through a bounded queue and never blocks: when
// the queue is full the request is dropped and counted (Stats.EntryPointsDropped).

package cuda

import (
	"context"
	"time"

	"go.uber.org/zap"
)

// learnRequest is one successful cuGetProcAddress return of a symbol of the API table.
type learnRequest struct {
	pid    uint32
	symbol string
	addr   uint64
}

// queueLearn hands a learned entry point to the worker without waiting; when the queue
// is full it is dropped and counted: calls through that pointer are then seen only at
// the runtime layer (or not at all for a driver-only application).
func (s *Source) queueLearn(r learnRequest) {
	select {
	case s.learnq <- r:
	default:
		s.mu.Lock()
		s.stats.EntryPointsDropped++
		s.mu.Unlock()
		s.log.Debug("entry point dropped: the hook worker's queue is full", zap.String("symbol", r.symbol),
			zap.Uint32("pid", r.pid), zap.Int("queue", cap(s.learnq)))
	}
}

// hookWorker rescans for libraries every RescanInterval and learns the queued entry
// points until ctx ends; what is still queued then is left (the source is stopping).
func (s *Source) hookWorker(ctx context.Context) {
	var tick <-chan time.Time
	if s.cfg.RescanInterval > 0 {
		t := time.NewTicker(s.cfg.RescanInterval)
		defer t.Stop()
		tick = t.C
	}
	for {
		// Stopping wins over queued work: select picks at random among ready cases.
		if ctx.Err() != nil {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-tick:
			s.rescan()
		case r := <-s.learnq:
			s.learnEntryPoint(r.pid, r.symbol, r.addr)
		}
	}
}

// startHookWorker runs the worker until the returned stop is called; stop waits for it.
func (s *Source) startHookWorker() (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.hookWorker(ctx)
	}()
	return func() {
		cancel()
		<-done
	}
}

// isProcAddressTarget: the symbol is one the worker would hook (api.go's rule).
func isProcAddressTarget(symbol string) bool {
	_, ok := procAddressTarget(symbol)
	return ok
}
