// The verdict from reports and host facts built by hand (no kernel needed).
package probe

import (
	"errors"
	"strings"
	"testing"
)

func TestAssess(t *testing.T) {
	noGPU := Report{}
	noGPU.add(StageIoctl, "raw_tp/sys_enter", StatusAttached, "")
	noGPU.add(StageDMAFence, "tp_btf/dma_fence_init", StatusAttached, "")
	noGPU.add(StageJobQueue, "tp_btf/drm_sched_job_queue", StatusUnavailable, "tracepoint not present")
	noGPU.add(StageProcess, "tp_btf/sched_process_exec", StatusAttached, "")
	host := Host{DRMErr: errors.New("no such file"), Fentry: errors.New("EPERM"), Tracefs: errors.New("tracefs not mounted")}

	v := Assess(noGPU, host)
	if v.CanTraceJobs {
		t.Fatalf("no job hook attached, yet CanTraceJobs: %+v", v)
	}
	for _, want := range []string{"cannot follow GPU jobs", "no /dev/dri", "gpu_sched", "fentry", "tracefs", "dma_fence, ioctl, process_lifecycle"} {
		if !strings.Contains(v.Line, want) {
			t.Errorf("verdict line lacks %q: %s", want, v.Line)
		}
	}
	if strings.Contains(v.Line, "\n") {
		t.Errorf("verdict is more than one line: %q", v.Line)
	}

	gpu := noGPU
	gpu.Entries = append([]Entry(nil), noGPU.Entries...)
	gpu.add(StageJobDone, "tp_btf/drm_sched_job_done", StatusAttached, "")
	gpu.add(StageAMDGPU, "tracepoint/amdgpu/amdgpu_cs_ioctl", StatusAttached, "")
	v = Assess(gpu, Host{DRMDevices: []string{"card0", "renderD128"}, SchedModule: true, Fentry: errors.New("EPERM")})
	if !v.CanTraceJobs || strings.Join(v.JobStages, ",") != "job_done,amdgpu" {
		t.Fatalf("job hooks attached: %+v", v)
	}
	if !strings.HasPrefix(v.Line, "verdict: this host can follow GPU jobs") || !strings.Contains(v.Line, "bo_validation") {
		t.Errorf("line: %s", v.Line)
	}
	if strings.Contains(v.Line, "DRM device") || strings.Contains(v.Line, "gpu_sched") {
		t.Errorf("host has DRM devices and the scheduler, yet: %s", v.Line)
	}
}
