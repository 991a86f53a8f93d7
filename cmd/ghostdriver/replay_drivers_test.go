// Replays of the synthetic captures of testdata/captures/drivers (lines written from the
// kernels' TP_printk formats: pvr_trace.h 2026, ivpu_trace.h 2024, amdxdna.h, drm_sched
// 6.17, v3d_trace.h), through the CLI: every job the kernel's order of events makes (the
// reasoning is at each capture's twin in internal/assemble's tests) comes out once, with
// its driver, and no driver event is left matching no job.

package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

func TestReplayDriverCaptures(t *testing.T) {
	for _, c := range []struct {
		file  string
		jobs  string // the summary's jobs line
		lines []string
	}{
		{"pvr_alone.txt", "jobs: 2 completed, 1 incomplete, 0 evicted", []string{"powervr    fragment", "powervr    geometry"}},
		{"pvr_sched_6.17.txt", "jobs: 2 completed, 0 incomplete, 0 evicted", []string{"powervr    fd00000.gpu/pvr-queue"}},
		{"pvr_sched_queue_done_no_run.txt", "jobs: 2 completed, 0 incomplete, 0 evicted", []string{"powervr    fd00000.gpu/pvr-queue"}},
		{"ivpu.txt", "jobs: 4 completed, 0 incomplete, 0 evicted", []string{"intel_vpu  compute        execution                4"}},
		{"amdxdna_alone_and_sched_6.17.txt", "jobs: 2 completed, 0 incomplete, 0 evicted", []string{"amdxdna    hwctx.1", "amdxdna    0000:c5:00.1/amdxdna_js"}},
		// The v3d IRQ-to-submit execution is measured on both jobs (MEASURED 1 of 1).
		{"v3d_sched_queue_done_no_run.txt", "jobs: 2 completed, 0 incomplete, 0 evicted",
			[]string{"v3d        fec00000.v3d/v3d_bin execution                1         1", "v3d        fec00000.v3d/v3d_render execution                1         1"}},
	} {
		var stdout, stderr bytes.Buffer
		path := filepath.Join("..", "..", "testdata", "captures", "drivers", c.file)
		code := run([]string{"replay", path}, &stdout, &stderr)
		out := stdout.String() + stderr.String()
		if code != 0 {
			t.Errorf("%s: exit %d: %s", c.file, code, out)
			continue
		}
		for _, want := range append([]string{c.jobs}, c.lines...) {
			if !strings.Contains(out, want) {
				t.Errorf("%s: output lacks %q:\n%s", c.file, want, out)
			}
		}
		if strings.Contains(out, "matched no job") {
			t.Errorf("%s: events matched no job:\n%s", c.file, out)
		}
	}
}
