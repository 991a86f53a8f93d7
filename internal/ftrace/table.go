// The one table of kernel facts this decoder relies on: which event names exist in which
// kernel generation, which Kind each becomes, and the exact print format of every
// generation, with where each fact comes from. Nothing about kernels lives elsewhere.
//
// Sources are the kernel-history files in testdata/kernel-tracepoints (a test checks that
// every format they list is here) and the real lines of testdata/captures at the repository
// root. "commit" means the commit named in those files.

package ftrace

import "github.com/ghostdriver/ghostdriver/internal/event"

// format is one print format of an event family: the TP_printk string verbatim (or, for
// syscalls in tracefs, the text the kernel's syscall printer writes), and the printk
// arguments in order, named by the Event field they fill (fields.go: argNames).
type format struct {
	printk string
	args   string
	src    string
}

// family is a set of events that share their print formats across generations.
type family struct {
	name    string
	formats []format
}

// eventSpec is one event name as it appears in a trace line.
type eventSpec struct {
	name       string     // as printed after the timestamp
	tracepoint string     // Event.Name: the tracepoint's own name, when the line prints another
	kind       event.Kind // KindUnknown: known, deliberately not decoded (counted in Unknown)
	driver     string     // Event.Driver for driver-specific events
	fam        *family    // nil for markers and for known-but-unused events
	note       string     // the source, and why, for the ones not decoded
}

