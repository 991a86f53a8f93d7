// The configuration as the graph receives it (specOf): every live.cuda setting reaches the
// CUDA source's spec, and replay never gets a CUDA source.
package ghostdriverreceiver

import (
	"slices"
	"testing"
	"time"
)

func TestSpecOfCUDA(t *testing.T) {
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	cfg.Live.CUDA.Enabled = true
	cfg.Live.CUDA.Libraries = []string{"/opt/cuda/libcuda.so.1"}
	cfg.Live.CUDA.RescanInterval = 3 * time.Second
	cfg.Live.CUDA.RingBufferSize = 1 << 20
	cfg.Live.CUDA.FollowEntryPoints = false
	cfg.Live.CUDA.Xid = false
	cfg.Live.CUDA.Layers = CUDALayersRuntime
	cfg.Live.CUDA.LaunchesAtEntry = true
	cfg.Live.CUDA.UprobeMulti = true
	cfg.Live.CUDA.SyncWakeups = true
	spec, err := specOf(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c := spec.CUDA
	if c == nil {
		t.Fatal("live.cuda.enabled: no CUDA source in the spec")
	}
	if !slices.Equal(c.Libraries, cfg.Live.CUDA.Libraries) || c.RescanInterval != 3*time.Second ||
		c.RingBufferBytes != 1<<20 || !c.IgnoreEntryPoints || !c.NoXid || c.Layers != "runtime" || !c.LaunchesAtEntry || !c.UprobeMulti || !c.SyncWakeups {
		t.Errorf("CUDA spec %+v does not carry live.cuda %+v", *c, cfg.Live.CUDA)
	}
	if spec.Live == nil || spec.Replay != nil {
		t.Errorf("source live: spec has Live %v, Replay %v", spec.Live != nil, spec.Replay != nil)
	}

	cfg.Source = SourceReplay
	cfg.Replay.Path = "capture.txt"
	if spec, err = specOf(cfg); err != nil {
		t.Fatal(err)
	}
	if spec.CUDA != nil || spec.Live != nil || spec.Replay == nil || !spec.Pipeline.Lossless {
		t.Errorf("source replay: CUDA %v, Live %v, Replay %v, lossless %v; want only a lossless replay",
			spec.CUDA != nil, spec.Live != nil, spec.Replay != nil, spec.Pipeline.Lossless)
	}
}
