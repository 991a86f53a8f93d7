//go:build linux

// The Poller on a channel of this test process: found, beaten and turned on, drained;
// drained once more and closed when its descriptor goes, its counts kept in the total;
// a foreign channel refused once, not reopened every rescan; turned off at shutdown.
package cupti

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"
)

type lockedSink struct {
	mu sync.Mutex
	recSink
}

func (s *lockedSink) Kernel(pid uint32, k *Kernel) {
	s.mu.Lock()
	s.recSink.Kernel(pid, k)
	s.mu.Unlock()
}
func (s *lockedSink) API(pid uint32, a *API)   { s.mu.Lock(); s.recSink.API(pid, a); s.mu.Unlock() }
func (s *lockedSink) Copy(pid uint32, c *Copy) { s.mu.Lock(); s.recSink.Copy(pid, c); s.mu.Unlock() }
func (s *lockedSink) State(pid uint32, st StateChange) {
	s.mu.Lock()
	s.recSink.State(pid, st)
	s.mu.Unlock()
}
func (s *lockedSink) Device(pid uint32, d Device) {
	s.mu.Lock()
	s.recSink.Device(pid, d)
	s.mu.Unlock()
}
func (s *lockedSink) Batch(pid uint32, b Batch) { s.mu.Lock(); s.recSink.Batch(pid, b); s.mu.Unlock() }

func (s *lockedSink) kernelNames() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var n []string
	for _, k := range s.kernels {
		n = append(n, k.Name)
	}
	return n
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(2 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func startPoller(t *testing.T, want func(uint32) bool) (*Poller, *lockedSink, func()) {
	t.Helper()
	s := &lockedSink{}
	p, err := NewPoller(PollerConfig{Interval: 2 * time.Millisecond, RescanInterval: 5 * time.Millisecond, Want: want, Sink: s})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	return p, s, func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}
}

func TestPollerReadsAChannelUntilItsProcessLetsGo(t *testing.T) {
	pid := uint32(os.Getpid())
	m := newTestChannel(t, 0)
	le.PutUint32(m.mem[hdrDroppedRingFull:], 7)
	p, s, stop := startPoller(t, func(p uint32) bool { return p == pid })
	defer stop()

	// Found, turned on, beaten.
	waitFor(t, "control on", func() bool {
		return le.Uint32(m.mem[hdrControl:]) == ControlOn && le.Uint64(m.mem[hdrCollectorBeat:]) != 0
	})
	if seq := le.Uint32(m.mem[hdrControlSeq:]); seq != 1 {
		t.Fatalf("control_seq %d after one write", seq)
	}
	w := newWriter(m.mem)
	w.must(t, FrameBatch, 0, batchBody(Batch{MonoBefore: 10, CuptiAt: 10, MonoAfter: 10}))
	w.must(t, FrameKernel, 0, kernelBody(&Kernel{Start: 11, Name: "first"}, -1))
	w.publish()
	waitFor(t, "the first kernel", func() bool { return len(s.kernelNames()) == 1 })
	st := p.Stats()
	if len(st.Channels) != 1 || st.Channels[0].PID != pid || st.Channels[0].FD != m.fd || !st.Channels[0].ControlOn ||
		st.Channels[0].Counters.DroppedRingFull != 7 || st.Opened != 1 {
		t.Fatalf("stats %+v", st)
	}

	// The process closes its descriptor (as exiting does) right after writing: the
	// poller drains what is there, then closes.
	w.must(t, FrameKernel, 0, kernelBody(&Kernel{Start: 12, Name: "last"}, -1))
	w.publish()
	m.close()
	waitFor(t, "the channel closed", func() bool { return p.Stats().Closed == 1 })
	if n := s.kernelNames(); len(n) != 2 || n[1] != "last" {
		t.Fatalf("kernels %v", n)
	}
	st = p.Stats()
	if len(st.Channels) != 0 || st.Total.Decoder.Kernels != 2 || st.Total.Counters.DroppedRingFull != 7 || st.Total.Ring.Frames != 3 {
		t.Fatalf("after close: %+v", st)
	}
}

// A channel whose header names another pid (a forked child's inherited descriptor) is
// refused once, not opened again at every rescan.
func TestPollerRefusesAForeignChannelOnce(t *testing.T) {
	m := newTestChannel(t, 0)
	le.PutUint32(m.mem[hdrPID:], uint32(os.Getpid())+1)
	p, _, stop := startPoller(t, nil)
	defer stop()
	waitFor(t, "rescans", func() bool { return p.Stats().Rescans > 10 })
	if st := p.Stats(); st.Foreign != 1 || st.Opened != 0 || le.Uint32(m.mem[hdrControl:]) != ControlOff {
		t.Fatalf("stats %+v", st)
	}
}

// At shutdown every library is asked off and what it had written is read.
func TestPollerShutdownTurnsOffAndDrains(t *testing.T) {
	m := newTestChannel(t, 0)
	p, s, stop := startPoller(t, nil)
	waitFor(t, "control on", func() bool { return le.Uint32(m.mem[hdrControl:]) == ControlOn })
	w := newWriter(m.mem)
	w.must(t, FrameBatch, 0, batchBody(Batch{}))
	w.must(t, FrameKernel, 0, kernelBody(&Kernel{Name: "at the end"}, -1))
	w.publish()
	stop()
	if n := s.kernelNames(); len(n) != 1 {
		t.Fatalf("kernels %v", n)
	}
	if le.Uint32(m.mem[hdrControl:]) != ControlOff || le.Uint32(m.mem[hdrControlSeq:]) != 2 {
		t.Fatalf("control %d seq %d", le.Uint32(m.mem[hdrControl:]), le.Uint32(m.mem[hdrControlSeq:]))
	}
	if st := p.Stats(); st.Closed != 1 || len(st.Channels) != 0 {
		t.Fatalf("stats %+v", st)
	}
}
