//go:build linux

// The timeline source the pipeline runs (pipeline.GPUTimeline): a Poller steered by a
// Policy, its decoded frames handed to a cuda.GPUSink (the fuser) in the CUDA path's
// types. A batch of no records is the library's flush mark (channel.h).

package cupti

import (
	"context"
	"time"

	"github.com/ghostdriver/ghostdriver/internal/cuda"
)

// SourceConfig configures a Source.
type SourceConfig struct {
	ProcRoot string
	Policy   Policy
	// Interval and RescanInterval: the Poller's (0: its defaults).
	Interval, RescanInterval time.Duration
}

// Source is the GPU timeline of every process that loaded the injection library.
type Source struct {
	cfg    SourceConfig
	poller *Poller
}

// NewSource checks cfg; nothing runs until Run.
func NewSource(cfg SourceConfig) (*Source, error) {
	if err := cfg.Policy.Validate(); err != nil {
		return nil, err
	}
	return &Source{cfg: cfg}, nil
}

// Stats is the poller's latest snapshot (zero before Run).
func (s *Source) Stats() PollerStats {
	if s.poller == nil {
		return PollerStats{}
	}
	return s.poller.Stats()
}

// Run polls until ctx is done; every channel is drained once more and asked off before
// it returns.
func (s *Source) Run(ctx context.Context, sink cuda.GPUSink) error {
	p, err := NewPoller(PollerConfig{
		ProcRoot:       s.cfg.ProcRoot,
		Interval:       s.cfg.Interval,
		RescanInterval: s.cfg.RescanInterval,
		Want:           func(uint32) bool { return s.cfg.Policy.On(time.Now()) },
		Sink:           toCUDA{sink},
	})
	if err != nil {
		return err
	}
	s.poller = p
	return p.Run(ctx)
}

// toCUDA converts the channel's frames to the CUDA path's types.
type toCUDA struct{ sink cuda.GPUSink }

func (t toCUDA) Kernel(pid uint32, k *Kernel) {
	t.sink.Kernel(cuda.GPUKernel{PID: pid, Start: k.Start, End: k.End, Correlation: k.Correlation,
		Device: k.Device, Context: k.Context, Stream: k.Stream, Grid: k.Grid, Block: k.Block,
		GraphID: k.GraphID, Name: k.Name})
}

func (t toCUDA) API(pid uint32, a *API) {
	t.sink.API(cuda.GPUAPI{PID: pid, Start: a.Start, End: a.End, Correlation: a.Correlation, CBID: a.CBID,
		Driver: a.Domain == APIDriver, TID: a.TID})
}

// Copy: the library does not enable copy records yet (GPU execution is the kernels').
func (t toCUDA) Copy(uint32, *Copy) {}

func (t toCUDA) State(pid uint32, s StateChange) {
	t.sink.State(cuda.GPUState{PID: pid, Mono: s.Mono, On: s.State == StateOn})
}

func (t toCUDA) Batch(pid uint32, b Batch) {
	if b.Records == 0 {
		t.sink.Mark(pid, int64(b.MonoBefore))
	}
}

func (t toCUDA) Device(pid uint32, d Device) {
	t.sink.Device(cuda.GPUDevice{PID: pid, Device: d.Device, SMs: d.SMs})
}

// Gone is called by the poller after a process's last drain.
func (t toCUDA) Gone(pid uint32) { t.sink.Gone(pid) }
