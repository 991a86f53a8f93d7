//go:build linux

// kill -9 of the ocb-built collector itself (not the CLI stand-in): the kernel frees every
// program, map and link the receiver loaded, nothing stays pinned, and a restarted
// collector attaches again and counts events. Runs when GHOSTDRIVER_DIST names the
// distribution (`make test-dist` builds it and sets it).
package lifecycle

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ghostdriver/ghostdriver/internal/testreq"
)

const collectorLiveConfig = `receivers:
  ghostdriver:
    source: live
    live: {drm_majors: [1]}
    tenant: {enabled: false}
    collection_interval: 200ms
exporters:
  file: {path: %OUT%}
service:
  telemetry: {metrics: {level: none}}
  pipelines:
    metrics: {receivers: [ghostdriver], exporters: [file]}
`

// ioctlEnterPoints matches the decoder's ioctl_enter counter in the file exporter's OTLP/JSON.
var ioctlEnterPoints = regexp.MustCompile(`"key":"ghostdriver.event.kind","value":\{"stringValue":"ioctl_enter"\}\}\][^{}]*"asInt":"(\d+)"`)

func TestKill9CollectorLeavesNothingAttached(t *testing.T) {
	requireRoot(t)
	dist := os.Getenv("GHOSTDRIVER_DIST")
	if dist == "" {
		testreq.Skip(t, testreq.Dist, "GHOSTDRIVER_DIST is not set: this test kills the ocb-built collector; `make test-dist` builds it and sets the variable (TestKill9LeavesNothingAttached covers the CLI)")
	}
	dir := t.TempDir()
	start := func(name string) (*exec.Cmd, string, *bytes.Buffer) {
		out := filepath.Join(dir, name+".json")
		cfg := filepath.Join(dir, name+".yaml")
		if err := os.WriteFile(cfg, []byte(strings.ReplaceAll(collectorLiveConfig, "%OUT%", out)), 0o644); err != nil {
			t.Fatal(err)
		}
		var logs bytes.Buffer
		cmd := exec.Command(dist, "--config="+cfg)
		cmd.Stdout, cmd.Stderr = &logs, &logs
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd, out, &logs
	}
	// attached waits until the collector's programs, maps and links are in the kernel's lists.
	attached := func(cmd *exec.Cmd, logs *bytes.Buffer, before map[bpfObject]bool) []bpfObject {
		deadline := time.Now().Add(60 * time.Second)
		for {
			if ours := added(before, kernelObjects(t)); len(ours) > 0 && strings.Contains(logs.String(), "Everything is ready") {
				return ours
			}
			if cmd.ProcessState != nil || time.Now().After(deadline) {
				cmd.Process.Kill()
				t.Fatalf("the collector did not attach within 60 s:\n%s", logs.String())
			}
			time.Sleep(100 * time.Millisecond)
		}
	}

	before := kernelObjects(t)
	pinsBefore := pinned(t)
	cmd, _, logs := start("first")
	ours := attached(cmd, logs, before)
	kill9Released(t, cmd, ours, pinsBefore, "the collector")

	// A restarted collector attaches again and its metrics count the ioctls it follows.
	cmd, out, logs := start("restarted")
	attached(cmd, logs, kernelObjects(t))
	defer func() {
		cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	}()
	ioctlFlood(t, 500*time.Millisecond)
	deadline := time.Now().Add(30 * time.Second)
	for {
		b, _ := os.ReadFile(out)
		if m := ioctlEnterPoints.FindAllSubmatch(b, -1); len(m) > 0 && string(m[len(m)-1][1]) != "0" {
			t.Logf("restarted collector: %s ioctl_enter events counted", m[len(m)-1][1])
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the restarted collector exported no ioctl_enter count within 30 s; its log:\n%s", logs.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
}
