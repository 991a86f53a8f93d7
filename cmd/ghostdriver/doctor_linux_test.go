// `ghostdriver doctor` on this host ends with one verdict line; where the host has no DRM
// device and no GPU scheduler (read here, from /dev and /sys, not from the code under
// test), the verdict must say plainly that GPU jobs cannot be followed, and why. --json
// carries the same verdict.
package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ghostdriver/ghostdriver/internal/testreq"
)

func TestDoctorVerdict(t *testing.T) {
	if os.Geteuid() != 0 {
		testreq.Skip(t, testreq.Root, "needs root: doctor loads the eBPF programs to see what attaches (CI runs as root)")
	}
	code, out, errOut := runCLI("doctor")
	if code != 0 {
		t.Fatalf("doctor: exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	last := lines[len(lines)-1]
	if !strings.HasPrefix(last, "verdict: this host ") {
		t.Fatalf("doctor does not end with a verdict: %q", last)
	}
	_, gpuSched := os.Stat("/sys/module/gpu_sched")
	dri, _ := os.ReadDir("/dev/dri")
	noGPU := gpuSched != nil && len(dri) == 0
	if noGPU {
		for _, want := range []string{"cannot follow GPU jobs", "/dev/dri", "gpu_sched"} {
			if !strings.Contains(last, want) {
				t.Errorf("host without DRM devices or gpu_sched: verdict lacks %q: %s", want, last)
			}
		}
	}

	code, out, errOut = runCLI("doctor", "--json")
	if code != 0 {
		t.Fatalf("doctor --json: exit %d: %s", code, errOut)
	}
	var doc struct {
		Verdict struct {
			CanTraceJobs *bool    `json:"can_trace_jobs"`
			Missing      []string `json:"missing"`
			Line         string   `json:"line"`
		} `json:"verdict"`
		Hooks []struct{ Stage, Hook, Status, Reason string } `json:"hooks"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("doctor --json: %v\n%s", err, out)
	}
	if doc.Verdict.CanTraceJobs == nil || doc.Verdict.Line != last || len(doc.Hooks) == 0 {
		t.Errorf("doctor --json verdict %+v (line %q, %d hooks), text verdict %q", doc.Verdict, doc.Verdict.Line, len(doc.Hooks), last)
	}
	if noGPU && (*doc.Verdict.CanTraceJobs || len(doc.Verdict.Missing) == 0) {
		t.Errorf("doctor --json on a host without GPU: %+v", doc.Verdict)
	}
}

// Where tracefs is not mounted, doctor (like the live source) mounts it to attach and says
// so; with --no-tracefs-mount the submit ioctls fall back to raw_tp sys_enter/sys_exit and
// the verdict carries the warning, in text and in --json. Before, doctor had no tracefs line
// and no warnings.
func TestDoctorSaysTracefsAndFallback(t *testing.T) {
	if os.Geteuid() != 0 {
		testreq.Skip(t, testreq.Root, "needs root: doctor loads the eBPF programs to see what attaches (CI runs as root)")
	}
	// Another test package's loader holds its mount only until its hooks are attached: wait
	// such a mount out before deciding this host has one.
	for end := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if _, err := os.Stat("/sys/kernel/tracing/events"); err != nil {
			break
		}
		if time.Now().After(end) {
			testreq.Skip(t, testreq.TracefsUnmounted, "tracefs is mounted on this host (for 10s): the mount and fallback cases need a host without it")
		}
	}
	code, out, errOut := runCLI("doctor")
	if code != 0 {
		t.Fatalf("doctor: exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "tracefs: mounted by ghostdriver") || strings.Contains(out, "WARNING") {
		t.Errorf("doctor without tracefs: want the loader's mount and no warning:\n%s", out)
	}
	code, out, errOut = runCLI("doctor", "--no-tracefs-mount", "--json")
	if code != 0 {
		t.Fatalf("doctor --no-tracefs-mount --json: exit %d: %s", code, errOut)
	}
	var doc struct {
		Verdict struct {
			Warnings []string `json:"warnings"`
			Line     string   `json:"line"`
		} `json:"verdict"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("doctor --json: %v\n%s", err, out)
	}
	if len(doc.Verdict.Warnings) != 1 || !strings.Contains(doc.Verdict.Warnings[0], "raw_tp sys_enter/sys_exit") ||
		!strings.Contains(doc.Verdict.Line, "WARNING: submit ioctls are hooked with raw_tp") {
		t.Errorf("doctor --no-tracefs-mount: verdict %+v", doc.Verdict)
	}
	if _, err := os.Stat("/sys/kernel/tracing/events"); err == nil {
		t.Errorf("tracefs left mounted after doctor")
	}
}
