// /proc/interrupts: which interrupt numbers belong to a device driver, by the names of
// their actions. The DRM source watches the GPU drivers' interrupts; the CUDA source the
// nvidia driver's (the blocking-sync split).

package procfs

import (
	"fmt"
	"strings"
)

// DeviceIRQs parses /proc/interrupts and returns irq number → action name for the
// actions of the named drivers (an action equal to a name, or starting with the name and
// "-", "_" or "@": amdgpu, nvidia, panfrost-gpu, i915@pci:...).
func DeviceIRQs(procInterrupts string, names []string) map[int32]string {
	out := map[int32]string{}
	lines := strings.Split(procInterrupts, "\n")
	if len(lines) == 0 {
		return out
	}
	ncpu := len(strings.Fields(lines[0]))
	for _, line := range lines[1:] {
		numStr, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok {
			continue
		}
		var irq int32
		if _, err := fmt.Sscanf(numStr, "%d", &irq); err != nil {
			continue // NMI, LOC, ... are not device interrupts
		}
		fields := strings.Fields(rest)
		if len(fields) <= ncpu {
			continue
		}
		// After the per-CPU counts: chip, hwirq[-type] ..., then actions ("a, b").
		tail := fields[ncpu:]
		actions := strings.Join(tail, " ")
		for _, a := range strings.Split(actions, ",") {
			af := strings.Fields(a)
			if len(af) == 0 {
				continue
			}
			action := af[len(af)-1]
			if matchIRQName(action, names) {
				out[irq] = action
			}
		}
	}
	return out
}

func matchIRQName(action string, names []string) bool {
	for _, n := range names {
		if action == n || strings.HasPrefix(action, n+"-") || strings.HasPrefix(action, n+"_") || strings.HasPrefix(action, n+"@") {
			return true
		}
	}
	return false
}
