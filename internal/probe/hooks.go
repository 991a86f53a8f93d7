// The hook table: every hook value of bpf/include/ghostdriver.h with the event kind it
// decodes to, the stages of the capability report, and each stage's ladder of rungs
// (tp_btf > raw_tp > classic tracepoint; fentry/fexit > syscall tracepoints).

package probe

import (
	"fmt"

	"github.com/cilium/ebpf"

	"github.com/ghostdriver/ghostdriver/internal/event"
	"github.com/ghostdriver/ghostdriver/internal/eventdef"
)

// hookInfo is what user space knows about a record's hook: the event kind it decodes
// to, the kernel's own name for the hook (Event.Name) and, for a driver's own event, the
// driver (Event.Driver, as the text decoder sets it from the same table row).
type hookInfo struct {
	kind   event.Kind
	name   string
	driver string
}

// hookTable maps every enum hook value of bpf/include/ghostdriver.h (generated as
// commonHook) to its event kind. Sources of the names: include/trace/events/*.h and
// drivers/gpu/drm/scheduler/gpu_scheduler_trace.h (see internal/ftrace/testdata/kernel-tracepoints).
// The drivers' own hooks are the event table's (internal/eventdef: driverHooks).
var hookTable = withDriverHooks(map[commonHook]hookInfo{
	commonHookHOOK_SYS_ENTER_IOCTL:             {kind: event.IoctlEnter, name: "sys_enter_ioctl"},
	commonHookHOOK_SYS_EXIT_IOCTL:              {kind: event.IoctlExit, name: "sys_exit_ioctl"},
	commonHookHOOK_DRM_IOCTL_ENTER:             {kind: event.IoctlEnter, name: "drm_ioctl"},
	commonHookHOOK_DRM_IOCTL_EXIT:              {kind: event.IoctlExit, name: "drm_ioctl"},
	commonHookHOOK_BO_VALIDATE_ENTER:           {kind: event.BOValidStart, name: "bo_validate"},
	commonHookHOOK_BO_VALIDATE_EXIT:            {kind: event.BOValidEnd, name: "bo_validate"},
	commonHookHOOK_DRM_SCHED_JOB:               {kind: event.JobQueue, name: "drm_sched_job"},
	commonHookHOOK_DRM_RUN_JOB:                 {kind: event.JobRun, name: "drm_run_job"},
	commonHookHOOK_DRM_SCHED_PROCESS_JOB:       {kind: event.JobDone, name: "drm_sched_process_job"},
	commonHookHOOK_DRM_SCHED_JOB_WAIT_DEP:      {kind: event.JobDependency, name: "drm_sched_job_wait_dep"},
	commonHookHOOK_DRM_SCHED_JOB_QUEUE:         {kind: event.JobQueue, name: "drm_sched_job_queue"},
	commonHookHOOK_DRM_SCHED_JOB_RUN:           {kind: event.JobRun, name: "drm_sched_job_run"},
	commonHookHOOK_DRM_SCHED_JOB_DONE:          {kind: event.JobDone, name: "drm_sched_job_done"},
	commonHookHOOK_DRM_SCHED_JOB_ADD_DEP:       {kind: event.JobDependency, name: "drm_sched_job_add_dep"},
	commonHookHOOK_DRM_SCHED_JOB_UNSCHEDULABLE: {kind: event.JobDependency, name: "drm_sched_job_unschedulable"},
	commonHookHOOK_RUN_JOB_EXIT:                {kind: event.RunJobEnd, name: "run_job"},
	commonHookHOOK_DMA_FENCE_INIT:              {kind: event.FenceInit, name: "dma_fence_init"},
	commonHookHOOK_DMA_FENCE_EMIT:              {kind: event.FenceEmit, name: "dma_fence_emit"},
	commonHookHOOK_DMA_FENCE_ENABLE_SIGNAL:     {kind: event.FenceEnableSignal, name: "dma_fence_enable_signal"},
	commonHookHOOK_DMA_FENCE_SIGNALED:          {kind: event.FenceSignaled, name: "dma_fence_signaled"},
	commonHookHOOK_DMA_FENCE_WAIT_START:        {kind: event.FenceWaitStart, name: "dma_fence_wait_start"},
	commonHookHOOK_DMA_FENCE_WAIT_END:          {kind: event.FenceWaitEnd, name: "dma_fence_wait_end"},
	commonHookHOOK_DMA_FENCE_DESTROY:           {kind: event.FenceDestroy, name: "dma_fence_destroy"},
	commonHookHOOK_IRQ_HANDLER_ENTRY:           {kind: event.IRQEntry, name: "irq_handler_entry"},
	commonHookHOOK_IRQ_HANDLER_EXIT:            {kind: event.IRQExit, name: "irq_handler_exit"},
	commonHookHOOK_PROCESS_EXEC:                {kind: event.ProcessExec, name: "sched_process_exec"},
	commonHookHOOK_PROCESS_EXIT:                {kind: event.ProcessExit, name: "sched_process_exit"},
})

