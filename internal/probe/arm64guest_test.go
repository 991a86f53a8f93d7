// The arm64 rig's verdict (scripts/test-arm64.sh): the arm64 `ghostdriver doctor --json` that
// ran in a Debian arm64 kernel under qemu-system-aarch64 loaded and attached the arm64
// objects. The script sets GHOSTDRIVER_ARM64_OUT; without it there is no guest output to
// read, and the test says so.
package probe

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ghostdriver/ghostdriver/internal/capability"
	"github.com/ghostdriver/ghostdriver/internal/testreq"
)

type guestDoctor struct {
	Verdict struct {
		CanTraceJobs      bool     `json:"can_trace_jobs"`
		StagesAttached    []string `json:"stages_attached"`
		JobStagesAttached []string `json:"job_stages_attached"`
		Missing           []string `json:"missing"`
	} `json:"verdict"`
	Hooks []capability.Entry `json:"hooks"`
}

// Reasons that mean the program itself is wrong for the kernel (not a missing hook or a
// kernel policy): the verifier refused it, or a CO-RE relocation against the arm64 BTF
// failed. Any of these in the guest fails the rig.
var programFaults = []string{"verifier", "CO-RE", "relocat", "invalid argument", "bad "}

func readGuestDoctor(t *testing.T, dir, name string) guestDoctor {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	var d guestDoctor
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("%s: %v\n%s", name, err, b)
	}
	if len(d.Hooks) == 0 {
		t.Fatalf("%s: no hooks reported", name)
	}
	return d
}

func attachedHooks(d guestDoctor) map[string]bool {
	m := map[string]bool{}
	for _, e := range d.Hooks {
		if e.Status == capability.StatusAttached {
			m[e.Hook] = true
		}
	}
	return m
}

func checkNoProgramFaults(t *testing.T, name string, d guestDoctor) {
	t.Helper()
	for _, e := range d.Hooks {
		t.Logf("%s: %-18s %-45s %-11s %s", name, e.Stage, e.Hook, e.Status, e.Reason)
		if e.Status != capability.StatusAttached && e.Status != capability.StatusUnavailable {
			t.Errorf("%s: %s: status %q", name, e.Hook, e.Status)
		}
		for _, f := range programFaults {
			if strings.Contains(e.Reason, f) {
				t.Errorf("%s: %s (%s) was refused as a program, not for a missing hook: %s", name, e.Hook, e.Stage, e.Reason)
			}
		}
	}
}

func TestArm64Guest(t *testing.T) {
	dir := os.Getenv("GHOSTDRIVER_ARM64_OUT")
	if dir == "" {
		testreq.Skip(t, testreq.ARM64, "GHOSTDRIVER_ARM64_OUT not set: scripts/test-arm64.sh runs the arm64 guest and sets it")
	}
	console, err := os.ReadFile(filepath.Join(dir, "console.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(console), "ARM64-RIG uname aarch64 ") {
		t.Fatal("the guest did not report an aarch64 kernel")
	}
	for _, m := range []string{"drm", "gpu-sched", "vgem"} {
		if !strings.Contains(string(console), "ARM64-RIG module "+m+" loaded") {
			t.Errorf("module %s did not load in the guest", m)
		}
	}

	// The default ladders: BTF-typed programs (tp_btf with module BTF, fentry, raw_tp).
	d := readGuestDoctor(t, dir, "doctor.json")
	checkNoProgramFaults(t, "doctor", d)
	got := attachedHooks(d)
	for _, want := range [][]string{
		// the submit ioctl: fentry drm_ioctl, or the syscall tracepoints (tracefs is mounted)
		{"fentry/drm_ioctl", "tracepoint/syscalls/sys_enter_ioctl"},
		{"tp_btf/sched_process_exec", "raw_tp/sched_process_exec"},
		{"tp_btf/dma_fence_init", "raw_tp/dma_fence_init"},
		{"tp_btf/drm_run_job", "raw_tp/drm_run_job"},
		{"tp_btf/drm_sched_job", "raw_tp/drm_sched_job"},
		{"tp_btf/drm_sched_process_job", "raw_tp/drm_sched_process_job"},
	} {
		ok := false
		for _, h := range want {
			ok = ok || got[h]
		}
		if !ok {
			t.Errorf("none of %v attached in the guest", want)
		}
	}

	// The classic-tracepoint rungs (no BTF): each program copies the raw entry.
	c := readGuestDoctor(t, dir, "classic.json")
	checkNoProgramFaults(t, "classic", c)
	gotc := attachedHooks(c)
	for _, h := range []string{"tracepoint/syscalls/sys_enter_ioctl", "tracepoint/gpu_scheduler/drm_run_job"} {
		if !gotc[h] {
			t.Errorf("classic: %s not attached in the guest", h)
		}
	}

	// Without tracefs the ioctl stage falls to raw_tp sys_enter/sys_exit, the programs
	// that read the arm64 syscall number and argument registers (arch.h). The probe tests
	// that ran after this doctor decoded ioctls through them (the script checks their rc).
	if _, err := os.Stat(filepath.Join(dir, "notracefs.json")); err == nil {
		n := readGuestDoctor(t, dir, "notracefs.json")
		checkNoProgramFaults(t, "notracefs", n)
		gotn := attachedHooks(n)
		for _, h := range []string{"raw_tp/sys_enter", "raw_tp/sys_exit"} {
			if !gotn[h] && !gotn["fentry/drm_ioctl"] {
				t.Errorf("notracefs: %s not attached in the guest", h)
			}
		}
	}
}