var (
	// gpu_scheduler_key_events_history.txt (drm/scheduler/gpu_scheduler_trace.h).
	famSchedJob = &family{"drm_sched job", []format{
		{"entity=%p, id=%llu, fence=%p, ring=%s, job count:%u, hw job count:%d",
			"entity id fence ring _ _", "ea2c59f2 (2018) .. 64dc7557 (2022); drm_run_job since 6913abff (2020)"},
		{"dev=%s, entity=%p, id=%llu, fence=%p, ring=%s, job count:%u, hw job count:%d",
			"dev entity id fence ring _ _", "312a2ebb (2025-05)"},
		{"dev=%s, id=%llu, fence=%llu:%llu, ring=%s, job count:%u, hw job count:%d",
			"dev id fctx fseq ring _ _", "d6319892 (2025-05)"},
		{"dev=%s, id=%llu, fence=%llu:%llu, ring=%s, job count:%u, hw job count:%d, client_id:%llu",
			"dev id fctx fseq ring _ _ client", "5fe9e6aa, def54f40 (6.17 names)"},
		{"dev=%s, fence=%llu:%llu, ring=%s, job count:%u, hw job count:%d, client_id:%llu",
			"dev fctx fseq ring _ _ client", "0d27480e (drm_sched_job.id removed)"},
		// Unmerged mid-2024 RFC (v5/v6 of the tracepoint rework), real amdgpu lines in
		// captures/snippets_real_lines.txt S2; the verbs are inferred from the printed text.
		{"id=%llu, fence=(context:%llu, seqno:%llu), ring=%s, job count:%u, hw job count:%d, dependencies:%s",
			"id fctx fseq ring _ _ _", "RFC 2024, snippets S2 drm_sched_job"},
		{"dev=%s, id=%llu, fence=(context:%llu, seqno:%llu), ring=%s, job count:%u, hw job count:%d",
			"dev id fctx fseq ring _ _", "RFC 2024, snippets S2 drm_run_job"},
	}}
	famSchedDone = &family{"drm_sched done", []format{
		{"fence=%p signaled", "fence", "ea2c59f2 (2018) .. 6.16"},
		{"fence=%llu:%llu signaled", "fctx fseq", "d6319892, def54f40 (6.17)"},
	}}
	famSchedDep = &family{"drm_sched dependency", []format{
		{"job ring=%s, id=%llu, depends fence=%p, context=%llu, seq=%u",
			"ring id _ dctx dseq", "9c27cdd1 (2018), 64dc7557 (2022)"},
		{"fence=%llu:%llu, id=%llu depends on unsignalled fence=%llu:%llu",
			"fctx fseq id dctx dseq", "d6319892 (wait_dep), def54f40 (unschedulable)"},
		{"fence=%llu:%llu, id=%llu depends on fence=%llu:%llu",
			"fctx fseq id dctx dseq", "8d74846d (add_dep)"},
		{"fence=%llu:%llu depends on fence=%llu:%llu",
			"fctx fseq dctx dseq", "0d27480e (add_dep)"},
		{"fence=%llu:%llu depends on unsignalled fence=%llu:%llu",
			"fctx fseq dctx dseq", "0d27480e (unschedulable)"},
	}}

	// amdgpu_key_events_history.txt (amdgpu_trace.h); context/seqno are the scheduler's
	// finished fence. sched_job is a pointer before 8cdd1159 and an id after: both JobID.
	famAmdgpuJob = &family{"amdgpu job", []format{
		{"adev=%p, sched_job=%p, first ib=%p, sched fence=%p, ring name:%s, num_ibs:%u",
			"_ id _ fence ringname _", "drm-kmod 08780cff (≤4.10)"},
		{"adev=%p, sched_job=%p, first ib=%p, sched fence=%p, ring name=%s, num_ibs=%u",
			"_ id _ fence ringname _", "3a20faec (2017-02)"},
		{"adev=%p, sched_job=%p, first ib=%p, sched fence=%p, timeline=%s, context=%u, seqno=%u, ring name=%s, num_ibs=%u",
			"_ id _ fence timeline fctx fseq ringname _", "60878fff (2017-02)"},
		// Tried before the %p forms below: an 8- or 16-digit id would also read as a pointer.
		{"adev=%p, sched_job=%llu, first_ib=%p, sched_fence=%p, ring_name=%s, num_ibs=%u",
			"_ id _ fence ringname _", "8cdd1159 (2017-03)"},
		{"adev=%p, sched_job=%llu, first_ib=%p, sched_fence=%p, timeline=%s, context=%u, seqno=%u, ring_name=%s, num_ibs=%u",
			"_ id _ fence timeline fctx fseq ringname _", "8cdd1159 (2017-03)"},
		{"adev=%p, sched_job=%p, first_ib=%p, sched_fence=%p, ring_name=%s, num_ibs=%u",
			"_ id _ fence ringname _", "6c0f1e7d (2017-03)"},
		{"adev=%p, sched_job=%p, first_ib=%p, sched_fence=%p, timeline=%s, context=%u, seqno=%u, ring_name=%s, num_ibs=%u",
			"_ id _ fence timeline fctx fseq ringname _", "6c0f1e7d (2017-03)"},
		{"sched_job=%llu, sched_fence=%p, ring_name=%s, num_ibs=%u",
			"id fence ringname _", "cf5e804d (2017-03)"},
		{"sched_job=%llu, timeline=%s, context=%u, seqno=%u, ring_name=%s, num_ibs=%u",
			"id timeline fctx fseq ringname _", "cf5e804d/08436816 (4.11) .. 2025; ring_name a pointer ≤5.4, a name since 20785888 (5.5)"},
		{"timeline=%s, context=%u, seqno=%u, ring_name=%s, num_ibs=%u",
			"timeline fctx fseq ringname _", "4234815a (2025-05)"},
		{"timeline=%s, fence=%llu:%llu, ring_name=%s, num_ibs=%u",
			"timeline fctx fseq ringname _", "02e0e816 (2025-05)"},
	}}

	// dma_fence_trace_versions.md: one print format in every merged version (V0..V5),
	// 32-bit context and seqno.
	famFence = &family{"dma_fence", []format{
		{"driver=%s timeline=%s context=%u seqno=%u", "driver timeline fctx fseq", "fence.h ≤4.9, dma_fence.h 4.10..7.1"},
	}}
	famFenceReason = &family{"dma_fence reason", []format{
		{"driver=%s timeline=%s context=%u seqno=%u reason=%s", "driver timeline fctx fseq reason",
			"unmerged RFC intel-lab-lkp 1cdc9da5 (2024); snippets S3"},
	}}
	famFenceWaitOn = &family{"fence_annotate_wait_on", []format{
		{"driver=%s timeline=%s context=%u seqno=%u waits on driver=%s timeline=%s context=%u seqno=%u",
			"driver timeline fctx fseq _ _ dctx dseq", "fence.h ≤4.9 (V0)"},
	}}

	// i915_key_events_history.txt: every layout of the i915 request event classes, from
	// drm-kmod (4.11..5.7 era) and i915-sriov-dkms (LTS 5.15..6.17). Fence = {ctx, seqno};
	// the engine is "ring=%u" before 2018 and "engine=class:instance" after.
	famI915Request = &family{"i915 request", []format{
		{"dev=%u, ring=%u, seqno=%u", "dev ring fseq", "drm-kmod 08780cff (≤4.10); snippets S7 (3.x)"},
		{"dev=%u, ring=%u, seqno=%u, flags=%x", "dev ring fseq _", "drm-kmod 08780cff i915_gem_ring_dispatch"},
		{"dev=%u, ring=%u, ctx=%u, seqno=%u, global=%u", "dev ring fctx fseq _", "cf17d070 (2017-02); snippets S8"},
		{"dev=%u, ring=%u, ctx=%u, seqno=%u, flags=0x%x", "dev ring fctx fseq _", "184d011b (2017-02)"},
		{"dev=%u, ring=%u, ctx=%u, seqno=%u, global=%u, port=%u", "dev ring fctx fseq _ _", "edebf871 (2017-02); snippets S8"},
		{"dev=%u, hw_id=%u, ring=%u, ctx=%u, seqno=%u, global=%u", "dev _ ring fctx fseq _", "515e4495 (2017-12)"},
		{"dev=%u, hw_id=%u, ring=%u, ctx=%u, seqno=%u, flags=0x%x", "dev _ ring fctx fseq _", "515e4495 (2017-12)"},
		{"dev=%u, hw_id=%u, ring=%u, ctx=%u, seqno=%u, global=%u, port=%u", "dev _ ring fctx fseq _ _", "515e4495 (2017-12)"},
		{"dev=%u, hw_id=%u, ring=%u, ctx=%u, seqno=%u, global=%u, blocking=%u, flags=0x%x", "dev _ ring fctx fseq _ _ _", "9a895192 (2018-02)"},
		{"dev=%u, hw_id=%u, ring=%u, ctx=%u, seqno=%u, prio=%u, global=%u, port=%u", "dev _ ring fctx fseq _ _ _", "5c3a5089 (2018-05)"},
		{"dev=%u, hw_id=%u, ring=%u, ctx=%u, seqno=%u, global=%u, completed?=%u", "dev _ ring fctx fseq _ _", "5c3a5089 (2018-05)"},
		{"dev=%u, hw_id=%u, engine=%u:%u, ctx=%u, seqno=%u, flags=0x%x", "dev _ class inst fctx fseq _", "26b7a10e (2018-05)"},
		{"dev=%u, hw_id=%u, engine=%u:%u, ctx=%u, seqno=%u, global=%u", "dev _ class inst fctx fseq _", "26b7a10e (2018-05)"},
		{"dev=%u, hw_id=%u, engine=%u:%u, ctx=%u, seqno=%u, prio=%u, global=%u, port=%u", "dev _ class inst fctx fseq _ _ _", "26b7a10e (2018-05)"},
		{"dev=%u, hw_id=%u, engine=%u:%u, ctx=%u, seqno=%u, global=%u, completed?=%u", "dev _ class inst fctx fseq _ _", "26b7a10e (2018-05)"},
		{"dev=%u, hw_id=%u, engine=%u:%u, ctx=%u, seqno=%u, global=%u, blocking=%u, flags=0x%x", "dev _ class inst fctx fseq _ _ _", "26b7a10e (2018-05)"},
		// ctx is %u in f6ff37c5 and %llu from 5e4d21da (2018-06): the same text.
		{"dev=%u, engine=%u:%u, hw_id=%u, ctx=%llu, seqno=%u, flags=0x%x", "dev class inst _ fctx fseq _", "f6ff37c5, 5e4d21da (2018)"},
		{"dev=%u, engine=%u:%u, hw_id=%u, ctx=%llu, seqno=%u, global=%u", "dev class inst _ fctx fseq _", "f6ff37c5, 5e4d21da (2018); snippets S8"},
		{"dev=%u, engine=%u:%u, hw_id=%u, ctx=%llu, seqno=%u, prio=%u, global=%u, port=%u", "dev class inst _ fctx fseq _ _ _", "f6ff37c5, 5e4d21da (2018)"},
		{"dev=%u, engine=%u:%u, hw_id=%u, ctx=%llu, seqno=%u, global=%u, completed?=%u", "dev class inst _ fctx fseq _ _", "f6ff37c5, 5e4d21da (2018)"},
		{"dev=%u, engine=%u:%u, hw_id=%u, ctx=%llu, seqno=%u, global=%u, blocking=%u, flags=0x%x", "dev class inst _ fctx fseq _ _ _", "f6ff37c5, 5e4d21da (2018)"},
		{"dev=%u, engine=%u:%u, hw_id=%u, ctx=%llu, seqno=%u", "dev class inst _ fctx fseq", "cd76e753 (2019-02)"},
		{"dev=%u, engine=%u:%u, hw_id=%u, ctx=%llu, seqno=%u, prio=%u, port=%u", "dev class inst _ fctx fseq _ _", "cd76e753 (2019-02)"},
		{"dev=%u, engine=%u:%u, hw_id=%u, ctx=%llu, seqno=%u, completed?=%u", "dev class inst _ fctx fseq _", "cd76e753 (2019-02)"},
		{"dev=%u, engine=%u:%u, hw_id=%u, ctx=%llu, seqno=%u, blocking=%u, flags=0x%x", "dev class inst _ fctx fseq _ _", "cd76e753 (2019-02)"},
		{"dev=%u, engine=%u:%u, ctx=%llu, seqno=%u", "dev class inst fctx fseq", "38394bc2 (2019-10)"},
		{"dev=%u, engine=%u:%u, ctx=%llu, seqno=%u, flags=0x%x", "dev class inst fctx fseq _", "38394bc2 (2019-10)"},
		// prio is %u in 38394bc2 and %d from 94eed8ff (2020-01).
		{"dev=%u, engine=%u:%u, ctx=%llu, seqno=%u, prio=%d, port=%u", "dev class inst fctx fseq _ _", "38394bc2, 94eed8ff"},
		{"dev=%u, engine=%u:%u, ctx=%llu, seqno=%u, completed?=%u", "dev class inst fctx fseq _", "38394bc2 (2019-10)"},
		{"dev=%u, engine=%u:%u, ctx=%llu, seqno=%u, tail=%u", "dev class inst fctx fseq _", "i915-sriov-dkms df2b824e (LTS 5.15..6.17)"},
	}}

	// xe_key_events_history.txt (6.17) and two earlier xe_trace.h read from the stored
	// index: 6.8 (id 78286750: no dev=, no lrc_seqno), 2024 lrc_seqno patch (id 17129111307),
	// dev= without gt= (id 18550292). The job's only printed identity is its fence pointer.
	famXeJob = &family{"xe sched job", []format{
		{"fence=%p, seqno=%u, guc_id=%d, batch_addr=0x%012llx, guc_state=0x%x, flags=0x%x, error=%d",
			"jobfence fseq _ _ _ _ _", "xe_trace.h 6.8 (index 78286750)"},
		{"fence=%p, seqno=%u, lrc_seqno=%u, guc_id=%d, batch_addr=0x%012llx, guc_state=0x%x, flags=0x%x, error=%d",
			"jobfence fseq _ _ _ _ _ _", "lrc_seqno patch 2024 (index 17129111307)"},
		{"dev=%s, fence=%p, seqno=%u, lrc_seqno=%u, guc_id=%d, batch_addr=0x%012llx, guc_state=0x%x, flags=0x%x, error=%d",
			"dev jobfence fseq _ _ _ _ _ _", "xe_trace.h with dev= (index 18550292)"},
		{"dev=%s, fence=%p, seqno=%u, lrc_seqno=%u, gt=%u, guc_id=%d, batch_addr=0x%012llx, guc_state=0x%x, flags=0x%x, error=%d",
			"dev jobfence fseq _ _ _ _ _ _ _", "55defc10 (6.17)"},
	}}
	famXeHwFence = &family{"xe hw fence", []format{
		{"ctx=0x%016llx, fence=%p, seqno=%u", "fctx fence fseq", "xe_trace.h 6.8 (index 78286750)"},
		{"dev=%s, ctx=0x%016llx, fence=%p, seqno=%u", "dev fctx fence fseq", "55defc10 (6.17), index 18550292"},
	}}

	// msm_gpu_trace.h (TRACE_SYSTEM drm_msm_gpu): the same three formats at 0b77b970
	// (other_drivers_and_core.md) and in the Debian linux-source trees of 6.1.172,
	// 6.12.117, 7.2.13 and 7.3.4 (testdata/gpu-stamps/stamp_events_by_version.txt: fields
	// and formats per version, checked by msm_test.go).
	// id (submit->ident) links the three events; pid is pid_nr(submit->pid), the
	// submitting thread (msm_gem_submit.c: get_pid(task_pid(current))). flush: ticks =
	// the always-on counter read by the CPU; retired: elapsed (ns, 19.2 MHz assumed),
	// mhz (core clock from CP cycles), start/end = the counter written by the GPU.
	famMsm = &family{"msm submit", []format{
		{"id=%d pid=%d ring=%d bos=%d cmds=%d", "id submitter ring _ _", "msm_gpu_submit"},
		{"id=%d pid=%d ring=%d:%d ticks=%lld", "id submitter ring fseq gputicks", "msm_gpu_submit_flush"},
		{"id=%d pid=%d ring=%d:%d elapsed=%lld ns mhz=%lld start=%lld end=%lld", "id submitter ring fseq _ _ gpustart gpuend", "msm_gpu_submit_retired"},
	}}

	// other_drivers_and_core.md "irq / syscalls".
	famIoctlEnter = &family{"sys_enter_ioctl", []format{
		{"fd: 0x%08lx, cmd: 0x%08lx, arg: 0x%08lx", "fd cmd arg", "syscalls print fmt (trace-cmd, perf)"},
	}}
	famIoctlExit = &family{"sys_exit_ioctl", []format{
		{"0x%lx", "ret", "syscalls print fmt (trace-cmd, perf)"},
	}}
	// tracefs prints syscall events with kernel/trace/trace_syscalls.c print_syscall_enter:
	// "name(" then "arg: %lx" joined by ", " (hex without 0x; 6.1 guest) and ")"; some
	// kernels print "0x%lx" (7.3 guest), which the hex verb accepts; the verbose trace
	// option puts the C type before each name.
	famIoctlEnterText = &family{"sys_ioctl(", []format{
		{"fd: %lx, cmd: %lx, arg: %lx)", "fd cmd arg", "print_syscall_enter"},
		{"unsigned int fd: %lx, unsigned int cmd: %lx, unsigned long arg: %lx)", "fd cmd arg", "print_syscall_enter, verbose"},
	}}
	famIoctlExitText = &family{"sys_ioctl ->", []format{
		{"0x%lx", "ret", "print_syscall_exit \"%s -> 0x%lx\""},
	}}
	famRawEnter = &family{"raw sys_enter", []format{
		{"NR %ld (%lx, %lx, %lx, %lx, %lx, %lx)", "nr fd cmd arg _ _ _", "raw_syscalls print fmt"},
	}}
	famRawExit = &family{"raw sys_exit", []format{
		{"NR %ld = %ld", "nr ret", "raw_syscalls print fmt"},
	}}
	famIRQEntry = &family{"irq_handler_entry", []format{{"irq=%d name=%s", "irq irqname", "irq.h"}}}
	famIRQExit  = &family{"irq_handler_exit", []format{{"irq=%d ret=%s", "irq irqret", "irq.h"}}}
)

