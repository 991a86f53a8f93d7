// The report's renderings: the JSON doctor --json prints, the tables and the summary
// lines of both sources.

package capability

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestReportRendering(t *testing.T) {
	r := Report{Source: SourceDRM}
	r.Add("ioctl", "tracepoint/syscalls/sys_enter_ioctl", StatusAttached, "")
	r.Add("job_run", "tp_btf/drm_sched_job_run", StatusUnavailable, "tracepoint not present")
	b, err := r.JSON()
	if err != nil {
		t.Fatal(err)
	}
	var list []map[string]string
	if err := json.Unmarshal(b, &list); err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0]["stage"] != "ioctl" || list[0]["status"] != "attached" ||
		list[1]["hook"] != "tp_btf/drm_sched_job_run" || list[1]["reason"] != "tracepoint not present" {
		t.Fatalf("json: %s", b)
	}
	for _, e := range list { // the documented shape: every entry has all four keys
		for _, k := range []string{"stage", "hook", "status", "reason"} {
			if _, ok := e[k]; !ok {
				t.Fatalf("entry without %q: %s", k, b)
			}
		}
	}
	text := r.String()
	if !strings.Contains(text, "STAGE") || !strings.Contains(text, "tp_btf/drm_sched_job_run") {
		t.Fatalf("table:\n%s", text)
	}
	if s := r.Summary(); !strings.Contains(s, "1 hooks attached") || !strings.Contains(s, "job_run") {
		t.Fatalf("summary: %s", s)
	}
	if b, _ := (Report{}).JSON(); string(b) != "[]" {
		t.Fatalf("empty report: %s", b)
	}
}

func TestCUDAReportText(t *testing.T) {
	r := Report{Source: SourceCUDA}
	r.Add("uprobe", "/usr/lib/libcuda.so.1", StatusAttached, "")
	r.Add("uprobe", "libcudart.so*", StatusUnavailable, "no such file")
	r.Add("xid", "tracepoint/nvidia/nvidia_dev_xid", StatusUnavailable, "not present")
	want := "STAGE   STATUS       HOOK                              REASON\n" +
		"uprobe  attached     /usr/lib/libcuda.so.1             \n" +
		"uprobe  unavailable  libcudart.so*                     no such file\n" +
		"xid     unavailable  tracepoint/nvidia/nvidia_dev_xid  not present\n" +
		"CUDA source: uprobe: 1 attached, 1 unavailable; xid: 0 attached, 1 unavailable\n"
	if got := r.Text(); got != want {
		t.Errorf("text:\n%s\nwant\n%s", got, want)
	}
	if c := r.Clone(); &c.Entries[0] == &r.Entries[0] {
		t.Error("a clone shares the entries")
	}
}
