//go:build linux

// ProbeHost on a made-up /dev and /sys: a machine with an NPU only (ivpu) has no /dev/dri
// but an accel node and driver, which the verdict names with the driver's job events.

package probe

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ghostdriver/ghostdriver/internal/capability"
)

func TestProbeHostFindsAccelDevices(t *testing.T) {
	dev, sys := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(dev, "accel", "accel0"), 0o755); err != nil {
		t.Fatal(err)
	}
	drv := filepath.Join(sys, "bus", "pci", "drivers", "intel_vpu")
	card := filepath.Join(sys, "class", "accel", "accel0", "device")
	for _, d := range []string{drv, card} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(drv, filepath.Join(card, "driver")); err != nil {
		t.Fatal(err)
	}
	h := ProbeHost(dev, sys)
	if strings.Join(h.DRMDevices, ",") != "accel/accel0" || strings.Join(h.DRMDrivers, ",") != "intel_vpu" || h.DRMErr != nil {
		t.Fatalf("devices %v drivers %v err %v", h.DRMDevices, h.DRMDrivers, h.DRMErr)
	}
	noJobs := capability.Report{}
	noJobs.Add(StageJobQueue, "tp_btf/drm_sched_job_queue", capability.StatusUnavailable, "tracepoint not present")
	v := Assess(noJobs, h)
	missing := strings.Join(v.Missing, "\n")
	for _, want := range []string{"driver intel_vpu: intel_vpu's events that bound a job are job", "-e vpu"} {
		if !strings.Contains(missing, want) {
			t.Errorf("missing lacks %q: %s", want, missing)
		}
	}
	if strings.Contains(missing, "no DRM device") {
		t.Errorf("an accel node is a device: %s", missing)
	}
}
