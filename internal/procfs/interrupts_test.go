// DeviceIRQs on a /proc/interrupts of x86 and arm64 shapes: the named drivers' lines
// only, per-CPU columns skipped, shared lines split into their actions.

package procfs

import (
	"maps"
	"testing"
)

func TestDeviceIRQs(t *testing.T) {
	const text = `           CPU0       CPU1
  0:         46          0   IO-APIC   2-edge      timer
 46:         12          0   PCI-MSI 1048576-edge      nvidia
 47:          0          3   PCI-MSI 1048577-edge      nvidia
 49:          3          0   GICv3 200 Level     panfrost-job, panfrost-gpu
 51:          3          0   PCI-MSI 32768-edge      nvidiafb
NMI:          0          0   Non-maskable interrupts
`
	got := DeviceIRQs(text, []string{"nvidia", "panfrost"})
	want := map[int32]string{46: "nvidia", 47: "nvidia", 49: "panfrost-gpu"}
	if !maps.Equal(got, want) {
		t.Errorf("got %v, want %v (nvidiafb is another driver; panfrost-job's line is shared)", got, want)
	}
}
