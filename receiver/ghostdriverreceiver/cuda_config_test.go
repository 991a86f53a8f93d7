// live.cuda: defaults, loading and validation.
package ghostdriverreceiver

import (
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"

	"github.com/ghostdriver/ghostdriver/internal/metadata"
)

func TestCUDAConfig(t *testing.T) {
	def := NewFactory().CreateDefaultConfig().(*Config).Live.CUDA
	if def.Enabled || !def.FollowEntryPoints || !def.Xid || def.RescanInterval != 2*time.Second || len(def.Libraries) != 0 ||
		def.RingBufferSize != 4<<20 || def.Layers != "both" || def.LaunchesAtEntry || def.UprobeMulti || def.SyncWakeups {
		t.Errorf("default live.cuda = %+v, want off, entry points and xid on, 2s rescans, a 4 MiB ring, both layers with return probes, classic uprobes", def)
	}
	cfg, err := loadConfig(t, "config.yaml", component.NewIDWithName(metadata.Type, "cuda").String())
	if err != nil {
		t.Fatal(err)
	}
	c := cfg.Live.CUDA
	if !c.Enabled || c.FollowEntryPoints || c.Xid || c.RescanInterval != 5*time.Second || c.RingBufferSize != 1<<20 ||
		c.Layers != "driver" || !c.LaunchesAtEntry || !c.UprobeMulti || !c.SyncWakeups ||
		!slices.Equal(c.Libraries, []string{"/usr/local/nvidia/lib64/libcuda.so.1", "/opt/*/lib/libcudart.so.*"}) {
		t.Errorf("live.cuda = %+v", c)
	}
	for file, want := range map[string]string{
		"invalid_cuda_relative_library.yaml": `live.cuda.libraries: "lib64/libcuda.so.1" is not an absolute path`,
		"invalid_cuda_rescan.yaml":           "live.cuda.rescan_interval must be 0 (scan only at start) or in 100ms..10m0s, got 10ms",
		"invalid_cuda_ringbuf.yaml":          "live.cuda.ring_buffer_size must be a power of two in 65536..1073741824 bytes, got 3000000",
		"invalid_cuda_layers.yaml":           `live.cuda.layers must be "both", "driver" or "runtime", got "kernel"`,
	} {
		_, err := loadConfig(t, file, component.NewID(metadata.Type).String())
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want it to say %q", file, err, want)
		}
	}
	// A disabled block is not validated: the defaults of other fields stay valid.
	off := NewFactory().CreateDefaultConfig().(*Config)
	off.Live.CUDA.Libraries = []string{"relative"}
	if err := off.Validate(); err != nil {
		t.Errorf("disabled live.cuda validated: %v", err)
	}
	bad := NewFactory().CreateDefaultConfig().(*Config)
	bad.Live.CUDA.Enabled = true
	bad.Live.CUDA.Libraries = []string{"/usr/lib/[libcuda.so"}
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "not a valid glob") {
		t.Errorf("bad glob: %v", err)
	}
}
