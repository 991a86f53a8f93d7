// fentry/fexit in the virtual GPU guest against what the guest kernel can do. The receiver
// asks for fentry on drm_ioctl and on two of vgpu's own functions (--bo-func
// vgpu_validate_bos, --run-job-func vgpu_run_job); whether the kernel can attach them is
// read independently of the receiver: from the kernel package's build configuration
// (host.txt ftrace_direct_calls, written by testdata/vgpu/run.sh: BPF trampolines on a
// traced function need CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS, kernel/bpf/trampoline.c
// register_fentry) and from the guest's /sys/kernel/btf/vgpu (modules.txt "vgpu btf=").
package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// hostValue is host.txt's KEY= value (testdata/vgpu/run.sh), ok false when the run did
// not record it.
func hostValue(t *testing.T, dir, key string) (string, bool) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "host.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, key+"="); ok {
			return v, true
		}
	}
	return "", false
}

// guestDirectCalls is host.txt's ftrace_direct_calls: "yes", "no", or "unknown" where the
// kernel package ships no config ("" for runs from before it was recorded).
func guestDirectCalls(t *testing.T, dir string) string {
	t.Helper()
	v, _ := hostValue(t, dir, "ftrace_direct_calls")
	v, _, _ = strings.Cut(v, " ")
	return v
}

// fentryRefusedByKernel reports whether the guest kernel cannot attach fentry/fexit to a
// traced function at all (its config has no ftrace direct calls): then the stages only
// those hooks measure (BO validation, the DRM driver's name read at drm_ioctl) are absent
// or inferred, which the span checks accept in that case only.
func fentryRefusedByKernel(t *testing.T, dir string) bool {
	return guestDirectCalls(t, dir) == "no"
}

// The capability report's line for each hook the rig relies on: attached where the kernel
// can, and where it cannot, unavailable for the reason it really has: the kernel's refusal
// at attach when it has no direct calls, "not found" only for a vgpu function without
// module BTF.
func TestVirtualGPUFunctionHooks(t *testing.T) {
	dir := vgpuDir(t)
	dc := guestDirectCalls(t, dir)
	mods, err := os.ReadFile(filepath.Join(dir, "modules.txt"))
	if err != nil {
		t.Fatal(err)
	}
	vgpuBTF := strings.Contains(string(mods), "vgpu btf=yes")
	// The first program of each rung (a rung's later programs are not tried once the
	// first fails, so they have no line then).
	hooks := []string{"fentry/drm_ioctl", "fentry/vgpu_validate_bos", "fexit/vgpu_run_job"}
	logs := []string{"ghostdriver.log"}
	if _, err := os.Stat(filepath.Join(dir, "ghostdriver-jobs.log")); err == nil {
		logs = append(logs, "ghostdriver-jobs.log")
	}
	for _, name := range logs {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		lines := map[string][]string{} // hook -> status, reason
		for _, line := range strings.Split(string(b), "\n") {
			f := strings.Fields(line)
			if len(f) >= 3 && strings.HasPrefix(f[1], "f") && strings.Contains(f[1], "/") {
				lines[f[1]] = []string{f[2], strings.Join(f[3:], " ")}
			}
		}
		for _, h := range hooks {
			got, ok := lines[h]
			if !ok {
				t.Errorf("%s: no line for %s in the capability report", name, h)
				continue
			}
			status, why := got[0], got[1]
			switch {
			case strings.HasPrefix(h, "fentry/vgpu") || strings.HasPrefix(h, "fexit/vgpu"):
				if !vgpuBTF {
					if status != "unavailable" || !strings.Contains(why, "not found in kernel or module BTF") {
						t.Errorf("%s: %s %s %q; the guest has no vgpu module BTF, want unavailable, not found", name, h, status, why)
					}
					continue
				}
			}
			if dc == "no" {
				if status != "unavailable" || !strings.HasPrefix(why, "attach refused by the kernel (ENOTSUPP)") {
					t.Errorf("%s: %s %s %q; the guest kernel has no ftrace direct calls, want unavailable for the kernel's refusal at attach", name, h, status, why)
				}
				continue
			}
			if status != "attached" {
				t.Errorf("%s: %s %s %q; want attached (ftrace_direct_calls=%s, vgpu btf=%v)", name, h, status, why, dc, vgpuBTF)
			}
		}
		t.Logf("%s: ftrace_direct_calls=%s vgpu btf=%v: %v", name, dc, vgpuBTF, lines["fentry/vgpu_validate_bos"])
	}
}
