// live.cuda on a host without NVIDIA hardware (the CI host): the receiver comes up with
// whatever can attach and says, in one log line each, what could not and why.
package receiver

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/ghostdriver/ghostdriver/internal/metadata"
)

func TestLiveCUDADegradesWithoutNvidia(t *testing.T) {
	if _, err := os.Stat("/proc/driver/nvidia"); err == nil {
		t.Skip("this host has the NVIDIA driver: the test is about degrading without it")
	}
	core, logs := observer.New(zapcore.InfoLevel)
	set := receivertest.NewNopSettings(metadata.Type)
	set.Logger = zap.New(core)
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	cfg.Live.CUDA.Enabled = true
	cfg.Live.CUDA.Libraries = []string{"/usr/local/nvidia/lib64/libcuda.so.1"}
	cfg.Live.CUDA.RescanInterval = 100 * time.Millisecond
	cfg.FlushInterval = 10 * time.Millisecond

	f := NewFactory()
	r, err := f.CreateTraces(context.Background(), set, cfg, new(consumertest.TracesSink))
	if err != nil {
		t.Fatal(err)
	}
	err = r.Start(context.Background(), componenttest.NewNopHost())
	defer func() {
		if err := r.Shutdown(context.Background()); err != nil {
			t.Error(err)
		}
	}()
	for _, e := range logs.All() {
		if e.Level >= zapcore.WarnLevel || strings.Contains(e.Message, "CUDA capability") {
			t.Logf("%s %s %v", e.Level, e.Message, e.ContextMap())
		}
	}

	if os.Geteuid() != 0 {
		// Neither source can load: Start fails (error_mode propagate) naming both.
		if err == nil || !strings.Contains(err.Error(), "CUDA source") || !strings.Contains(err.Error(), "privileged") {
			t.Fatalf("Start without privileges: %v, want an error naming the CUDA source and privileges", err)
		}
		return
	}
	if err != nil {
		t.Fatalf("Start with live.cuda on a host without NVIDIA: %v (want the receiver up, degraded)", err)
	}
	// The configured driver library is missing: one capability line says so.
	if n := logs.FilterMessage("ghostdriver CUDA capability").FilterField(zap.String("hook", "/usr/local/nvidia/lib64/libcuda.so.1")).Len(); n != 1 {
		t.Errorf("%d capability lines for the missing libcuda.so.1, want 1", n)
	}
	// No DRM GPU on this host either: the CUDA source runs alone, and a warning says why.
	if drm := logs.FilterMessage("ghostdriver DRM source unavailable; running the CUDA source alone"); drm.Len() != 1 {
		t.Logf("DRM source attached on this host; no degradation message expected for it")
	} else if e := drm.All()[0]; !strings.Contains(e.ContextMap()["error"].(string), "hook") {
		t.Errorf("DRM degradation without a reason: %v", e.ContextMap())
	}
	if logs.FilterMessage("ghostdriver CUDA source unavailable; running the DRM source alone").Len() != 0 {
		t.Error("the CUDA source should have attached (it needs no NVIDIA hardware, only uprobes)")
	}
}

// With live.cuda, the NVIDIA majors of /proc/devices join the ioctl filter (once each,
// at most 16 in all).
func TestNvidiaMajorsJoinTheIoctlFilter(t *testing.T) {
	dir := t.TempDir()
	devices := "Character devices:\n  1 mem\n195 nvidia-frontend\n226 drm\n238 nvidia-uvm\n241 nvidia-caps\n\nBlock devices:\n  7 loop\n"
	if err := os.WriteFile(dir+"/devices", []byte(devices), 0o644); err != nil {
		t.Fatal(err)
	}
	got := withNvidiaMajors([]uint32{226, 195}, dir)
	if !slices.Equal(got, []uint32{226, 195, 241, 238}) {
		t.Errorf("majors = %v, want [226 195 241 238] (nvidia-caps, nvidia-uvm in name order)", got)
	}
	if got := withNvidiaMajors([]uint32{226}, dir+"/missing"); !slices.Equal(got, []uint32{226}) {
		t.Errorf("without /proc/devices: %v", got)
	}
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	cfg.Tenant.ProcRoot = dir
	if pc := probeConfig(cfg); !slices.Equal(pc.DRMMajors, []uint32{226}) {
		t.Errorf("live.cuda off: majors %v", pc.DRMMajors)
	}
	cfg.Live.CUDA.Enabled = true
	if pc := probeConfig(cfg); !slices.Equal(pc.DRMMajors, []uint32{226, 241, 195, 238}) {
		t.Errorf("live.cuda on: majors %v", pc.DRMMajors)
	}
}
