//go:build linux

// The reader: drains the ring buffer into the sink on a poll deadline and reads what it
// holds at cancellation (internal/ringread's rules and stop, as the DRM source's). Nothing on
// this path opens a file, parses ELF or attaches a probe: that work goes to the hook
// worker (worker.go) through a bounded queue.

package cuda

import (
	"context"
	"errors"
	"fmt"
	"unsafe"

	"go.uber.org/zap"

	"github.com/ghostdriver/ghostdriver/internal/kclock"
	"github.com/ghostdriver/ghostdriver/internal/ringread"
)

const recordSize = int(unsafe.Sizeof(cudaBPFCudaRecord{}))

// Run reads the ring buffer until ctx is cancelled or Close is called, while the hook
// worker rescans for libraries every RescanInterval and hooks learned entry points, and
// returns nil then (once the worker has stopped). A cancellation ends the wait for
// the poll deadline at once, and Run reads what the ring holds then before it returns
// (ringread.Stop: up to StopTimeout, the rest counted lost): every record committed
// before the cancellation reaches the sink (a process that has exited
// has committed all of its records: the uprobes and the exit tracepoint run in it).
func (s *Source) Run(ctx context.Context, sink Sink) error {
	var (
		batch  = make([]Call, 0, 1024)
		poller = ringread.New(s.rd)
	)
	stopWorker := s.startHookWorker()
	defer stopWorker()
	flush := func() {
		if len(batch) > 0 {
			sink.Calls(batch)
			batch = batch[:0]
		}
	}
	decode := func(b []byte) {
		s.decode(b, &batch, sink)
		if len(batch) == cap(batch) {
			flush()
		}
	}
	record := func(b []byte) bool {
		decode(b)
		return true
	}
	defer poller.WakeOnCancel(ctx)()
	for {
		if ctx.Err() != nil {
			// What the ring holds now, up to ringread.StopTimeout (the rest counted lost),
			// so neither a producer that never pauses nor a slow sink can hold Run.
			st, err := poller.Stop(ringread.StopTimeout, decode)
			flush()
			if st.Left > 0 {
				s.lostAtStop.Add(uint64(st.Left))
				s.log.Warn("the CUDA ring still held records when the stop's read ran out of time; they are counted lost",
					zap.Int("read", st.Read), zap.Int("lost", st.Left), zap.Duration("timeout", ringread.StopTimeout))
			}
			if err != nil {
				return fmt.Errorf("reading the CUDA ring buffer: %w", err)
			}
			return nil
		}
		mark := kclock.MonoNow()
		// A sustained stream never hits the deadline: the poll ends on time anyway so the
		// watermark (and the closing of unsynchronized work) advances.
		if err := poller.Poll(s.cfg.PollInterval, record); err != nil {
			flush()
			if errors.Is(err, ringread.ErrClosed) {
				return nil
			}
			return fmt.Errorf("reading the CUDA ring buffer: %w", err)
		}
		flush()
		sink.Watermark(mark)
	}
}
