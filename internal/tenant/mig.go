// NVIDIA MIG attribution (best effort).
//
// Approach: a CUDA process using a MIG instance must hold the instance's capabilities: the
// driver checks an open fd of the GPU-instance and compute-instance "access" capability.
// With the default devfs mode those are /dev/nvidia-caps/nvidia-cap<minor>, and
// /proc/driver/nvidia-caps/mig-minors maps each minor to a name
// "gpu<gpu minor>/gi<GI id>/ci<CI id>/access"; in the older procfs mode the fd points at
// /proc/driver/nvidia/capabilities/gpu<m>/mig/gi<g>/ci<c>/access directly. So: the fds of
// the process → capability names → the most specific instance held. The GPU minor (the N
// of /dev/nvidiaN) maps to a PCI address via /proc/driver/nvidia/gpus/<pci>/information
// ("Device Minor:"). Drivers that close the capability fd after context creation, and
// MPS/vGPU setups, leave the instance unknown; no attribute is better than a guess.

package tenant

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// MIGInstance is a GPU instance (CI = -1) or a compute instance in it.
type MIGInstance struct {
	GPUMinor   int
	GI, CI     int
	PCIAddress string // of the parent GPU, when known
}

// String is NVIDIA's capability naming: "gpu0/gi1/ci0" ("gpu0/gi1" without a CI).
func (m MIGInstance) String() string {
	if m.CI < 0 {
		return fmt.Sprintf("gpu%d/gi%d", m.GPUMinor, m.GI)
	}
	return fmt.Sprintf("gpu%d/gi%d/ci%d", m.GPUMinor, m.GI, m.CI)
}

// ParseMigMinors parses /proc/driver/nvidia-caps/mig-minors ("<name> <minor>" lines) into
// minor → instance, keeping only gpu*/gi*[/ci*]/access capabilities.
func ParseMigMinors(b []byte) map[int]MIGInstance {
	out := map[int]MIGInstance{}
	for i, line := range strings.Split(string(b), "\n") {
		if i == 1<<14 {
			break
		}
		f := strings.Fields(line)
		if len(f) != 2 {
			continue
		}
		minor, err := strconv.Atoi(f[1])
		if err != nil {
			continue
		}
		if m, ok := parseMIGCapName(f[0]); ok {
			out[minor] = m
		}
	}
	return out
}

// parseMIGCapName: "gpu0/gi1/access" or "gpu0/gi1/ci0/access" (a "mig/" element, as in the
// procfs capability paths, is allowed after the gpu).
func parseMIGCapName(s string) (MIGInstance, bool) {
	m := MIGInstance{CI: -1}
	rest, ok := strings.CutSuffix(s, "/access")
	if !ok {
		return m, false
	}
	parts := strings.Split(rest, "/")
	if len(parts) > 1 && parts[1] == "mig" {
		parts = append(parts[:1], parts[2:]...)
	}
	if len(parts) < 2 || len(parts) > 3 {
		return m, false
	}
	if m.GPUMinor, ok = numAfter(parts[0], "gpu"); !ok {
		return m, false
	}
	if m.GI, ok = numAfter(parts[1], "gi"); !ok {
		return m, false
	}
	if len(parts) == 3 {
		if m.CI, ok = numAfter(parts[2], "ci"); !ok {
			return m, false
		}
	}
	return m, true
}

func numAfter(s, prefix string) (int, bool) {
	rest, ok := strings.CutPrefix(s, prefix)
	if !ok || rest == "" || len(rest) > 6 {
		return 0, false
	}
	n, err := strconv.Atoi(rest)
	return n, err == nil && n >= 0
}

// migFromCapLinks turns the capability fds of a process into the instances it uses: a
// compute instance wins over its bare GPU instance.
func migFromCapLinks(links []string, minors map[int]MIGInstance) []MIGInstance {
	set := map[MIGInstance]bool{}
	for _, l := range links {
		if rest, ok := strings.CutPrefix(l, "/dev/nvidia-caps/nvidia-cap"); ok {
			if n, err := strconv.Atoi(rest); err == nil {
				if m, ok := minors[n]; ok {
					set[m] = true
				}
			}
		} else if rest, ok := strings.CutPrefix(l, "/proc/driver/nvidia/capabilities/"); ok {
			if m, ok := parseMIGCapName(rest); ok {
				set[m] = true
			}
		}
	}
	var out []MIGInstance
	for m := range set {
		if m.CI < 0 {
			covered := false
			for o := range set {
				covered = covered || (o.CI >= 0 && o.GPUMinor == m.GPUMinor && o.GI == m.GI)
			}
			if covered {
				continue
			}
		}
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// nvidiaGPUMinors maps GPU minor → PCI address from /proc/driver/nvidia/gpus/*/information.
func nvidiaGPUMinors(procRoot string) map[int]string {
	dir := filepath.Join(procRoot, "driver", "nvidia", "gpus")
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	out := map[int]string{}
	for _, e := range ents {
		b, err := readBounded(filepath.Join(dir, e.Name(), "information"), 8<<10)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "Device Minor" {
				if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil {
					out[n] = e.Name()
				}
			}
		}
	}
	return out
}