// ioctlNR is the ioctl syscall number raw_syscalls events are filtered on. The text does
// not say the architecture; x86-64 is assumed (arm64 would be 29).
const ioctlNR = 16

// events is every event name the decoder knows.
var events = []eventSpec{
	// gpu_scheduler: ≤6.16 names, then the 6.17 names of def54f40 "drm/sched: Cleanup event names".
	{name: "drm_sched_job", kind: event.JobQueue, fam: famSchedJob, note: "≤6.16"},
	{name: "drm_run_job", kind: event.JobRun, fam: famSchedJob, note: "5.7 (6913abff) ..6.16"},
	{name: "drm_sched_process_job", kind: event.JobDone, fam: famSchedDone, note: "≤6.16"},
	{name: "drm_sched_job_wait_dep", kind: event.JobDependency, fam: famSchedDep, note: "4.19 (9c27cdd1) ..6.16"},
	{name: "drm_sched_job_queue", kind: event.JobQueue, fam: famSchedJob, note: "6.17+"},
	{name: "drm_sched_job_run", kind: event.JobRun, fam: famSchedJob, note: "6.17+"},
	{name: "drm_sched_job_done", kind: event.JobDone, fam: famSchedDone, note: "6.17+"},
	{name: "drm_sched_job_add_dep", kind: event.JobDependency, fam: famSchedDep, note: "6.17+ (8d74846d)"},
	{name: "drm_sched_job_unschedulable", kind: event.JobDependency, fam: famSchedDep, note: "6.17+"},

	// dma_fence (≥4.10) and fence (≤4.9); RFC events of 2024.
	{name: "dma_fence_init", kind: event.FenceInit, fam: famFence},
	{name: "dma_fence_emit", kind: event.FenceEmit, fam: famFence},
	{name: "dma_fence_enable_signal", kind: event.FenceEnableSignal, fam: famFence},
	{name: "dma_fence_signaled", kind: event.FenceSignaled, fam: famFence},
	{name: "dma_fence_wait_start", kind: event.FenceWaitStart, fam: famFence},
	{name: "dma_fence_wait_end", kind: event.FenceWaitEnd, fam: famFence},
	{name: "dma_fence_destroy", kind: event.FenceDestroy, fam: famFence},
	{name: "fence_init", kind: event.FenceInit, fam: famFence, note: "≤4.9"},
	{name: "fence_emit", kind: event.FenceEmit, fam: famFence, note: "≤4.9"},
	{name: "fence_enable_signal", kind: event.FenceEnableSignal, fam: famFence, note: "≤4.9"},
	{name: "fence_signaled", kind: event.FenceSignaled, fam: famFence, note: "≤4.9"},
	{name: "fence_wait_start", kind: event.FenceWaitStart, fam: famFence, note: "≤4.9"},
	{name: "fence_wait_end", kind: event.FenceWaitEnd, fam: famFence, note: "≤4.9"},
	{name: "fence_destroy", kind: event.FenceDestroy, fam: famFence, note: "≤4.9"},
	// "fence waits on f1": Fence = the waiting fence, Dep = f1.
	{name: "fence_annotate_wait_on", kind: event.JobDependency, fam: famFenceWaitOn, note: "≤4.9"},
	// reason goes to Event.Text.
	{name: "dma_fence_sync_to", kind: event.FenceUsedAsDep, fam: famFenceReason, note: "RFC 2024"},
	{name: "dma_fence_used_as_dependency", kind: event.FenceUsedAsDep, fam: famFenceReason, note: "RFC 2024 v2/v3"},

	// amdgpu.
	{name: "amdgpu_cs_ioctl", kind: event.JobQueue, driver: "amdgpu", fam: famAmdgpuJob},
	{name: "amdgpu_sched_run_job", kind: event.JobRun, driver: "amdgpu", fam: famAmdgpuJob},
	{name: "amdgpu_cs", note: "per-IB submission detail (bo_list, ring index, dw); no job identity"},
	{name: "amdgpu_vm_flush", note: "VM flush on a ring; no job identity"},
	{name: "amdgpu_vm_grab_id", note: "VMID allocation; no job identity"},
	{name: "amdgpu_bo_list_set", note: "BO list contents; no job identity"},
	{name: "amdgpu_ib_pipe_sync", note: "same-ring pipe sync at run time; drm_sched_job_wait_dep carries the dependency"},
	{name: "amdgpu_ttm_bo_move", note: "BO migration; no job identity"},

	// i915 (no DRM scheduler): the request life cycle, old i915_gem_request_* names first.
	{name: "i915_gem_ring_dispatch", kind: event.I915RequestQueue, driver: "i915", fam: famI915Request, note: "≤4.10, renamed i915_gem_request_queue by 184d011b"},
	{name: "i915_gem_request_queue", kind: event.I915RequestQueue, driver: "i915", fam: famI915Request},
	{name: "i915_gem_request_add", kind: event.I915RequestAdd, driver: "i915", fam: famI915Request},
	{name: "i915_gem_request_submit", kind: event.I915RequestSubmit, driver: "i915", fam: famI915Request},
	{name: "i915_gem_request_in", kind: event.I915RequestIn, driver: "i915", fam: famI915Request},
	{name: "i915_gem_request_out", kind: event.I915RequestOut, driver: "i915", fam: famI915Request},
	{name: "i915_gem_request_retire", kind: event.I915RequestRetire, driver: "i915", fam: famI915Request},
	{name: "i915_gem_request_wait_begin", kind: event.I915RequestWaitBegin, driver: "i915", fam: famI915Request, note: "snippets S7"},
	{name: "i915_gem_request_wait_end", kind: event.I915RequestWaitEnd, driver: "i915", fam: famI915Request, note: "snippets S7"},
	{name: "i915_request_queue", kind: event.I915RequestQueue, driver: "i915", fam: famI915Request, note: "since 9a895192 (2018-02)"},
	{name: "i915_request_add", kind: event.I915RequestAdd, driver: "i915", fam: famI915Request},
	{name: "i915_request_submit", kind: event.I915RequestSubmit, driver: "i915", fam: famI915Request},
	{name: "i915_request_in", kind: event.I915RequestIn, driver: "i915", fam: famI915Request},
	{name: "i915_request_out", kind: event.I915RequestOut, driver: "i915", fam: famI915Request},
	{name: "i915_request_retire", kind: event.I915RequestRetire, driver: "i915", fam: famI915Request},
	{name: "i915_request_wait_begin", kind: event.I915RequestWaitBegin, driver: "i915", fam: famI915Request},
	{name: "i915_request_wait_end", kind: event.I915RequestWaitEnd, driver: "i915", fam: famI915Request},
	{name: "i915_request_execute", note: "no Kind: between submit and in; not on the critical path we tile"},
	{name: "i915_gem_request_execute", note: "as i915_request_execute"},
	{name: "i915_request_guc_submit", note: "GuC backend detail (i915-sriov-dkms)"},
	{name: "intel_engine_notify", note: "breadcrumb interrupt, no ctx: seqno alone is not a request key"},
	{name: "i915_gem_request_notify", note: "as intel_engine_notify (≤4.10)"},
	{name: "i915_gem_request_complete", note: "3.x completion notify (snippets S7), no ctx"},

	// xe.
	{name: "xe_sched_job_create", kind: event.XeSchedJobCreate, driver: "xe", fam: famXeJob},
	{name: "xe_sched_job_exec", kind: event.XeSchedJobExec, driver: "xe", fam: famXeJob},
	{name: "xe_sched_job_run", kind: event.XeSchedJobRun, driver: "xe", fam: famXeJob},
	{name: "xe_sched_job_free", kind: event.XeSchedJobFree, driver: "xe", fam: famXeJob},
	{name: "xe_hw_fence_create", kind: event.XeHwFenceCreate, driver: "xe", fam: famXeHwFence},
	{name: "xe_hw_fence_signal", kind: event.XeHwFenceSignal, driver: "xe", fam: famXeHwFence},
	{name: "xe_hw_fence_free", kind: event.XeHwFenceFree, driver: "xe", fam: famXeHwFence, note: "6.8 (index 78286750)"},
	{name: "xe_hw_fence_try_signal", note: "polling attempt, not a state change"},
	{name: "xe_exec_queue_submit", note: "exec-queue state, no job identity"},
	{name: "xe_exec_queue_create", note: "exec-queue state, no job identity"},
	{name: "xe_sched_msg_add", note: "scheduler message, no job identity"},
	{name: "xe_sched_msg_recv", note: "scheduler message, no job identity"},

	// msm (Adreno).
	{name: "msm_gpu_submit", kind: event.MsmSubmit, driver: "msm", fam: famMsm},
	{name: "msm_gpu_submit_flush", kind: event.MsmSubmitFlush, driver: "msm", fam: famMsm},
	{name: "msm_gpu_submit_retired", kind: event.MsmSubmitRetired, driver: "msm", fam: famMsm},

	// Other drivers that also emit gpu_scheduler/dma_fence events (which we decode).
	{name: "lima_task_submit", note: "duplicates drm_sched_job for lima"},
	{name: "lima_task_run", note: "duplicates drm_run_job for lima"},
	{name: "v3d_submit_cl", note: "v3d uses drm_sched; its own events are not decoded"},
	{name: "virtio_gpu_cmd_queue", note: "virtqueue command, not a job"},
	{name: "virtio_gpu_cmd_response", note: "virtqueue command, not a job"},

	// drm core.
	{name: "drm_vblank_event", note: "display timing; shown by timeline tools, not part of a job"},
	{name: "drm_vblank_event_queued", note: "display timing"},
	{name: "drm_vblank_event_delivered", note: "display timing"},

	// syscalls and interrupts.
	{name: "sys_enter_ioctl", kind: event.IoctlEnter, fam: famIoctlEnter},
	{name: "sys_exit_ioctl", kind: event.IoctlExit, fam: famIoctlExit},
	{name: "sys_ioctl(", tracepoint: "sys_enter_ioctl", kind: event.IoctlEnter, fam: famIoctlEnterText, note: "tracefs syscall printer"},
	{name: "sys_ioctl ->", tracepoint: "sys_exit_ioctl", kind: event.IoctlExit, fam: famIoctlExitText, note: "tracefs syscall printer"},
	{name: "sys_enter", kind: event.IoctlEnter, fam: famRawEnter, note: "raw_syscalls; only NR 16"},
	{name: "sys_exit", kind: event.IoctlExit, fam: famRawExit, note: "raw_syscalls; only NR 16"},
	{name: "irq_handler_entry", kind: event.IRQEntry, fam: famIRQEntry},
	{name: "irq_handler_exit", kind: event.IRQExit, fam: famIRQExit},

	// trace_marker writes: the "print" event (trace-cmd), shown by tracefs as the ip's
	// symbol, tracing_mark_write.
	{name: "print", kind: event.Marker},
	{name: "tracing_mark_write", tracepoint: "print", kind: event.Marker},
}
