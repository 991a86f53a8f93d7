// The verdict on a capability report: can this host follow GPU jobs, with which stages,
// and what is missing. `ghostdriver doctor` ends with it and the receiver logs it as a
// warning at Start when no GPU job hook attached (the live source would run and emit
// nothing).

package probe

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ghostdriver/ghostdriver/internal/capability"
	"github.com/ghostdriver/ghostdriver/internal/eventdef"
)

// jobStages are the stages whose hooks identify GPU jobs: without one of them there is
// no gpu.job span, whatever else attached (ioctl, dma_fence and irq alone are not jobs).
// The drivers' stages are those of the event table's hooks that bound a job.
var jobStages = func() []string {
	out := []string{StageJobQueue, StageJobRun, StageJobDone}
	seen := map[string]bool{}
	for _, e := range eventdef.Hooks() {
		if !seen[e.Driver] {
			seen[e.Driver] = true
			out = append(out, e.Driver)
		}
	}
	return out
}()

// jobTracepointSystems names the tracefs systems whose events identify jobs.
func jobTracepointSystems() []string {
	out := []string{"gpu_scheduler"}
	seen := map[string]bool{}
	for _, e := range eventdef.Hooks() {
		if !seen[e.System] {
			seen[e.System] = true
			out = append(out, e.System)
		}
	}
	return out
}

// Host is what the verdict needs to know about the machine besides the report.
type Host struct {
	// DRMDevices are the entries of /dev/dri (card*, renderD*); DRMErr why none were read.
	DRMDevices []string
	DRMErr     error
	// SchedModule: /sys/module/gpu_sched exists (the DRM GPU scheduler is loaded).
	SchedModule bool
	// DRMDrivers are the kernel drivers of the DRM cards and of the compute accelerators
	// (/sys/class/drm/card*/device/driver, /sys/class/accel/accel*/device/driver).
	DRMDrivers []string
	Privileges error // nil: CAP_BPF+CAP_PERFMON or CAP_SYS_ADMIN
	BTF        error // nil: /sys/kernel/btf/vmlinux
	Tracefs    error // nil: tracefs mounted
	Fentry     error // nil: fentry/fexit load
}

// ProbeHost reads the host facts (devRoot: normally /dev; sysRoot: /sys).
func ProbeHost(devRoot, sysRoot string) Host {
	h := Host{Privileges: checkPrivileges(), BTF: HaveKernelBTF(), Tracefs: HaveTracefs()}
	if h.Privileges == nil && h.BTF == nil {
		h.Fentry = HaveFentry()
	}
	ents, err := os.ReadDir(filepath.Join(devRoot, "dri"))
	if err != nil {
		h.DRMErr = err
	}
	for _, e := range ents {
		if n := e.Name(); strings.HasPrefix(n, "card") || strings.HasPrefix(n, "renderD") {
			h.DRMDevices = append(h.DRMDevices, n)
		}
	}
	// Compute accelerators (drivers/accel: ivpu, amdxdna, habanalabs) have /dev/accel
	// nodes instead.
	if accel, err := os.ReadDir(filepath.Join(devRoot, "accel")); err == nil {
		for _, e := range accel {
			if n := e.Name(); strings.HasPrefix(n, "accel") {
				h.DRMDevices = append(h.DRMDevices, "accel/"+n)
				h.DRMErr = nil
			}
		}
	}
	if _, err := os.Stat(filepath.Join(sysRoot, "module", "gpu_sched")); err == nil {
		h.SchedModule = true
	}
	cards, _ := filepath.Glob(filepath.Join(sysRoot, "class", "drm", "card[0-9]*"))
	accels, _ := filepath.Glob(filepath.Join(sysRoot, "class", "accel", "accel[0-9]*"))
	cards = append(cards, accels...)
	seen := map[string]bool{}
	for _, c := range cards {
		if t, err := os.Readlink(filepath.Join(c, "device", "driver")); err == nil {
			if d := filepath.Base(t); !seen[d] {
				seen[d] = true
				h.DRMDrivers = append(h.DRMDrivers, d)
			}
		}
	}
	sort.Strings(h.DRMDrivers)
	return h
}

// Verdict is the one-line answer and its parts.
type Verdict struct {
	CanTraceJobs bool `json:"can_trace_jobs"`
	// Stages are the report's stages with an attached hook; JobStages those of them that
	// identify jobs.
	Stages    []string `json:"stages_attached"`
	JobStages []string `json:"job_stages_attached"`
	// Missing are the host facts that stop a stage, each with what to do.
	Missing []string `json:"missing"`
	// Warnings are what works at a cost the operator should know of: the submit ioctls
	// hooked with raw_tp sys_enter/sys_exit (every syscall of the host pays).
	Warnings []string `json:"warnings"`
	// Follows says, per driver whose job hooks attached and whose jobs have no scheduler
	// events to tile (driverStages), which stages its jobs get and how.
	Follows []string `json:"stages_followed"`
	Line    string   `json:"line"`
}

