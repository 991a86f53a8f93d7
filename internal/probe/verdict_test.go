//go:build linux

// The verdict from reports and host facts built by hand (no kernel needed).
package probe

import (
	"errors"
	"strings"
	"testing"

	"github.com/ghostdriver/ghostdriver/internal/capability"
)

func TestAssess(t *testing.T) {
	noGPU := capability.Report{}
	noGPU.Add(StageIoctl, "raw_tp/sys_enter", capability.StatusAttached, "")
	noGPU.Add(StageDMAFence, "tp_btf/dma_fence_init", capability.StatusAttached, "")
	noGPU.Add(StageJobQueue, "tp_btf/drm_sched_job_queue", capability.StatusUnavailable, "tracepoint not present")
	noGPU.Add(StageProcess, "tp_btf/sched_process_exec", capability.StatusAttached, "")
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
	// A host whose DRM driver's job events are absent (panfrost has none the table reads;
	// v3d's module not loaded): each driver is told what would bound its jobs.
	v = Assess(noGPU, Host{DRMDevices: []string{"card0", "card1"}, DRMDrivers: []string{"panfrost", "v3d"}})
	missing := strings.Join(v.Missing, "\n")
	for _, want := range []string{"driver v3d: v3d's events that bound a job are v3d_submit_cl", "-e v3d",
		"driver panfrost: ghostdriver reads none of panfrost's own events", "v3d, vc4, pvr, vpu, amdxdna)"} {
		if !strings.Contains(missing, want) {
			t.Errorf("missing lacks %q: %s", want, missing)
		}
	}

	gpu := noGPU
	gpu.Entries = append([]capability.Entry(nil), noGPU.Entries...)
	gpu.Add(StageJobDone, "tp_btf/drm_sched_job_done", capability.StatusAttached, "")
	gpu.Add("amdgpu", "tracepoint/amdgpu/amdgpu_cs_ioctl", capability.StatusAttached, "")
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

// The submit ioctls on raw_tp sys_enter: a warning in the verdict, with the cost and the
// reason from the report's tracefs line; on the syscall tracepoints, none. A tracefs the
// loader mounted for its run is not missing.
func TestAssessSyscallFallbackWarning(t *testing.T) {
	host := Host{DRMDevices: []string{"card0"}, SchedModule: true, Tracefs: errors.New("tracefs not mounted")}
	fallback := capability.Report{Tracefs: "not mounted; mounting it is forbidden by the configuration (mount_tracefs: false)"}
	fallback.Add(StageIoctl, "tracepoint/syscalls/sys_enter_ioctl", capability.StatusUnavailable, "tracefs not mounted")
	fallback.Add(StageIoctl, "raw_tp/sys_enter", capability.StatusAttached, "")
	fallback.Add(StageIoctl, "raw_tp/sys_exit", capability.StatusAttached, "")
	fallback.Add(StageJobDone, "tp_btf/drm_sched_job_done", capability.StatusAttached, "")
	v := Assess(fallback, host)
	if len(v.Warnings) != 1 || !strings.Contains(v.Warnings[0], "every syscall of the host") ||
		!strings.Contains(v.Warnings[0], "ns on every syscall") || !strings.Contains(v.Warnings[0], "forbidden") {
		t.Fatalf("warnings %q", v.Warnings)
	}
	if !strings.Contains(v.Line, "; WARNING: submit ioctls are hooked with raw_tp") || strings.Contains(v.Line, "\n") {
		t.Errorf("line: %s", v.Line)
	}
	if !strings.Contains(strings.Join(v.Missing, ";"), "mount_tracefs: false") {
		t.Errorf("missing %q does not say why tracefs is not there", v.Missing)
	}

	mounted := capability.Report{Tracefs: mountedByUs}
	mounted.Add(StageIoctl, "tracepoint/syscalls/sys_enter_ioctl", capability.StatusAttached, "")
	mounted.Add(StageIoctl, "tracepoint/syscalls/sys_exit_ioctl", capability.StatusAttached, "")
	mounted.Add(StageJobDone, "tp_btf/drm_sched_job_done", capability.StatusAttached, "")
	v = Assess(mounted, host) // the host reads tracefs as unmounted again: the loader unmounted it
	if len(v.Warnings) != 0 || strings.Contains(v.Line, "WARNING") || strings.Contains(strings.Join(v.Missing, ";"), "tracefs") {
		t.Errorf("tracepoints attached with the loader's mount: %+v", v)
	}
}

// One mount per process: the first loader that needs tracefs mounts it, later ones share
// it, and only the last release unmounts, once (the mount calls are counted, not made).
func TestTracefsMountSharedAndUndoneOnce(t *testing.T) {
	requireNoTracefs(t) // else acquireTracefs would use the mount and make none
	mounts, unmounts := 0, 0
	oldM, oldU := mountTracefs, unmountTracefs
	mountTracefs = func() error { mounts++; return nil }
	unmountTracefs = func() error { unmounts++; return nil }
	defer func() { mountTracefs, unmountTracefs = oldM, oldU }()

	if line, held := acquireTracefs(true); held || !strings.Contains(line, "forbidden") || mounts != 0 {
		t.Fatalf("forbidden: %q held %v, %d mounts", line, held, mounts)
	}
	_, held1 := acquireTracefs(false)
	line, held2 := acquireTracefs(false)
	if !held1 || !held2 || mounts != 1 || line != mountedByUs {
		t.Fatalf("two loaders: held %v %v, %d mounts, %q", held1, held2, mounts, line)
	}
	if err := releaseTracefs(); err != nil || unmounts != 0 {
		t.Fatalf("first release: %v, %d unmounts", err, unmounts)
	}
	if err := releaseTracefs(); err != nil || unmounts != 1 {
		t.Fatalf("last release: %v, %d unmounts", err, unmounts)
	}
	if err := releaseTracefs(); err != nil || unmounts != 1 {
		t.Fatalf("a release too many: %v, %d unmounts", err, unmounts)
	}
}

// A virtio_gpu guest (no DRM scheduler): its hooks follow jobs, the scheduler is not
// missing, and the verdict says which stages its jobs get.
func TestAssessVirtioGPU(t *testing.T) {
	r := capability.Report{}
	r.Add(StageIoctl, "fentry/drm_ioctl", capability.StatusAttached, "")
	r.Add(StageDMAFence, "tp_btf/dma_fence_emit", capability.StatusAttached, "")
	r.Add("virtio_gpu", "tp_btf/virtio_gpu_cmd_queue", capability.StatusUnavailable, "verifier: no third argument")
	r.Add("virtio_gpu", "tracepoint/virtio_gpu/virtio_gpu_cmd_queue", capability.StatusAttached, "raw entries decoded with the tracefs format")
	v := Assess(r, Host{DRMDevices: []string{"card0", "renderD128"}})
	if !v.CanTraceJobs || strings.Join(v.JobStages, ",") != "virtio_gpu" {
		t.Fatalf("virtio_gpu hooks attached: %+v", v)
	}
	if strings.Contains(v.Line, "gpu_sched") {
		t.Errorf("virtio_gpu needs no scheduler, yet: %s", v.Line)
	}
	if len(v.Follows) != 1 || !strings.Contains(v.Follows[0], "ring_emission") || !strings.Contains(v.Follows[0], "dma_scheduling not followed") {
		t.Errorf("stages followed: %q", v.Follows)
	}
}
