// The table: every event name the decoder knows, per kernel generation, with the print
// formats of every generation and where each fact comes from; for drivers' own events,
// also the points they measure and their live hook.
//
// Sources are the kernel-history files in internal/ftrace/testdata/kernel-tracepoints (a
// test checks that every format they list is here) and the real lines of
// testdata/captures at the repository root. "commit" means the commit named in those
// files.

package eventdef

import "github.com/ghostdriver/ghostdriver/internal/event"

var (
	// gpu_scheduler_key_events_history.txt (drm/scheduler/gpu_scheduler_trace.h).
	famSchedJob = &Family{"drm_sched job", []Format{
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
	famSchedDone = &Family{"drm_sched done", []Format{
		{"fence=%p signaled", "fence", "ea2c59f2 (2018) .. 6.16"},
		{"fence=%llu:%llu signaled", "fctx fseq", "d6319892, def54f40 (6.17)"},
	}}
	famSchedDep = &Family{"drm_sched dependency", []Format{
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
	famAmdgpuJob = &Family{"amdgpu job", []Format{
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
	famFence = &Family{"dma_fence", []Format{
		{"driver=%s timeline=%s context=%u seqno=%u", "driver timeline fctx fseq", "fence.h ≤4.9, dma_fence.h 4.10..7.1"},
	}}
	famFenceReason = &Family{"dma_fence reason", []Format{
		{"driver=%s timeline=%s context=%u seqno=%u reason=%s", "driver timeline fctx fseq reason",
			"unmerged RFC intel-lab-lkp 1cdc9da5 (2024); snippets S3"},
	}}
	famFenceWaitOn = &Family{"fence_annotate_wait_on", []Format{
		{"driver=%s timeline=%s context=%u seqno=%u waits on driver=%s timeline=%s context=%u seqno=%u",
			"driver timeline fctx fseq _ _ dctx dseq", "fence.h ≤4.9 (V0)"},
	}}

	// i915_key_events_history.txt: every layout of the i915 request event classes, from
	// drm-kmod (4.11..5.7 era) and i915-sriov-dkms (LTS 5.15..6.17). Fence = {ctx, seqno};
	// the engine is "ring=%u" before 2018 and "engine=class:instance" after.
	famI915Request = &Family{"i915 request", []Format{
		{"dev=%u, ring=%u, seqno=%u", "dev ring fseq", "drm-kmod 08780cff (≤4.10); snippets S7 (3.x); i915_trace.h of 2.6.37..4.x (struct intel_ring_buffer / intel_engine_cs, stored index)"},
		// 2.6.32..2.6.36 i915_trace.h (one ring: no ring field), stored index id 4023458.
		{"dev=%u, seqno=%u", "dev fseq", "i915_trace.h 2.6.3x (index 4023458)"},
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
	famXeJob = &Family{"xe sched job", []Format{
		{"fence=%p, seqno=%u, guc_id=%d, batch_addr=0x%012llx, guc_state=0x%x, flags=0x%x, error=%d",
			"jobfence fseq _ _ _ _ _", "xe_trace.h 6.8 (index 78286750)"},
		{"fence=%p, seqno=%u, lrc_seqno=%u, guc_id=%d, batch_addr=0x%012llx, guc_state=0x%x, flags=0x%x, error=%d",
			"jobfence fseq _ _ _ _ _ _", "lrc_seqno patch 2024 (index 17129111307)"},
		{"dev=%s, fence=%p, seqno=%u, lrc_seqno=%u, guc_id=%d, batch_addr=0x%012llx, guc_state=0x%x, flags=0x%x, error=%d",
			"dev jobfence fseq _ _ _ _ _ _", "xe_trace.h with dev= (index 18550292)"},
		{"dev=%s, fence=%p, seqno=%u, lrc_seqno=%u, gt=%u, guc_id=%d, batch_addr=0x%012llx, guc_state=0x%x, flags=0x%x, error=%d",
			"dev jobfence fseq _ _ _ _ _ _ _", "55defc10 (6.17)"},
	}}
	famXeHwFence = &Family{"xe hw fence", []Format{
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
	famMsm = &Family{"msm submit", []Format{
		{"id=%d pid=%d ring=%d bos=%d cmds=%d", "id submitter ring _ _", "msm_gpu_submit"},
		{"id=%d pid=%d ring=%d:%d ticks=%lld", "id submitter ring fseq gputicks", "msm_gpu_submit_flush"},
		{"id=%d pid=%d ring=%d:%d elapsed=%lld ns mhz=%lld start=%lld end=%lld", "id submitter ring fseq _ _ gpustart gpuend", "msm_gpu_submit_retired"},
	}}

	// virtio_gpu: virtgpu_trace.h (TRACE_SYSTEM virtio_gpu), event class virtio_gpu_cmd, read
	// from the guests' own format files (testdata/captures/virgl/virgl-*/formats.txt).
	// 6.1 (bookworm 6.1.172): TP_PROTO(vq, hdr), name a const char *; 7.3 (trixie-backports
	// 7.3.4): TP_PROTO(vq, hdr, seqno), name a __string, num_free= and seqno= added. dev =
	// vq->vdev->index, vq = vq->index, type/flags/fence_id/ctx_id = the command's
	// virtio_gpu_ctrl_hdr, seqno = vbuf->seqno (the queue's command counter, from 1). The
	// longer format first: the 6.1 one would stop at ctx_id.
	famVirtioCmd = &Family{"virtio_gpu cmd", []Format{
		{"vdev=%d vq=%u name=%s type=0x%x flags=0x%x fence_id=%llu ctx_id=%u num_free=%u seqno=%u",
			"dev ring _ cmd _ fseq _ _ id", "virtgpu_trace.h 7.3.4 (trixie-backports; virgl-7.3/formats.txt)"},
		{"vdev=%d vq=%u name=%s type=0x%x flags=0x%x fence_id=%llu ctx_id=%u",
			"dev ring _ cmd _ fseq _", "virtgpu_trace.h 6.1.172 (bookworm; virgl-6.1/formats.txt)"},
	}}
	// v3d_trace.h (TRACE_SYSTEM v3d): read at torvalds/linux 135c5504 (4.18, the driver's
	// first version: v3d_submit_cl, v3d_reset_begin/_end), a 5.x tree with TFU and CSD
	// (index 15950616633: adds v3d_submit_cl_ioctl, the four _irq events, v3d_submit_tfu
	// (_ioctl), v3d_submit_csd(_ioctl), v3d_cache_clean_begin/_end) and a 6.8+ tree with
	// CPU jobs (intel-lab-lkp 641b5988: adds v3d_submit_cpu_ioctl, v3d_cpu_job_begin/_end).
	// Every event kept its format from the version that added it. dev = the DRM minor
	// index; seqno = the job's hardware fence seqno (v3d_fence_create:
	// ++queue.emit_seqno, one counter per queue).
	famV3DSubmitCL = &Family{"v3d submit_cl", []Format{
		{"dev=%u, %s, seqno=%llu, 0x%08x..0x%08x", "dev ring fseq _ _", "v3d_trace.h 4.18 (135c5504) .. 6.8+ (641b5988), vc4_trace.h (044feb97) vc4_submit_cl: ring = BCL (bin) or RCL (render)"},
	}}
	famV3DSeqno = &Family{"v3d seqno", []Format{
		{"dev=%u, seqno=%llu", "dev fseq", "v3d_trace.h 5.x (index 15950616633) .. 6.8+ (641b5988): v3d_submit_tfu/_csd, v3d_bcl/rcl/tfu/csd_irq; vc4_trace.h (044feb97): vc4_bcl/rcl_end_irq"},
	}}
	famV3DDev = &Family{"v3d dev", []Format{
		{"dev=%u", "dev", "v3d_trace.h 5.x .. 6.8+: v3d_cache_clean_begin/_end"},
	}}

	// pvr_trace.h (TRACE_SYSTEM pvr, drivers/gpu/drm/imagination): read at torvalds/linux
	// 680d49d8 and b4d85f86 (2026, the header's first versions: the same formats; only
	// hwrt_addr's assignment differs). job = the struct pvr_job pointer, the only
	// identity the three job events share; ctx = the pvr_context (a submission stream);
	// done_seqno = the job's done fence seqno (a per-queue counter, no context printed).
	famPVRCreate = &Family{"pvr job_create", []Format{
		{"pvr_dev=%p ctx=%p fw_obj=%p fw_addr=0x%x hwrt_addr=0x%x job=%p job_type=%s sync_op_count=%u",
			"_ entity _ _ _ id ring _", "pvr_trace.h 680d49d8, b4d85f86 pvr_job_create"},
	}}
	famPVRSubmitFW = &Family{"pvr job_submit_fw", []Format{
		{"job=%p done_seqno=%u", "id fseq", "pvr_trace.h 680d49d8, b4d85f86 pvr_job_submit_fw"},
	}}
	famPVRDone = &Family{"pvr job_done", []Format{
		{"job=%p", "id", "pvr_trace.h 680d49d8, b4d85f86 pvr_job_done"},
	}}

	// ivpu_trace.h (TRACE_SYSTEM vpu, drivers/accel/ivpu): read at torvalds/linux
	// 28eb75e1 (2024 header: events pm, job, jsm). job's first argument is the step the
	// call site names (ivpu_job.c of the trees with the header, stored index 752155383 and
	// 326584570: "create" in ivpu_job_create, before the job id is allocated, so job:0;
	// "submit" in ivpu_job_submit after the doorbell is rung; "done" in
	// ivpu_job_signal_and_destroy right after the done fence's dma_fence_signal).
	// context = the file's NPU context id, engine = the engine index, job = job_id
	// (device-wide, cyclic).
	famIVPUJob = &Family{"ivpu job", []Format{
		{"%s context:%d engine:%d job:%d", "reason entity ring id", "ivpu_trace.h 28eb75e1"},
	}}

	// include/trace/events/amdxdna.h (TRACE_SYSTEM amdxdna): xdna_job prints the drm_sched
	// job's finished fence (s_fence->finished context and seqno), the hardware context's
	// name, the job's per-context seq and the step the call site names. op= was added
	// later (torvalds/linux b4d85f86); the stored aie2_ctx.c of 063db451 calls it
	// without op (the earlier format). Steps (aie2_ctx.c 063db451): "sent to device" at
	// the end of run_job (the command is in the firmware's mailbox), "signaled fence" in
	// aie2_sched_notify just before the job's fence is signalled (the firmware's response
	// handler), "job free" in free_job, "job timedout" in the timeout handler; the
	// xdna-driver tree prints "signaling fence" at the same place.
	famXDNAJob = &Family{"amdxdna xdna_job", []Format{
		{"fence=(context:%llu, seqno:%llu), %s seq#:%llu %s, op=%u", "fctx fseq ring _ reason _", "amdxdna.h b4d85f86"},
		{"fence=(context:%llu, seqno:%llu), %s seq#:%llu %s", "fctx fseq ring _ reason", "amdxdna.h before op= (aie2_ctx.c 063db451 calls)"},
	}}

	// other_drivers_and_core.md "irq / syscalls".
	famIoctlEnter = &Family{"sys_enter_ioctl", []Format{
		{"fd: 0x%08lx, cmd: 0x%08lx, arg: 0x%08lx", "fd cmd arg", "syscalls print fmt (trace-cmd, perf)"},
	}}
	famIoctlExit = &Family{"sys_exit_ioctl", []Format{
		{"0x%lx", "ret", "syscalls print fmt (trace-cmd, perf)"},
	}}
	// tracefs prints syscall events with kernel/trace/trace_syscalls.c print_syscall_enter:
	// "name(" then "arg: %lx" joined by ", " (hex without 0x; 6.1 guest) and ")"; some
	// kernels print "0x%lx" (7.3 guest), which the hex verb accepts; the verbose trace
	// option puts the C type before each name.
	famIoctlEnterText = &Family{"sys_ioctl(", []Format{
		{"fd: %lx, cmd: %lx, arg: %lx)", "fd cmd arg", "print_syscall_enter"},
		{"unsigned int fd: %lx, unsigned int cmd: %lx, unsigned long arg: %lx)", "fd cmd arg", "print_syscall_enter, verbose"},
	}}
	famIoctlExitText = &Family{"sys_ioctl ->", []Format{
		{"0x%lx", "ret", "print_syscall_exit \"%s -> 0x%lx\""},
	}}
	famRawEnter = &Family{"raw sys_enter", []Format{
		{"NR %ld (%lx, %lx, %lx, %lx, %lx, %lx)", "nr fd cmd arg _ _ _", "raw_syscalls print fmt"},
	}}
	famRawExit = &Family{"raw sys_exit", []Format{
		{"NR %ld = %ld", "nr ret", "raw_syscalls print fmt"},
	}}
	famIRQEntry = &Family{"irq_handler_entry", []Format{{"irq=%d name=%s", "irq irqname", "irq.h"}}}
	famIRQExit  = &Family{"irq_handler_exit", []Format{{"irq=%d ret=%s", "irq irqret", "irq.h"}}}
)

// IoctlNR is the ioctl syscall number raw_syscalls events are filtered on. The text does
// not say the architecture; x86-64 is assumed (arm64 would be 29).
const IoctlNR = 16

// one is a row of one name.
func one(name string, kind event.Kind, fam *Family, kernels string) Event {
	return Event{Names: []Name{{name, kernels}}, Kind: kind, Formats: fam}
}

// known is a row of an event deliberately not decoded, and why.
func known(name, why string) Event { return Event{Names: []Name{{Name: name}}, Note: why} }

// knownDriver is a driver's event deliberately not decoded, and why.
func knownDriver(driver, name, why string) Event {
	return Event{Names: []Name{{Name: name}}, Driver: driver, Note: why}
}

// pts lists points.
func pts(p ...Point) []Point { return p }

// Live kernels of the driver hooks (the tp_btf rung also needs the module's BTF).
const (
	kernAmdgpu = "amdgpu_trace.h, the formats of ≤4.10 .. 2025"
	kernI915   = "i915_request_* since 9a895192 (2018-02)"
	kernXe     = "xe_trace.h since 6.8"
	kernMsm    = "msm_gpu_trace.h, 6.1..7.3 checked"
	kernVirtio = "virtgpu_trace.h; tp_btf reads the 7.3 arguments (vq, hdr, seqno), 6.1 (vq, hdr) takes the classic rung"
	kernV3D    = "v3d_trace.h since 4.18 (the _irq, tfu, csd and cache events since 5.x)"
	kernVC4    = "vc4_trace.h with the submit and IRQ events"
	kernPVR    = "pvr_trace.h, after 6.12 (absent from 6.12.117, in 7.3.4)"
	kernIVPU   = "ivpu_trace.h (2024 header; in 7.3.4)"
	kernXDNA   = "include/trace/events/amdxdna.h (both formats)"
)

var events = []Event{
	// gpu_scheduler: ≤6.16 names, then the 6.17 names of def54f40 "drm/sched: Cleanup event names".
	one("drm_sched_job", event.JobQueue, famSchedJob, "≤6.16"),
	one("drm_run_job", event.JobRun, famSchedJob, "5.7 (6913abff) ..6.16"),
	one("drm_sched_process_job", event.JobDone, famSchedDone, "≤6.16"),
	one("drm_sched_job_wait_dep", event.JobDependency, famSchedDep, "4.19 (9c27cdd1) ..6.16"),
	one("drm_sched_job_queue", event.JobQueue, famSchedJob, "6.17+"),
	one("drm_sched_job_run", event.JobRun, famSchedJob, "6.17+"),
	one("drm_sched_job_done", event.JobDone, famSchedDone, "6.17+"),
	one("drm_sched_job_add_dep", event.JobDependency, famSchedDep, "6.17+ (8d74846d)"),
	one("drm_sched_job_unschedulable", event.JobDependency, famSchedDep, "6.17+"),

	// dma_fence (≥4.10) and fence (≤4.9); RFC events of 2024.
	one("dma_fence_init", event.FenceInit, famFence, ""),
	one("dma_fence_emit", event.FenceEmit, famFence, ""),
	one("dma_fence_enable_signal", event.FenceEnableSignal, famFence, ""),
	one("dma_fence_signaled", event.FenceSignaled, famFence, ""),
	one("dma_fence_wait_start", event.FenceWaitStart, famFence, ""),
	one("dma_fence_wait_end", event.FenceWaitEnd, famFence, ""),
	one("dma_fence_destroy", event.FenceDestroy, famFence, ""),
	one("fence_init", event.FenceInit, famFence, "≤4.9"),
	one("fence_emit", event.FenceEmit, famFence, "≤4.9"),
	one("fence_enable_signal", event.FenceEnableSignal, famFence, "≤4.9"),
	one("fence_signaled", event.FenceSignaled, famFence, "≤4.9"),
	one("fence_wait_start", event.FenceWaitStart, famFence, "≤4.9"),
	one("fence_wait_end", event.FenceWaitEnd, famFence, "≤4.9"),
	one("fence_destroy", event.FenceDestroy, famFence, "≤4.9"),
	// "fence waits on f1": Fence = the waiting fence, Dep = f1.
	one("fence_annotate_wait_on", event.JobDependency, famFenceWaitOn, "≤4.9"),
	// reason goes to Event.Text.
	one("dma_fence_sync_to", event.FenceUsedAsDep, famFenceReason, "RFC 2024"),
	one("dma_fence_used_as_dependency", event.FenceUsedAsDep, famFenceReason, "RFC 2024 v2/v3"),

	// amdgpu: its own queue and run events carry the scheduler job's finished fence, so the
	// assembler treats them as the scheduler's (sched.go), yielding to the generic events
	// where a kernel traces both.
	{Names: []Name{{Name: "amdgpu_cs_ioctl"}}, Kind: event.JobQueue, Driver: "amdgpu", System: "amdgpu", Formats: famAmdgpuJob,
		Points: pts(PointQueued), Rule: "as drm_sched_job_queue; yields to it where both are traced",
		Hook: &Hook{Value: 40, Event: "amdgpu_cs_ioctl", Kernels: kernAmdgpu}},
	{Names: []Name{{Name: "amdgpu_sched_run_job"}}, Kind: event.JobRun, Driver: "amdgpu", System: "amdgpu", Formats: famAmdgpuJob,
		Points: pts(PointRun), Rule: "as drm_sched_job_run; yields to it where both are traced",
		Hook: &Hook{Value: 41, Event: "amdgpu_sched_run_job", Kernels: kernAmdgpu}},
	knownDriver("amdgpu", "amdgpu_cs", "per-IB submission detail (bo_list, ring index, dw); no job identity"),
	knownDriver("amdgpu", "amdgpu_vm_flush", "VM flush on a ring; no job identity"),
	knownDriver("amdgpu", "amdgpu_vm_grab_id", "VMID allocation; no job identity"),
	knownDriver("amdgpu", "amdgpu_bo_list_set", "BO list contents; no job identity"),
	knownDriver("amdgpu", "amdgpu_ib_pipe_sync", "same-ring pipe sync at run time; drm_sched_job_wait_dep carries the dependency"),
	knownDriver("amdgpu", "amdgpu_ttm_bo_move", "BO migration; no job identity"),

	// i915 (no DRM scheduler): the request life cycle, old i915_gem_request_* names first.
	// A request is a dma_fence: key (ctx, seqno), Ring = engine.
	{Names: []Name{{"i915_gem_ring_dispatch", "≤4.10, renamed i915_gem_request_queue by 184d011b"}, {"i915_gem_request_queue", ""},
		{"i915_request_queue", "since 9a895192 (2018-02)"}},
		Kind: event.I915RequestQueue, KindName: "i915_request_queue", Driver: "i915", System: "i915", Formats: famI915Request,
		Points: pts(PointQueued), Role: &Role{1, SeenQueue, true}, Rule: "the earliest of queue and add",
		Hook: &Hook{Value: 50, Event: "i915_request_queue", Kernels: kernI915}},
	{Names: []Name{{"i915_gem_request_add", ""}, {"i915_request_add", ""}},
		Kind: event.I915RequestAdd, KindName: "i915_request_add", Driver: "i915", System: "i915", Formats: famI915Request,
		Points: pts(PointQueued), Role: &Role{1, SeenQueue, true}, Rule: "the earliest of queue and add",
		Hook: &Hook{Value: 51, Event: "i915_request_add", Kernels: kernI915}},
	{Names: []Name{{"i915_gem_request_submit", ""}, {"i915_request_submit", ""}},
		Kind: event.I915RequestSubmit, KindName: "i915_request_submit", Driver: "i915", System: "i915", Formats: famI915Request,
		Points: pts(PointRun, PointEmitted), Role: &Role{1, SeenRun, true}, Rule: "submission to the engine is the emission",
		Hook: &Hook{Value: 52, Event: "i915_request_submit", Kernels: kernI915}},
	{Names: []Name{{"i915_gem_request_in", ""}, {"i915_request_in", ""}},
		Kind: event.I915RequestIn, KindName: "i915_request_in", Driver: "i915", System: "i915", Formats: famI915Request,
		Points: pts(PointHWStart), Role: &Role{2, 0, false}, Rule: "measured: the request entered the hardware (execlists)",
		Hook: &Hook{Value: 53, Event: "i915_request_in", Kernels: kernI915}},
	{Names: []Name{{"i915_gem_request_out", ""}, {"i915_request_out", ""}},
		Kind: event.I915RequestOut, KindName: "i915_request_out", Driver: "i915", System: "i915", Formats: famI915Request,
		Points: pts(PointHWDone), Role: &Role{2, 0, false}, Rule: "the latest, after preemption in/out pairs; without it (GuC) the request fence's dma_fence_signaled",
		Hook: &Hook{Value: 54, Event: "i915_request_out", Kernels: kernI915}},
	{Names: []Name{{"i915_gem_request_retire", ""}, {"i915_request_retire", ""}},
		Kind: event.I915RequestRetire, KindName: "i915_request_retire", Driver: "i915", System: "i915", Formats: famI915Request,
		Points: pts(PointFinished), Role: &Role{2, SeenDone, false}, Rule: "the request retired: the job's finish",
		Hook: &Hook{Value: 55, Event: "i915_request_retire", Kernels: kernI915}},
	{Names: []Name{{"i915_gem_request_wait_begin", "snippets S7"}, {"i915_request_wait_begin", ""}},
		Kind: event.I915RequestWaitBegin, KindName: "i915_request_wait_begin", Driver: "i915", System: "i915", Formats: famI915Request,
		Rule: "decoded, not a point of the job",
		Hook: &Hook{Value: 56, Event: "i915_request_wait_begin", Kernels: kernI915}},
	{Names: []Name{{"i915_gem_request_wait_end", "snippets S7"}, {"i915_request_wait_end", ""}},
		Kind: event.I915RequestWaitEnd, KindName: "i915_request_wait_end", Driver: "i915", System: "i915", Formats: famI915Request,
		Rule: "decoded, not a point of the job",
		Hook: &Hook{Value: 57, Event: "i915_request_wait_end", Kernels: kernI915}},
	knownDriver("i915", "i915_request_execute", "no Kind: between submit and in; not on the critical path we tile"),
	knownDriver("i915", "i915_gem_request_execute", "as i915_request_execute"),
	knownDriver("i915", "i915_request_guc_submit", "GuC backend detail (i915-sriov-dkms)"),
	knownDriver("i915", "intel_engine_notify", "4.11..5.0 breadcrumb interrupt: its seqno is the engine's global seqno, which the request events print as global= (not decoded): no request key"),
	{Names: []Name{{"i915_gem_request_complete", "2.6.32..4.x: notify_ring at the user interrupt (3.x: seqno = ring->get_seqno)"},
		{"i915_gem_request_notify", "4.x ..4.10 (renamed intel_engine_notify by b80bc830)"}},
		Kind: event.I915RequestComplete, KindName: "i915_request_complete", Driver: "i915", System: "i915", Formats: famI915Request,
		Points: pts(PointHWDone),
		Rule:   "measured th of every request of the ring with seqno ≤ the one the GPU wrote (legacy ring, no ctx); assemble.i915Complete"},

	// xe: built on drm_sched, whose events are the job; xe's own events enrich it, or stand
	// alone when no scheduler event is traced. JobID = the job pointer.
	{Names: []Name{{Name: "xe_sched_job_create"}}, Kind: event.XeSchedJobCreate, KindName: "xe_sched_job_create", Driver: "xe", System: "xe", Formats: famXeJob,
		Points: pts(PointQueued), Role: &Role{1, SeenQueue, true},
		Rule: "standalone only; merged into the drm_sched job queued next on the thread",
		Hook: &Hook{Value: 60, Event: "xe_sched_job_create", Kernels: kernXe}},
	{Names: []Name{{Name: "xe_sched_job_exec"}}, Kind: event.XeSchedJobExec, KindName: "xe_sched_job_exec", Driver: "xe", System: "xe", Formats: famXeJob,
		Rule: "decoded, not a point of the job",
		Hook: &Hook{Value: 61, Event: "xe_sched_job_exec", Kernels: kernXe}},
	{Names: []Name{{Name: "xe_sched_job_run"}}, Kind: event.XeSchedJobRun, KindName: "xe_sched_job_run", Driver: "xe", System: "xe", Formats: famXeJob,
		Points: pts(PointRun), Role: &Role{1, SeenRun, true},
		Rule: "te of the worker's current drm_sched job (inside run_job); tr when standalone",
		Hook: &Hook{Value: 62, Event: "xe_sched_job_run", Kernels: kernXe}},
	{Names: []Name{{Name: "xe_sched_job_free"}}, Kind: event.XeSchedJobFree, KindName: "xe_sched_job_free", Driver: "xe", System: "xe", Formats: famXeJob,
		Rule: "ends the job pointer's identity (pointers are reused); assemble.xeFree",
		Hook: &Hook{Value: 63, Event: "xe_sched_job_free", Kernels: kernXe}},
	{Names: []Name{{Name: "xe_hw_fence_create"}}, Kind: event.XeHwFenceCreate, KindName: "xe_hw_fence_create", Driver: "xe", System: "xe", Formats: famXeHwFence,
		Rule: "links the hardware fence to its job; assemble.xeHWCreate",
		Hook: &Hook{Value: 64, Event: "xe_hw_fence_create", Kernels: kernXe}},
	{Names: []Name{{Name: "xe_hw_fence_signal"}}, Kind: event.XeHwFenceSignal, KindName: "xe_hw_fence_signal", Driver: "xe", System: "xe", Formats: famXeHwFence,
		Points: pts(PointHWDone),
		Rule:   "by the xe fence pointer (the job's fence=%p) or hw fence key; standalone tf = th (xe_hw_fence_as_finished); assemble.xeHWSignal",
		Hook:   &Hook{Value: 65, Event: "xe_hw_fence_signal", Kernels: kernXe}},
	{Names: []Name{{"xe_hw_fence_free", "6.8 (index 78286750)"}}, Kind: event.XeHwFenceFree, KindName: "xe_hw_fence_free", Driver: "xe", System: "xe", Formats: famXeHwFence,
		Rule: "decoded, not a point of the job",
		Hook: &Hook{Value: 66, Event: "xe_hw_fence_free", Kernels: kernXe}},
	knownDriver("xe", "xe_hw_fence_try_signal", "polling attempt, not a state change"),
	knownDriver("xe", "xe_exec_queue_submit", "exec-queue state, no job identity"),
	knownDriver("xe", "xe_exec_queue_create", "exec-queue state, no job identity"),
	knownDriver("xe", "xe_sched_msg_add", "scheduler message, no job identity"),
	knownDriver("xe", "xe_sched_msg_recv", "scheduler message, no job identity"),

	// msm (Adreno). ≤5.18 submits synchronously from the ioctl; ≥5.19 from drm_sched's
	// run_job, whose job the msm events enrich (native.go).
	{Names: []Name{{Name: "msm_gpu_submit"}}, Kind: event.MsmSubmit, KindName: "msm_submit", Driver: "msm", System: "drm_msm_gpu", Formats: famMsm,
		Points: pts(PointQueued), Role: &Role{1, SeenQueue, true},
		Rule: "standalone (traced in the submit ioctl); under drm_sched folded into the job whose run_job does the flush",
		Hook: &Hook{Value: 70, Event: "msm_gpu_submit", Kernels: kernMsm}},
	{Names: []Name{{Name: "msm_gpu_submit_flush"}}, Kind: event.MsmSubmitFlush, KindName: "msm_submit_flush", Driver: "msm", System: "drm_msm_gpu", Formats: famMsm,
		Points: pts(PointRun, PointEmitted), Role: &Role{1, SeenRun, true},
		Rule: "standalone; te of the worker's drm_sched job; its ticks= anchor the GPU stamps",
		Hook: &Hook{Value: 71, Event: "msm_gpu_submit_flush", Kernels: kernMsm}},
	{Names: []Name{{Name: "msm_gpu_submit_retired"}}, Kind: event.MsmSubmitRetired, KindName: "msm_submit_retired", Driver: "msm", System: "drm_msm_gpu", Formats: famMsm,
		Points: pts(PointFinished), Role: &Role{2, SeenDone, false},
		Rule: "tf standalone only; start=/end= give ts and th on the GPU's clock (docs/gpu-timestamps.md)",
		Hook: &Hook{Value: 72, Event: "msm_gpu_submit_retired", Kernels: kernMsm}},

	// virtio_gpu (virgl; no DRM scheduler, no ring of its own): a job is one execbuffer
	// ioctl's SUBMIT_3D command (0x207) on the control virtqueue, keyed by the fence the
	// ioctl emits (dma_fence_emit's seqno = the command's fence_id). The fence's emit is tq =
	// tr, its dma_fence_signaled tf (fences.go); other command types are not jobs.
	{Names: []Name{{"virtio_gpu_cmd_queue", "6.1 (7 fields); num_free= seqno= in 7.3"}},
		Kind: event.VirtioGPUCmdQueue, KindName: "virtio_gpu_cmd_queue", Driver: "virtio_gpu", System: "virtio_gpu", Formats: famVirtioCmd,
		Points: pts(PointEmitted), Role: &Role{1, SeenQueue | SeenRun, true},
		Rule: "SUBMIT_3D (0x207) only: opens the job; te = the command on the virtqueue; tq = tr = the fence emitted in its ioctl with seqno = fence_id (else this event); assemble.virtioQueue",
		Hook: &Hook{Value: 90, Event: "virtio_gpu_cmd_queue", Kernels: kernVirtio}},
	{Names: []Name{{"virtio_gpu_cmd_response", "6.1 (7 fields); num_free= seqno= in 7.3"}},
		Kind: event.VirtioGPUCmdResponse, KindName: "virtio_gpu_cmd_response", Driver: "virtio_gpu", System: "virtio_gpu", Formats: famVirtioCmd,
		Points: pts(PointHWDone), Role: &Role{2, 0, false},
		Rule: "th: the host's response, by fence_id, or by seqno (7.3); ends an unfenced job; assemble.virtioResponse",
		Hook: &Hook{Value: 91, Event: "virtio_gpu_cmd_response", Kernels: kernVirtio}},
	// v3d (Broadcom VideoCore, Raspberry Pi 4/5): on drm_sched, one hardware job per
	// queue at a time (hw_jobs_limit 1). run_job creates the queue's hardware fence,
	// traces the submit event with its seqno, then writes the register that starts the
	// job; the queue's interrupt handler traces the _irq event with the same seqno, then
	// signals that fence. A job is (dev, queue, seqno) (assemble.v3dEvent).
	{Names: []Name{{"v3d_submit_cl", "4.18+"}}, Kind: event.V3DSubmitCL, KindName: "v3d_submit_cl", Driver: "v3d", System: "v3d", Formats: famV3DSubmitCL,
		Points: pts(PointHWStart), Role: &Role{2, SeenRun, true},
		Rule: "measured ts of the bin (BCL) or render (RCL) job: traced just before the register write that starts it; under drm_sched, of the job run_job runs",
		Hook: &Hook{Value: 100, Event: "v3d_submit_cl", Kernels: kernV3D}},
	{Names: []Name{{"v3d_submit_tfu", "5.x+"}}, Kind: event.V3DSubmitTFU, KindName: "v3d_submit_tfu", Driver: "v3d", System: "v3d", Formats: famV3DSeqno,
		Points: pts(PointHWStart), Role: &Role{2, SeenRun, true},
		Rule: "measured ts of the TFU job, as v3d_submit_cl",
		Hook: &Hook{Value: 101, Event: "v3d_submit_tfu", Kernels: kernV3D}},
	{Names: []Name{{"v3d_submit_csd", "5.x+"}}, Kind: event.V3DSubmitCSD, KindName: "v3d_submit_csd", Driver: "v3d", System: "v3d", Formats: famV3DSeqno,
		Points: pts(PointHWStart), Role: &Role{2, SeenRun, true},
		Rule: "measured ts of the compute (CSD) job, as v3d_submit_cl",
		Hook: &Hook{Value: 102, Event: "v3d_submit_csd", Kernels: kernV3D}},
	{Names: []Name{{"v3d_bcl_irq", "5.x+"}}, Kind: event.V3DBinIRQ, KindName: "v3d_bin_irq", Driver: "v3d", System: "v3d", Formats: famV3DSeqno,
		Points: pts(PointHWDone), Role: &Role{3, SeenDone, false},
		Rule: "measured th of the bin job by its seqno (traced just before its hardware fence is signalled); standalone tf = th (v3d_irq_as_finished)",
		Hook: &Hook{Value: 103, Event: "v3d_bcl_irq", Kernels: kernV3D}},
	{Names: []Name{{"v3d_rcl_irq", "5.x+"}}, Kind: event.V3DRenderIRQ, KindName: "v3d_render_irq", Driver: "v3d", System: "v3d", Formats: famV3DSeqno,
		Points: pts(PointHWDone), Role: &Role{3, SeenDone, false},
		Rule: "measured th of the render job, as v3d_bcl_irq",
		Hook: &Hook{Value: 104, Event: "v3d_rcl_irq", Kernels: kernV3D}},
	{Names: []Name{{"v3d_tfu_irq", "5.x+"}}, Kind: event.V3DTFUIRQ, KindName: "v3d_tfu_irq", Driver: "v3d", System: "v3d", Formats: famV3DSeqno,
		Points: pts(PointHWDone), Role: &Role{3, SeenDone, false},
		Rule: "measured th of the TFU job, as v3d_bcl_irq",
		Hook: &Hook{Value: 105, Event: "v3d_tfu_irq", Kernels: kernV3D}},
	{Names: []Name{{"v3d_csd_irq", "5.x+"}}, Kind: event.V3DCSDIRQ, KindName: "v3d_csd_irq", Driver: "v3d", System: "v3d", Formats: famV3DSeqno,
		Points: pts(PointHWDone), Role: &Role{3, SeenDone, false},
		Rule: "measured th of the CSD job, as v3d_bcl_irq",
		Hook: &Hook{Value: 106, Event: "v3d_csd_irq", Kernels: kernV3D}},
	{Names: []Name{{"v3d_cache_clean_begin", "5.x+"}}, Kind: event.V3DCacheCleanBegin, KindName: "v3d_cache_clean_begin", Driver: "v3d", System: "v3d", Formats: famV3DDev,
		Points: pts(PointHWStart), Role: &Role{2, SeenRun, true},
		Rule: "measured ts of the cache-clean job (v3d_clean_caches, synchronous in its run_job)",
		Hook: &Hook{Value: 107, Event: "v3d_cache_clean_begin", Kernels: kernV3D}},
	{Names: []Name{{"v3d_cache_clean_end", "5.x+"}}, Kind: event.V3DCacheCleanEnd, KindName: "v3d_cache_clean_end", Driver: "v3d", System: "v3d", Formats: famV3DDev,
		Points: pts(PointHWDone), Role: &Role{3, SeenDone, false},
		Rule: "measured th of the cache-clean job (the clean is done before run_job returns); standalone tf = th",
		Hook: &Hook{Value: 108, Event: "v3d_cache_clean_end", Kernels: kernV3D}},
	knownDriver("v3d", "v3d_submit_cl_ioctl", "traced at the submit ioctl's start, before the job exists: no seqno (given at run); the ioctl is sys_enter/exit_ioctl's"),
	knownDriver("v3d", "v3d_submit_tfu_ioctl", "as v3d_submit_cl_ioctl"),
	knownDriver("v3d", "v3d_submit_csd_ioctl", "as v3d_submit_cl_ioctl"),
	knownDriver("v3d", "v3d_submit_cpu_ioctl", "as v3d_submit_cl_ioctl (6.8+, CPU jobs)"),
	knownDriver("v3d", "v3d_cpu_job_begin", "6.8+ CPU job (timestamp/performance queries) run by the CPU in run_job: dev and job_type only, no job identity; under drm_sched its job is the scheduler's"),
	knownDriver("v3d", "v3d_cpu_job_end", "as v3d_cpu_job_begin"),
	knownDriver("v3d", "v3d_reset_begin", "GPU reset in the scheduler's timeout handler: dev only, no job identity"),
	knownDriver("v3d", "v3d_reset_end", "as v3d_reset_begin"),

	// vc4 (Broadcom VideoCore IV, Raspberry Pi ≤3; vc4_trace.h at torvalds/linux 044feb97
	// prints v3d's formats), no drm_sched in the trees read: an
	// exec (one seqno) is a bin half then a render half. vc4_submit_next_bin_job /
	// _render_job trace vc4_submit_cl just before submit_cl writes the control-list
	// registers that start the half; the IRQ handler's vc4_irq_finish_bin_job /
	// _render_job trace the _end_irq events, and after the render one signals the exec's
	// fence. Each half is a job, (dev, queue, seqno) as v3d's (assemble.v3dEvent), which
	// also holds for the 2026 drm_sched port (per-queue fences).
	{Names: []Name{{Name: "vc4_submit_cl"}}, Kind: event.VC4SubmitCL, KindName: "vc4_submit_cl", Driver: "vc4", System: "vc4", Formats: famV3DSubmitCL,
		Points: pts(PointHWStart), Role: &Role{2, SeenRun, true},
		Rule: "measured ts of the exec's bin (BCL) or render (RCL) half: traced just before the register writes that start it",
		Hook: &Hook{Value: 110, Event: "vc4_submit_cl", Kernels: kernVC4}},
	{Names: []Name{{Name: "vc4_bcl_end_irq"}}, Kind: event.VC4BinEndIRQ, KindName: "vc4_bin_end_irq", Driver: "vc4", System: "vc4", Formats: famV3DSeqno,
		Points: pts(PointHWDone), Role: &Role{3, SeenDone, false},
		Rule: "measured th of the bin half by its seqno; standalone tf = th (vc4_irq_as_finished)",
		Hook: &Hook{Value: 111, Event: "vc4_bcl_end_irq", Kernels: kernVC4}},
	{Names: []Name{{Name: "vc4_rcl_end_irq"}}, Kind: event.VC4RenderEndIRQ, KindName: "vc4_render_end_irq", Driver: "vc4", System: "vc4", Formats: famV3DSeqno,
		Points: pts(PointHWDone), Role: &Role{3, SeenDone, false},
		Rule: "measured th of the render half (the exec's fence is signalled right after); standalone tf = th (vc4_irq_as_finished)",
		Hook: &Hook{Value: 112, Event: "vc4_rcl_end_irq", Kernels: kernVC4}},
	knownDriver("vc4", "vc4_submit_cl_ioctl", "traced at the submit ioctl's start: sizes, no seqno yet"),
	knownDriver("vc4", "vc4_wait_for_seqno_begin", "a waiter on a seqno (wait ioctls, eviction): not a point of the job"),
	knownDriver("vc4", "vc4_wait_for_seqno_end", "as vc4_wait_for_seqno_begin"),

	// imagination (powervr; pvr_trace.h 2026), on drm_sched (pvr_queue.c): the submit
	// ioctl's create_job traces pvr_job_create; run_job (pvr_queue_run_job) writes the
	// job's commands to its CCCB, kicks the firmware through the KCCB and then traces
	// pvr_job_submit_fw (a geometry job paired with a fragment job submits both and
	// traces both there); pvr_queue_job_cleanup, in the job's release (its last
	// reference: after the scheduler's free_job, hence after the done fence signalled),
	// traces pvr_job_done. Nothing is traced at the firmware's start or end of the job
	// (the done fence is signalled by pvr_queue_signal_done_fences on a firmware event).
	// A job is its pointer (assemble.pvrEvent).
	{Names: []Name{{Name: "pvr_job_create"}}, Kind: event.PVRJobCreate, KindName: "pvr_job_create", Driver: "powervr", System: "pvr", Formats: famPVRCreate,
		Points: pts(PointQueued), Role: &Role{1, SeenQueue, true},
		Rule: "standalone tq (the submit ioctl's create_job); under drm_sched the scheduler's job is found at submit_fw and this one folded in",
		Hook: &Hook{Value: 120, Event: "pvr_job_create", Kernels: kernPVR}},
	{Names: []Name{{Name: "pvr_job_submit_fw"}}, Kind: event.PVRJobSubmitFW, KindName: "pvr_job_submit_fw", Driver: "powervr", System: "pvr", Formats: famPVRSubmitFW,
		Points: pts(PointRun, PointEmitted), Role: &Role{2, SeenRun, true},
		Rule: "te of the worker's drm_sched job (traced in run_job after the firmware kick; a paired fragment job's, the second in the window, is not that job's); standalone tr = te",
		Hook: &Hook{Value: 121, Event: "pvr_job_submit_fw", Kernels: kernPVR}},
	{Names: []Name{{Name: "pvr_job_done"}}, Kind: event.PVRJobDone, KindName: "pvr_job_done", Driver: "powervr", System: "pvr", Formats: famPVRDone,
		Points: pts(PointFinished), Role: &Role{1, SeenDone, false},
		Rule: "the job's release: ends the pointer's identity; standalone tf inferred (pvr_release_as_finished: after the done fence signalled, an upper bound)",
		Hook: &Hook{Value: 122, Event: "pvr_job_done", Kernels: kernPVR}},
	knownDriver("powervr", "pvr_job_submit_ioctl", "the submit ioctl's job count, no job identity"),

	// ivpu (intel_vpu, Intel NPU; ivpu_trace.h 2024; no drm_sched): one event, "job",
	// whose first field names the step (famIVPUJob). A job is (device, job_id)
	// (assemble.ivpuEvent).
	{Names: []Name{{"job", "TRACE_SYSTEM vpu"}}, Kind: event.IVPUJob, KindName: "ivpu_job", Driver: "intel_vpu", System: "vpu", Formats: famIVPUJob,
		Points: pts(PointEmitted, PointFinished), Role: &Role{2, 0, true},
		Rule: "create: tq of the job its thread submits next; submit: tr = te (the doorbell rung); done: tf (right after the done fence's signal); execution inferred",
		Hook: &Hook{Value: 130, Event: "job", Kernels: kernIVPU}},
	knownDriver("intel_vpu", "jsm", "firmware IPC messages (type, status, request id): no job identity"),
	knownDriver("intel_vpu", "pm", "power-management steps: no job identity"),

	// amdxdna (AMD NPU), on drm_sched: xdna_job carries the scheduler job's finished
	// fence key, so it names the scheduler's job as amdgpu's events do
	// (assemble.xdnaEvent).
	{Names: []Name{{Name: "xdna_job"}}, Kind: event.XDNAJob, KindName: "xdna_job", Driver: "amdxdna", System: "amdxdna", Formats: famXDNAJob,
		Points: pts(PointEmitted, PointHWDone), Role: &Role{2, 0, true},
		Rule: "by the finished fence key: sent to device = te (standalone tr = te); signaled fence = th (just before the job's fence is signalled), standalone tf = th (xdna_signal_as_finished)",
		Hook: &Hook{Value: 140, Event: "xdna_job", Kernels: kernXDNA}},
	knownDriver("amdxdna", "amdxdna_debug_point", "a debug point (name, number, string): no job identity"),
	knownDriver("amdxdna", "mbox_set_tail", "mailbox ring pointer write: a message id, no job identity"),
	knownDriver("amdxdna", "mbox_set_head", "as mbox_set_tail"),
	knownDriver("amdxdna", "mbox_irq_handle", "mailbox interrupt: channel only"),
	knownDriver("amdxdna", "mbox_rx_worker", "mailbox receive worker: channel only"),

	// habanalabs (include/trace/events/habanalabs.h, torvalds/linux 191a4443): MMU map
	// and unmap, DMA allocation: no command-submission or job events.
	knownDriver("habanalabs", "habanalabs_mmu_map", "MMU mapping: no job identity"),
	knownDriver("habanalabs", "habanalabs_mmu_unmap", "as habanalabs_mmu_map"),
	knownDriver("habanalabs", "habanalabs_dma_alloc", "DMA allocation: no job identity"),
	knownDriver("habanalabs", "habanalabs_dma_free", "as habanalabs_dma_alloc"),

	// Other drivers that also emit gpu_scheduler/dma_fence events (which we decode).
	knownDriver("lima", "lima_task_submit", "duplicates drm_sched_job for lima"),
	knownDriver("lima", "lima_task_run", "duplicates drm_run_job for lima"),

	// drm core.
	known("drm_vblank_event", "display timing; shown by timeline tools, not part of a job"),
	known("drm_vblank_event_queued", "display timing"),
	known("drm_vblank_event_delivered", "display timing"),

	// syscalls and interrupts.
	one("sys_enter_ioctl", event.IoctlEnter, famIoctlEnter, ""),
	one("sys_exit_ioctl", event.IoctlExit, famIoctlExit, ""),
	{Names: []Name{{"sys_ioctl(", "tracefs syscall printer"}}, Tracepoint: "sys_enter_ioctl", Kind: event.IoctlEnter, Formats: famIoctlEnterText},
	{Names: []Name{{"sys_ioctl ->", "tracefs syscall printer"}}, Tracepoint: "sys_exit_ioctl", Kind: event.IoctlExit, Formats: famIoctlExitText},
	one("sys_enter", event.IoctlEnter, famRawEnter, "raw_syscalls; only NR 16"),
	one("sys_exit", event.IoctlExit, famRawExit, "raw_syscalls; only NR 16"),
	one("irq_handler_entry", event.IRQEntry, famIRQEntry, ""),
	one("irq_handler_exit", event.IRQExit, famIRQExit, ""),

	// trace_marker writes: the "print" event (trace-cmd), shown by tracefs as the ip's
	// symbol, tracing_mark_write.
	one("print", event.Marker, nil, ""),
	{Names: []Name{{Name: "tracing_mark_write"}}, Tracepoint: "print", Kind: event.Marker},
}
