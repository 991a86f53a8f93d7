package probe

// The hook table and loader steps of the jobs record mode (bpf/jobs.c): which ladders the
// jobs family's programs take over, how its maps are sized, and the switch that makes the
// finished fence's signal end a job.

import "github.com/cilium/ebpf"

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
// stage), enable_signal and destroy are not hooked (the assembler uses neither).
var jobsFenceEvents = map[string]bool{"dma_fence_init": true, "dma_fence_emit": true, "dma_fence_signaled": true}

// jobsNotHooked are the dma_fence events jobs mode leaves unhooked, with the reason the
// report gives.
var jobsNotHooked = map[string]bool{"dma_fence_enable_signal": true, "dma_fence_destroy": true}

// jobsHookDefs rewrites the scheduler and dma_fence ladders: the jobs family's tp_btf and
// raw_tp programs first, the per-event rungs after them (used only where the jobs
// programs cannot attach; their events go through the same assembler). The report says
// which rung each hook took.
func jobsHookDefs(defs []hookDef) []hookDef {
	out := make([]hookDef, 0, len(defs))
	for _, d := range defs {
		isSched := d.stage == StageJobQueue || d.stage == StageJobRun || d.stage == StageJobDone || d.stage == StageJobDependency
		isFence := d.stage == StageDMAFence && jobsFenceEvents[d.event]
		switch {
		case d.stage == StageDMAFence && jobsNotHooked[d.event]:
			d.rungs = nil
		case isSched || isFence:
			// Where a jobs program cannot load, the per-event rungs follow: their records
			// carry the same keys and join the jobs' in the assembler.
			d.rungs = append([]rung{one(famJobs, "jobs_tpbtf_"+d.event), one(famJobs, "jobs_rawtp_"+d.event)}, d.rungs...)
		}
		out = append(out, d)
	}
	return out
}

// jobsMapSizes sizes the jobs family's state maps from the configuration.
func jobsMapSizes(spec *ebpf.CollectionSpec, cfg Config) {
	for _, name := range []string{"jobs", "hw_fences", "watched"} {
		if m, ok := spec.Maps[name]; ok {
			m.MaxEntries = uint32(cfg.JobsMapEntries)
		}
	}
}

// jobsAttachedReason is the report line of a hook the jobs family took.
const jobsAttachedReason = "per-job state in the kernel (records: jobs)"

// jobsUnhookedReason is the report line of a dma_fence event jobs mode does not hook.
const jobsUnhookedReason = "not hooked with records: jobs (the assembler uses neither enable_signal nor destroy)"

// reportJobsUnhooked adds the report lines of the events jobsHookDefs left without rungs.
func (ld *loader) reportJobsUnhooked(def hookDef) bool {
	if len(def.rungs) != 0 || !ld.cfg.jobsMode() {
		return false
	}
	ld.rep.add(def.stage, "tp_btf/"+def.event, StatusUnavailable, jobsUnhookedReason)
	return true
}

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
		if e.Status == StatusAttached && e.Stage == StageDMAFence &&
			(e.Hook == "tp_btf/dma_fence_signaled" || e.Hook == "raw_tp/dma_fence_signaled") {
			attached = true
		}
	}
	if !attached {
		return
	}
	if err := f.maps["jobs_cfg"].Update(uint32(0), uint32(1), ebpf.UpdateAny); err != nil {
		ld.log.Warn("jobs mode: the done event ends jobs (finished fence signals not followed)")
	}
}