// driverStages are the stages of the jobs of drivers that the scheduler's events do not
// describe (docs/stages.md, per driver), as doctor states them.
var driverStages = map[string]string{
	"virtio_gpu": "virtio_gpu (virgl SUBMIT_3D) stages: ioctl, ring_emission (fence emit → command on the virtqueue), " +
		"fence_signal (host response → fence signal) measured; bo_validation, execution (command queued → host response: " +
		"the whole host side, its start not observable) inferred; fence_dependency, scheduler_queue, dma_scheduling " +
		"not followed (no scheduler, no host start); needs the execbuffer ioctl and dma_fence_emit/_signaled hooks too",
}

// Assess decides from a report and the host facts.
func Assess(r capability.Report, h Host) Verdict {
	v := Verdict{Stages: []string{}, JobStages: []string{}, Missing: []string{}, Warnings: []string{}, Follows: []string{}}
	seen := map[string]bool{}
	for _, e := range r.Entries {
		if e.Status == capability.StatusAttached && !seen[e.Stage] {
			seen[e.Stage] = true
			v.Stages = append(v.Stages, e.Stage)
		}
	}
	for _, s := range jobStages {
		if seen[s] {
			v.JobStages = append(v.JobStages, s)
		}
	}
	v.CanTraceJobs = len(v.JobStages) > 0
	driverJobs := false
	for _, s := range v.JobStages {
		if d, ok := driverStages[s]; ok {
			v.Follows = append(v.Follows, d)
			driverJobs = true
		}
	}

	if h.Privileges != nil {
		v.Missing = append(v.Missing, "privileges: "+h.Privileges.Error())
	}
	if len(h.DRMDevices) == 0 {
		why := "no DRM device: /dev/dri is empty"
		if h.DRMErr != nil {
			why = "no DRM device: no /dev/dri (no GPU driver with a DRM node is loaded)"
		}
		v.Missing = append(v.Missing, why)
	}
	if !h.SchedModule && !seen[StageJobQueue] && !seen[StageJobRun] && !seen[StageJobDone] && !driverJobs {
		v.Missing = append(v.Missing, "DRM GPU scheduler not loaded (no /sys/module/gpu_sched): no gpu_scheduler events")
	}
	if !v.CanTraceJobs {
		v.Missing = append(v.Missing, "no GPU job tracepoint present ("+strings.Join(jobTracepointSystems(), ", ")+")")
		// What each of the host's GPU drivers would need (its events, or the scheduler's).
		for _, d := range h.DRMDrivers {
			v.Missing = append(v.Missing, "driver "+d+": "+eventdef.RecordHint(d))
		}
	}
	if h.BTF != nil {
		v.Missing = append(v.Missing, "kernel BTF: "+h.BTF.Error()+" (tp_btf and fentry rungs unavailable; --classic-tracepoints needs none)")
	}
	if h.Fentry != nil && !seen[StageBOValidation] && !seen[StageRunJobEnd] {
		v.Missing = append(v.Missing, "fentry/fexit (no kprobes either): bo_validation and run_job_end are not measured")
	}
	switch {
	case h.Tracefs == nil || strings.HasPrefix(r.Tracefs, "mounted"):
		// Mounted, or the loader mounts it for its run (tracefs.go).
	case r.Tracefs != "":
		v.Missing = append(v.Missing, "tracefs "+r.Tracefs+" (the syscall and classic-tracepoint rungs need it)")
	default:
		v.Missing = append(v.Missing, h.Tracefs.Error()+" (the classic-tracepoint rungs need it; `ghostdriver record` mounts it itself)")
	}
	if w := FallbackWarning(r); w != "" {
		v.Warnings = append(v.Warnings, w)
	}

	attached := "none"
	if len(v.Stages) > 0 {
		s := append([]string(nil), v.Stages...)
		sort.Strings(s)
		attached = strings.Join(s, ", ")
	}
	if v.CanTraceJobs {
		v.Line = fmt.Sprintf("verdict: this host can follow GPU jobs (job hooks: %s; all hooks: %s)",
			strings.Join(v.JobStages, ", "), attached)
		if len(v.Missing) > 0 {
			v.Line += "; missing: " + strings.Join(v.Missing, "; ")
		}
	} else {
		v.Line = fmt.Sprintf("verdict: this host cannot follow GPU jobs: %s (hooks attached: %s)",
			strings.Join(v.Missing, "; "), attached)
	}
	if len(v.Warnings) > 0 {
		v.Line += "; WARNING: " + strings.Join(v.Warnings, "; ")
	}
	return v
}
