//go:build linux

// The hook table and loader steps of the jobs record mode (bpf/jobs.c): which ladders the
// jobs family's programs take over, how its maps are sized, and the switch that makes the
// finished fence's signal end a job.

package probe

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"github.com/ghostdriver/ghostdriver/internal/capability"
)

// famJobs is bpf/jobs.c.
const famJobs = "jobs"

func init() { familySpecs[famJobs] = loadJobs }

// liveHookDefs is the hook table the loader walks: hookDefs, with the scheduler and
// dma_fence ladders of the jobs family in jobs mode.
func liveHookDefs(cfg Config) []hookDef {
	defs := hookDefs(cfg)
	if !cfg.jobsMode() {
		return defs
	}
	return jobsHookDefs(defs)
}

// jobsFenceEvents are the dma_fence events the jobs family hooks itself; wait_start and
// wait_end keep their per-event records (a submitter blocking on a fence is no job's
// stage). enable_signal and destroy are hooked in neither mode (hookDefs).
var jobsFenceEvents = map[string]bool{"dma_fence_init": true, "dma_fence_emit": true, "dma_fence_signaled": true}

// jobsHookDefs rewrites the scheduler and dma_fence ladders: the jobs family's tp_btf and
// raw_tp programs first, the per-event rungs after them (used only where the jobs
// programs cannot attach; their events go through the same assembler). The report says
// which rung each hook took.
func jobsHookDefs(defs []hookDef) []hookDef {
	out := make([]hookDef, 0, len(defs))
	for _, d := range defs {
		isSched := d.stage == StageJobQueue || d.stage == StageJobRun || d.stage == StageJobDone || d.stage == StageJobDependency
		isFence := d.stage == StageDMAFence && jobsFenceEvents[d.event]
		if isSched || isFence {
			// Where a jobs program cannot load, the per-event rungs follow: their records
			// carry the same keys and join the jobs' in the assembler.
			d.rungs = append([]rung{one(famJobs, "jobs_tpbtf_"+d.event), one(famJobs, "jobs_rawtp_"+d.event)}, d.rungs...)
		}
		out = append(out, d)
	}
	return out
}

// jobsMapSizes sizes the jobs family's state maps from the configuration: the pending-job
// hash and the fence roles (a hardware fence per job, the dependencies waited on; an LRU).
// From 6.1 the pending-job hash allocates its entries as jobs come (BPF_F_NO_PREALLOC), so
// that its memory follows the pending jobs instead of the bound (about 7 MiB at the
// default 16384 whether jobs are pending or not; BENCHMARKS.md): 6.1 is where hash maps
// allocate from bpf_mem_alloc, which any context may use ("bpf: Relax the requirement to
// use preallocated hash maps in tracing progs.", 34dd3bad1a6f); before it the verifier
// warns about run-time allocation in tracing programs, so older kernels keep it
// preallocated.
func jobsMapSizes(spec *ebpf.CollectionSpec, cfg Config) {
	for _, name := range []string{jobsMapJobs, jobsMapFenceRoles} {
		if m, ok := spec.Maps[name]; ok {
			m.MaxEntries = uint32(cfg.JobsMapEntries)
		}
	}
	if m, ok := spec.Maps[jobsMapJobs]; ok && jobsNoPrealloc {
		m.Flags |= unix.BPF_F_NO_PREALLOC
	}
}

// jobsNoPrealloc: the pending-job hash is created BPF_F_NO_PREALLOC (the benchmarks turn
// it off to measure both sides).
var jobsNoPrealloc = kernelAtLeast(6, 1)

// kernelAtLeast reports whether the running kernel's release is major.minor or later.
func kernelAtLeast(major, minor int) bool {
	var u unix.Utsname
	if unix.Uname(&u) != nil {
		return false
	}
	ma, mi, ok := parseRelease(unix.ByteSliceToString(u.Release[:]))
	return ok && (ma > major || ma == major && mi >= minor)
}

// parseRelease reads major.minor from a kernel release ("6.1.0-48-amd64", "7.3.4+deb13").
func parseRelease(rel string) (major, minor int, ok bool) {
	a, rest, found := strings.Cut(rel, ".")
	if !found {
		return 0, 0, false
	}
	end := strings.IndexFunc(rest, func(r rune) bool { return r < '0' || r > '9' })
	if end < 0 {
		end = len(rest)
	}
	ma, err1 := strconv.Atoi(a)
	mi, err2 := strconv.Atoi(rest[:end])
	return ma, mi, err1 == nil && err2 == nil
}

// jobsAttachedReason is the report line of a hook the jobs family took.
const jobsAttachedReason = "per-job state in the kernel (records: jobs)"

// enableJobEnd tells the jobs programs that the finished fence's dma_fence_signaled is
// hooked by the jobs family, so that the signal (which follows the done event) ends a
// job; without it the done event does.
func (ld *loader) enableJobEnd() {
	if !ld.cfg.jobsMode() {
		return
	}
	f, ok := ld.objs.families[famJobs]
	if !ok {
		return
	}
	attached := false
	for _, e := range ld.rep.Entries {
		if e.Status == capability.StatusAttached && e.Stage == StageDMAFence &&
			(e.Hook == "tp_btf/dma_fence_signaled" || e.Hook == "raw_tp/dma_fence_signaled") {
			attached = true
		}
	}
	if !attached {
		return
	}
	if err := f.maps[jobsMapJobsCfg].Update(uint32(0), uint32(1), ebpf.UpdateAny); err != nil {
		ld.log.Warn("jobs mode: the done event ends jobs (finished fence signals not followed)")
	}
}

// jobsModeRefusal refuses the jobs record mode where the hooks of a driver whose jobs no
// scheduler event describes attached (driverStages: virtio_gpu). Its jobs are keyed by the
// fence its submit ioctl emits and ended by that fence's signal, and the jobs family's
// dma_fence programs send fence events of scheduler jobs only: those jobs would come out
// without their fence, so the mode is refused rather than run half-blind.
func jobsModeRefusal(cfg Config, r capability.Report) error {
	if !cfg.jobsMode() {
		return nil
	}
	var drivers []string
	seen := map[string]bool{}
	for _, e := range r.Entries {
		if _, ok := driverStages[e.Stage]; ok && e.Status == capability.StatusAttached && !seen[e.Stage] {
			seen[e.Stage] = true
			drivers = append(drivers, e.Stage)
		}
	}
	if len(drivers) == 0 {
		return nil
	}
	sort.Strings(drivers)
	return fmt.Errorf("records %q aggregates scheduler jobs in the kernel, and %s has no scheduler: its jobs are keyed "+
		"by the dma_fence events the per-job mode does not send; use records %q on this host",
		RecordsJobs, strings.Join(drivers, ", "), RecordsEvents)
}