// withDriverHooks adds the hook of every event table row that has one.
func withDriverHooks(t map[commonHook]hookInfo) map[commonHook]hookInfo {
	for _, e := range eventdef.Hooks() {
		h := commonHook(e.Hook.Value)
		if _, dup := t[h]; dup {
			panic(fmt.Sprintf("probe: hook %d of %s is taken", h, e.Hook.Event))
		}
		t[h] = hookInfo{e.Kind, e.Hook.Event, e.Driver}
	}
	return t
}

// Program families: one bpf2go object each (bpf/<family>.c).
const (
	famSyscalls = "syscalls"
	famSched    = "sched"
	famFence    = "fence"
	famIRQ      = "irq"
	famDrivers  = "drivers"
	famFuncs    = "funcs"
)

// familySpecs loads each family's bpf2go object (the jobs family adds itself: jobs_hooks.go).
var familySpecs = map[string]func() (*ebpf.CollectionSpec, error){
	famSyscalls: loadSyscalls,
	famSched:    loadSched,
	famFence:    loadFence,
	famIRQ:      loadIrq,
	famDrivers:  loadDrivers,
	famFuncs:    loadFuncs,
}

// Stage names used in the Report (docs/stages.md's points). A driver's own events report
// under the driver's name (eventdef.Event.Driver).
const (
	StageIoctl         = "ioctl"
	StageBOValidation  = "bo_validation"
	StageJobQueue      = "job_queue"
	StageJobDependency = "job_dependency"
	StageJobRun        = "job_run"
	StageRunJobEnd     = "run_job_end"
	StageJobDone       = "job_done"
	StageDMAFence      = "dma_fence"
	StageIRQ           = "irq"
	// StageProcess is not a job stage: exec/exit of processes whose trace-context recipe
	// is in the kernel (bpf/syscalls.c), so that stale recipes and caches are dropped.
	StageProcess = "process_lifecycle"
	// StageAppContext reports which map the OBI context tier reads.
	StageAppContext = "app_context"
)

// rung is one way of hooking an event: programs of one family that must all attach.
type rung struct {
	family string
	progs  []string
	// attachTo overrides the programs' compiled-in target (generic fentry/fexit).
	attachTo string
	// funcID is written to the copy's func_id (funcs family).
	funcID uint16
	// classic: the programs copy the raw trace entry (classic.go decodes it with the
	// event's tracefs format).
	classic bool
}

// hookDef is one kernel event with its ladder: fentry > tp_btf > raw_tp > tracepoint.
// The first rung whose programs all attach wins.
type hookDef struct {
	stage string
	event string
	rungs []rung
}

func one(family string, progs ...string) rung { return rung{family: family, progs: progs} }

// rawCopy is the classic-tracepoint rung of a gpu_scheduler or driver event.
func rawCopy(family, ev string) rung {
	return rung{family: family, progs: []string{"tp_" + ev}, classic: true}
}

