// Every ioctl the rig's workload made is accounted for by each receiver: sent (an ioctl
// entry decoded) or counted in the kernel as an ioctl without a job
// (kernel_drops{reason=ioctl_without_job}, bpf/include/ioctl_slot.h). The oracle is the
// workload's own count of its ioctl calls (vgpu_app.c reports it in app.err at exit).
package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

var appIoctls = regexp.MustCompile(`^vgpu_app: pid \d+: (\d+) ioctls$`)

// appIoctlsIn sums the workload processes' own ioctl counts, and says how many reported one.
func appIoctlsIn(t *testing.T, path string) (total, procs int) {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if m := appIoctls.FindStringSubmatch(line); m != nil {
			n, _ := strconv.Atoi(m[1])
			total += n
			procs++
		}
	}
	return total, procs
}

func TestVirtualGPUIoctlsSentOrCounted(t *testing.T) {
	dir := vgpuDir(t)
	for _, ph := range []struct{ name, log, app, env string }{
		{"events", "ghostdriver.log", "app.err", ""},
		{"jobs", "ghostdriver-jobs.log", "app.err", "GHOSTDRIVER_JOBS_ARGS"},
		{"classic", "ghostdriver-classic.log", "app-classic.err", "GHOSTDRIVER_CLASSIC_ARGS"},
	} {
		t.Run(ph.name, func(t *testing.T) {
			rigPhase(t, dir, ph.log, ph.env)
			log := filepath.Join(dir, ph.log)
			made, procs := appIoctlsIn(t, filepath.Join(dir, ph.app))
			if procs != 3 {
				t.Fatalf("%s: %d processes reported their ioctls, want 3 (an app that predates the count?)", ph.app, procs)
			}
			sent := summaryCount(t, log, "events decoded:", "ioctl_enter")
			exits := summaryCount(t, log, "events decoded:", "ioctl_exit")
			counted := summaryCount(t, log, "counted in the kernel, not sent:", "ioctl_without_job")
			lost := reportedLostIn(t, log)
			t.Logf("the app made %d ioctls; %d entries and %d exits sent, %d counted without a job, %d records lost", made, sent, exits, counted, lost)
			// The receivers run with their defaults: processes are resolved after their
			// first ioctl, and the app makes ioctls with nothing inside afterwards.
			if counted == 0 {
				t.Errorf("no ioctl counted without a job: the kernel sent every one (deferral off?)")
			}
			if sent+counted > made || made-(sent+counted) > lost {
				t.Errorf("%d sent + %d counted = %d, the app made %d (%d records lost): ioctls unaccounted for", sent, counted, sent+counted, made, lost)
			}
			if exits != sent && lost == 0 {
				t.Errorf("%d exits for %d entries sent", exits, sent)
			}
		})
	}
}