// hasClassic reports whether the ladder ends in a raw-copy rung.
func (d hookDef) hasClassic() bool {
	for _, r := range d.rungs {
		if r.classic {
			return true
		}
	}
	return false
}

// hookDefs is the table of every hook the loader knows, in report order.
func hookDefs(cfg Config) []hookDef {
	defs := []hookDef{{
		stage: StageIoctl, event: "ioctl",
		rungs: []rung{
			one(famSyscalls, "fentry_drm_ioctl", "fexit_drm_ioctl"),
			one(famSyscalls, "tp_sys_enter_ioctl", "tp_sys_exit_ioctl"),
			one(famSyscalls, "raw_sys_enter", "raw_sys_exit"),
		},
	}}
	for i, f := range cfg.BOValidationFuncs {
		defs = append(defs, hookDef{stage: StageBOValidation, event: f, rungs: []rung{{
			family: famFuncs, progs: []string{"fentry_bo_validate", "fexit_bo_validate"},
			attachTo: f, funcID: uint16(i),
		}}})
	}
	sched := []struct{ stage, ev string }{
		{StageJobQueue, "drm_sched_job_queue"},
		{StageJobQueue, "drm_sched_job"},
		{StageJobDependency, "drm_sched_job_add_dep"},
		{StageJobDependency, "drm_sched_job_unschedulable"},
		{StageJobDependency, "drm_sched_job_wait_dep"},
		{StageJobRun, "drm_sched_job_run"},
		{StageJobRun, "drm_run_job"},
		{StageJobDone, "drm_sched_job_done"},
		{StageJobDone, "drm_sched_process_job"},
	}
	for _, s := range sched {
		defs = append(defs, hookDef{stage: s.stage, event: s.ev, rungs: []rung{
			one(famSched, "tpbtf_"+s.ev),
			one(famSched, "rawtp_"+s.ev),
			rawCopy(famSched, s.ev),
		}})
	}
	for i, f := range cfg.RunJobFuncs {
		defs = append(defs, hookDef{stage: StageRunJobEnd, event: f, rungs: []rung{{
			family: famFuncs, progs: []string{"fexit_run_job"}, attachTo: f, funcID: uint16(i),
		}}})
	}
	// dma_fence_enable_signal and dma_fence_destroy are not hooked: the assembler uses
	// neither, and both run for every fence of the host (3 of a 6.17 job's 15 hook runs
	// were its fences' destroys; BENCHMARKS.md "Unused fence events").
	for _, ev := range []string{"init", "emit", "signaled", "wait_start", "wait_end"} {
		defs = append(defs, hookDef{stage: StageDMAFence, event: "dma_fence_" + ev, rungs: []rung{
			one(famFence, "tpbtf_dma_fence_"+ev),
			one(famFence, "rawtp_dma_fence_"+ev),
			one(famFence, "tp_dma_fence_"+ev),
		}})
	}
	for _, ev := range []string{"irq_handler_entry", "irq_handler_exit"} {
		defs = append(defs, hookDef{stage: StageIRQ, event: ev, rungs: []rung{
			one(famIRQ, "tpbtf_"+ev),
			one(famIRQ, "rawtp_"+ev),
			one(famIRQ, "tp_"+ev),
		}})
	}
	// Drivers' own events: the event table's hooks, tp_btf (bpf/drivers.c) > the classic
	// tracepoint's raw entry (driver_hooks.h).
	for _, e := range eventdef.Hooks() {
		defs = append(defs, hookDef{stage: e.Driver, event: e.Hook.Event, rungs: []rung{
			one(famDrivers, e.Hook.BTFProgram()),
			rawCopy(famDrivers, e.Hook.Event),
		}})
	}
	for _, ev := range []string{"sched_process_exec", "sched_process_exit"} {
		defs = append(defs, hookDef{stage: StageProcess, event: ev, rungs: []rung{
			one(famSyscalls, "tpbtf_"+ev),
			one(famSyscalls, "rawtp_"+ev),
		}})
	}
	return defs
}
