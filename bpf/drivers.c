//go:build ignore
// SPDX-License-Identifier: (GPL-2.0-only OR MIT)
/*
 * Driver-specific tracepoints (tp_btf on module tracepoints; module BTF required).
 * Driver types are declared minimally in drm_types.h and relocated by CO-RE. What is
 * read per driver:
 *  - amdgpu_cs_ioctl / amdgpu_sched_run_job (struct amdgpu_job *): job->base is the
 *    drm_sched_job, so the same finished-fence key as the scheduler events;
 *  - i915_request_* (struct i915_request *): rq->fence (the request is the fence), engine name;
 *  - xe_sched_job_* (struct xe_sched_job *): job->drm's finished fence, job->fence (hardware);
 *    xe_hw_fence_* (struct xe_hw_fence *): fence->dma;
 *  - msm_gpu_submit (scalar args: pid, ringid, id, ...): raw args only;
 *    msm_gpu_submit_flush / _retired (struct msm_gem_submit *): ident, seqno, ring->id,
 *    and the GPU stamps the tracepoint is given (flush: the always-on counter read by
 *    the CPU; retired: the counter at the submit's GPU start and end). For msm the ring
 *    id travels in record.arg, msm_gpu_submit's pid argument (the submitting thread) in
 *    record.cmd, the counter values in record.dep_ctx (ticks, start) and
 *    record.dep_seqno (end) without RF_HAS_DEP (record.go reads them per hook). The
 *    flush and retire programs leave pid= out (submit->pid is a struct pid whose
 *    numbers[] is a flexible array): the submit event and its own thread carry it;
 *  - virtio_gpu_cmd_queue / _response (struct virtqueue *, struct virtio_gpu_ctrl_hdr *,
 *    7.3's seqno): the device and virtqueue index, the command's type and fence_id.
 *  - pvr_job_* (struct pvr_job *), ivpu's job (step, struct ivpu_job *), xdna_job
 *    (struct drm_sched_job *, names, step): see their programs below;
 *  - v3d_* and vc4_* (the drm_device, the hardware fence or exec seqno): the seqno as the fence seqno,
 *    *_submit_cl's queue as ring "BCL"/"RCL" (the text's ternary), dev as the text
 *    prints it (dev->primary->index in decimal), as the classic rung gives it too.
 * Every event also has a classic-tracepoint twin (no BTF needed: the raw trace entry is
 * copied and decoded in user space from the event's tracefs format, ghostdriver.h).
 */
#include "ghostdriver.h"
#include "drm_types.h"
#include "sched_reads.h"

char __license[] SEC("license") = "Dual MIT/GPL";

static __always_inline void read_sjob(struct record *r, struct drm_sched_job___gd *job)
{
	struct drm_sched_fence___gd *sf = BPF_CORE_READ(job, s_fence);
	if (sf) {
		sched_finished_key(sf, &r->fence_ctx, &r->fence_seqno);
		r->flags |= RF_FENCE_WIDE | RF_HAS_FENCE;
	}
	sched_job_id(job, &r->job_id);
	struct drm_gpu_scheduler___gd *s = BPF_CORE_READ(job, sched);
	if (s) {
		const char *name = BPF_CORE_READ(s, name);
		if (name)
			bpf_probe_read_kernel_str(r->ring, sizeof(r->ring), name);
	}
}

/* amdgpu */
static __always_inline int on_amdgpu_job(__u16 hook, struct amdgpu_job___gd *job)
{
	struct record *r = rec_reserve(hook);
	if (!r)
		return 0;
	r->ptr = (__u64)job;
	if (job)
		read_sjob(r, (struct drm_sched_job___gd *)__builtin_preserve_access_index(&job->base));
	rec_submit(r);
	return 0;
}

SEC("tp_btf/amdgpu_cs_ioctl")
int BPF_PROG(tpbtf_amdgpu_cs_ioctl, struct amdgpu_job___gd *job)
{
	return on_amdgpu_job(HOOK_AMDGPU_CS_IOCTL, job);
}

SEC("tp_btf/amdgpu_sched_run_job")
int BPF_PROG(tpbtf_amdgpu_sched_run_job, struct amdgpu_job___gd *job)
{
	return on_amdgpu_job(HOOK_AMDGPU_SCHED_RUN_JOB, job);
}

/* i915 */
static __always_inline int on_i915(__u16 hook, struct i915_request___gd *rq)
{
	struct record *r = rec_reserve(hook);
	if (!r)
		return 0;
	r->ptr = (__u64)rq;
	if (rq) {
		r->fence_ctx = BPF_CORE_READ(rq, fence.context);
		r->fence_seqno = BPF_CORE_READ(rq, fence.seqno);
		r->flags |= RF_FENCE_WIDE | RF_HAS_FENCE;
		struct intel_engine_cs___gd *e = BPF_CORE_READ(rq, engine);
		if (e)
			bpf_probe_read_kernel_str(r->ring, sizeof(r->ring),
						  __builtin_preserve_access_index(&e->name));
	}
	rec_submit(r);
	return 0;
}

#define I915_EVENT(ev, hook)                                                                \
	SEC("tp_btf/i915_request_" #ev)                                                     \
	int BPF_PROG(tpbtf_i915_request_##ev, struct i915_request___gd *rq)                 \
	{                                                                                   \
		return on_i915(hook, rq);                                                   \
	}

I915_EVENT(queue, HOOK_I915_REQUEST_QUEUE)
I915_EVENT(add, HOOK_I915_REQUEST_ADD)
I915_EVENT(submit, HOOK_I915_REQUEST_SUBMIT)
I915_EVENT(in, HOOK_I915_REQUEST_IN)
I915_EVENT(out, HOOK_I915_REQUEST_OUT)
I915_EVENT(retire, HOOK_I915_REQUEST_RETIRE)
I915_EVENT(wait_begin, HOOK_I915_REQUEST_WAIT_BEGIN)
I915_EVENT(wait_end, HOOK_I915_REQUEST_WAIT_END)

/* xe */
static __always_inline int on_xe_job(__u16 hook, struct xe_sched_job___gd *job)
{
	struct record *r = rec_reserve(hook);
	if (!r)
		return 0;
	r->ptr = (__u64)job;
	if (job) {
		read_sjob(r, (struct drm_sched_job___gd *)__builtin_preserve_access_index(&job->drm));
		r->job_id = (__u64)job;
		struct dma_fence *hw = BPF_CORE_READ(job, fence);
		if (hw) {
			read_fence(hw, &r->hw_ctx, &r->hw_seqno);
			r->flags |= RF_HW_FENCE;
		}
	}
	rec_submit(r);
	return 0;
}

static __always_inline int on_xe_fence(__u16 hook, struct xe_hw_fence___gd *f)
{
	struct record *r = rec_reserve(hook);
	if (!r)
		return 0;
	r->ptr = (__u64)f;
	if (f) {
		r->fence_ctx = BPF_CORE_READ(f, dma.context);
		r->fence_seqno = BPF_CORE_READ(f, dma.seqno);
		r->flags |= RF_FENCE_WIDE | RF_HAS_FENCE;
	}
	rec_submit(r);
	return 0;
}

#define XE_JOB_EVENT(ev, hook)                                                              \
	SEC("tp_btf/xe_sched_job_" #ev)                                                     \
	int BPF_PROG(tpbtf_xe_sched_job_##ev, struct xe_sched_job___gd *job)                \
	{                                                                                   \
		return on_xe_job(hook, job);                                                \
	}

#define XE_FENCE_EVENT(ev, hook)                                                            \
	SEC("tp_btf/xe_hw_fence_" #ev)                                                      \
	int BPF_PROG(tpbtf_xe_hw_fence_##ev, struct xe_hw_fence___gd *f)                    \
	{                                                                                   \
		return on_xe_fence(hook, f);                                                \
	}

XE_JOB_EVENT(create, HOOK_XE_SCHED_JOB_CREATE)
XE_JOB_EVENT(exec, HOOK_XE_SCHED_JOB_EXEC)
XE_JOB_EVENT(run, HOOK_XE_SCHED_JOB_RUN)
XE_JOB_EVENT(free, HOOK_XE_SCHED_JOB_FREE)
XE_FENCE_EVENT(create, HOOK_XE_HW_FENCE_CREATE)
XE_FENCE_EVENT(signal, HOOK_XE_HW_FENCE_SIGNAL)
XE_FENCE_EVENT(free, HOOK_XE_HW_FENCE_FREE)

/* msm */
SEC("tp_btf/msm_gpu_submit")
int BPF_PROG(tpbtf_msm_gpu_submit, int pid, __u32 ringid, __u32 id, __u32 nr_bos, __u32 nr_cmds)
{
	struct record *r = rec_reserve(HOOK_MSM_GPU_SUBMIT);
	if (!r)
		return 0;
	r->job_id = id;
	r->arg = ringid;
	r->cmd = pid;
	rec_submit(r);
	return 0;
}

static __always_inline int on_msm_submit(__u16 hook, struct msm_gem_submit___gd *s, __u64 a, __u64 b)
{
	struct record *r = rec_reserve(hook);
	if (!r)
		return 0;
	r->ptr = (__u64)s;
	r->dep_ctx = a;
	r->dep_seqno = b;
	if (s) {
		r->job_id = BPF_CORE_READ(s, ident);
		r->fence_seqno = BPF_CORE_READ(s, seqno);
		r->flags |= RF_HAS_FENCE;
		struct msm_ringbuffer___gd *ring = BPF_CORE_READ(s, ring);
		if (ring)
			r->arg = BPF_CORE_READ(ring, id);
	}
	rec_submit(r);
	return 0;
}

SEC("tp_btf/msm_gpu_submit_flush")
int BPF_PROG(tpbtf_msm_gpu_submit_flush, struct msm_gem_submit___gd *s, __u64 ticks)
{
	return on_msm_submit(HOOK_MSM_GPU_SUBMIT_FLUSH, s, ticks, 0);
}

SEC("tp_btf/msm_gpu_submit_retired")
int BPF_PROG(tpbtf_msm_gpu_submit_retired, struct msm_gem_submit___gd *s, __u64 elapsed, __u64 clock,
	     __u64 start, __u64 end)
{
	return on_msm_submit(HOOK_MSM_GPU_SUBMIT_RETIRED, s, start, end);
}

/* v3d */
static __always_inline void v3d_dev(struct record *r, struct drm_device___gd *dev)
{
	struct drm_minor___gd *m = BPF_CORE_READ(dev, primary);
	int i = m ? BPF_CORE_READ(m, index) : -1;
	if (i < 0 || i > 999)
		return;
	__u32 idx = i;
	/* constant offsets only: the minor index in decimal, as the text's dev=%u */
	if (idx >= 100) {
		r->dev[0] = '0' + idx / 100;
		r->dev[1] = '0' + idx / 10 % 10;
		r->dev[2] = '0' + idx % 10;
		r->dev[3] = 0;
	} else if (idx >= 10) {
		r->dev[0] = '0' + idx / 10;
		r->dev[1] = '0' + idx % 10;
		r->dev[2] = 0;
	} else {
		r->dev[0] = '0' + idx;
		r->dev[1] = 0;
	}
}

static __always_inline int on_v3d(__u16 hook, struct drm_device___gd *dev, __u64 seqno)
{
	struct record *r = rec_reserve(hook);
	if (!r)
		return 0;
	if (dev)
		v3d_dev(r, dev);
	r->fence_seqno = seqno;
	r->flags |= RF_FENCE_WIDE | RF_HAS_FENCE;
	rec_submit(r);
	return 0;
}

static __always_inline int on_submit_cl(__u16 hook, struct drm_device___gd *dev, bool is_render, __u64 seqno)
{
	struct record *r = rec_reserve(hook);
	if (!r)
		return 0;
	if (dev)
		v3d_dev(r, dev);
	r->fence_seqno = seqno;
	r->flags |= RF_FENCE_WIDE | RF_HAS_FENCE;
	if (is_render)
		__builtin_memcpy(r->ring, "RCL", 4);
	else
		__builtin_memcpy(r->ring, "BCL", 4);
	rec_submit(r);
	return 0;
}

SEC("tp_btf/v3d_submit_cl")
int BPF_PROG(tpbtf_v3d_submit_cl, struct drm_device___gd *dev, bool is_render, __u64 seqno, __u32 ctnqba,
	     __u32 ctnqea)
{
	return on_submit_cl(HOOK_V3D_SUBMIT_CL, dev, is_render, seqno);
}

/* vc4: v3d's formats and arguments (vc4_trace.h) */
SEC("tp_btf/vc4_submit_cl")
int BPF_PROG(tpbtf_vc4_submit_cl, struct drm_device___gd *dev, bool is_render, __u64 seqno, __u32 ctnqba,
	     __u32 ctnqea)
{
	return on_submit_cl(HOOK_VC4_SUBMIT_CL, dev, is_render, seqno);
}

SEC("tp_btf/vc4_bcl_end_irq")
int BPF_PROG(tpbtf_vc4_bcl_end_irq, struct drm_device___gd *dev, __u64 seqno)
{
	return on_v3d(HOOK_VC4_BCL_END_IRQ, dev, seqno);
}

SEC("tp_btf/vc4_rcl_end_irq")
int BPF_PROG(tpbtf_vc4_rcl_end_irq, struct drm_device___gd *dev, __u64 seqno)
{
	return on_v3d(HOOK_VC4_RCL_END_IRQ, dev, seqno);
}

#define V3D_SEQNO_EVENT(ev, hook)                                                           \
	SEC("tp_btf/v3d_" #ev)                                                              \
	int BPF_PROG(tpbtf_v3d_##ev, struct drm_device___gd *dev, __u64 seqno)              \
	{                                                                                   \
		return on_v3d(hook, dev, seqno);                                                 \
	}

#define V3D_DEV_EVENT(ev, hook)                                                             \
	SEC("tp_btf/v3d_" #ev)                                                              \
	int BPF_PROG(tpbtf_v3d_##ev, struct drm_device___gd *dev)                           \
	{                                                                                   \
		return on_v3d(hook, dev, 0);                                                     \
	}

V3D_SEQNO_EVENT(submit_tfu, HOOK_V3D_SUBMIT_TFU)
V3D_SEQNO_EVENT(submit_csd, HOOK_V3D_SUBMIT_CSD)
V3D_SEQNO_EVENT(bcl_irq, HOOK_V3D_BCL_IRQ)
V3D_SEQNO_EVENT(rcl_irq, HOOK_V3D_RCL_IRQ)
V3D_SEQNO_EVENT(tfu_irq, HOOK_V3D_TFU_IRQ)
V3D_SEQNO_EVENT(csd_irq, HOOK_V3D_CSD_IRQ)
V3D_DEV_EVENT(cache_clean_begin, HOOK_V3D_CACHE_CLEAN_BEGIN)
V3D_DEV_EVENT(cache_clean_end, HOOK_V3D_CACHE_CLEAN_END)

/*
 * virtio_gpu: virtio_gpu_cmd_queue / _response (virtgpu_trace.h). The device index travels
 * in record.fd, the virtqueue index in record.arg, the command type in record.cmd, the
 * command's fence_id in fence_seqno (no context: RF_HAS_FENCE when fenced), its seqno in
 * job_id (record.go). The programs take 7.3's arguments (vq, hdr, seqno); on kernels
 * whose tracepoint has two (6.1: no seqno) the verifier refuses the third and the hook
 * takes the classic rung, whose format file has no seqno either.
 */
static __always_inline int on_virtio_cmd(__u16 hook, struct virtqueue___gd *vq,
					 struct virtio_gpu_ctrl_hdr___gd *hdr, __u32 seqno)
{
	struct record *r = rec_reserve(hook);
	if (!r)
		return 0;
	r->ptr = (__u64)hdr;
	r->job_id = seqno;
	if (vq) {
		r->fd = BPF_CORE_READ(vq, vdev, index);
		r->arg = BPF_CORE_READ(vq, index);
	}
	if (hdr) {
		r->cmd = BPF_CORE_READ(hdr, type);
		r->fence_seqno = BPF_CORE_READ(hdr, fence_id);
		if (r->fence_seqno)
			r->flags |= RF_HAS_FENCE;
	}
	rec_submit(r);
	return 0;
}

SEC("tp_btf/virtio_gpu_cmd_queue")
int BPF_PROG(tpbtf_virtio_gpu_cmd_queue, struct virtqueue___gd *vq, struct virtio_gpu_ctrl_hdr___gd *hdr,
	     __u32 seqno)
{
	return on_virtio_cmd(HOOK_VIRTIO_GPU_CMD_QUEUE, vq, hdr, seqno);
}

SEC("tp_btf/virtio_gpu_cmd_response")
int BPF_PROG(tpbtf_virtio_gpu_cmd_response, struct virtqueue___gd *vq, struct virtio_gpu_ctrl_hdr___gd *hdr,
	     __u32 seqno)
{
	return on_virtio_cmd(HOOK_VIRTIO_GPU_CMD_RESPONSE, vq, hdr, seqno);
}

/*
 * imagination (pvr_trace.h): the pvr_job pointer in job_id (the text prints it as job=%p),
 * the job type's name in ring (create's __print_symbolic), the pvr_context in entity, the
 * done fence's seqno in fence_seqno (submit_fw; no context: not wide).
 */
static __always_inline int on_pvr(__u16 hook, struct pvr_job___gd *job, bool create, bool seqno)
{
	struct record *r = rec_reserve(hook);
	if (!r)
		return 0;
	r->job_id = (__u64)job;
	r->ptr = (__u64)job;
	if (job && create) {
		r->entity = (__u64)BPF_CORE_READ(job, ctx);
		switch (BPF_CORE_READ(job, type)) {
		case 0:
			__builtin_memcpy(r->ring, "geometry", 9);
			break;
		case 1:
			__builtin_memcpy(r->ring, "fragment", 9);
			break;
		case 2:
			__builtin_memcpy(r->ring, "compute", 8);
			break;
		case 3:
			__builtin_memcpy(r->ring, "transfer", 9);
			break;
		}
	}
	if (job && seqno) {
		struct dma_fence *f = BPF_CORE_READ(job, done_fence);
		if (f) {
			r->fence_seqno = BPF_CORE_READ(f, seqno);
			r->flags |= RF_HAS_FENCE;
		}
	}
	rec_submit(r);
	return 0;
}

SEC("tp_btf/pvr_job_create")
int BPF_PROG(tpbtf_pvr_job_create, void *pvr_dev, struct pvr_job___gd *job, __u32 sync_op_count)
{
	return on_pvr(HOOK_PVR_JOB_CREATE, job, true, false);
}

SEC("tp_btf/pvr_job_submit_fw")
int BPF_PROG(tpbtf_pvr_job_submit_fw, struct pvr_job___gd *job)
{
	return on_pvr(HOOK_PVR_JOB_SUBMIT_FW, job, false, true);
}

SEC("tp_btf/pvr_job_done")
int BPF_PROG(tpbtf_pvr_job_done, struct pvr_job___gd *job)
{
	return on_pvr(HOOK_PVR_JOB_DONE, job, false, false);
}

/*
 * ivpu (ivpu_trace.h, TRACE_SYSTEM vpu, event "job"): the step string in ring (record.go
 * moves it to the event's text), job_id, the context id in entity, the engine index in
 * arg. The classic rung is refused for it (a const char * field: the raw entry holds the
 * pointer; internal/ftrace NewEntryFormat).
 */
SEC("tp_btf/job")
int BPF_PROG(tpbtf_job, const char *step, struct ivpu_job___gd *job)
{
	struct record *r = rec_reserve(HOOK_JOB);
	if (!r)
		return 0;
	r->ptr = (__u64)job;
	if (step)
		bpf_probe_read_kernel_str(r->ring, sizeof(r->ring), step);
	if (job) {
		r->job_id = BPF_CORE_READ(job, job_id);
		r->arg = BPF_CORE_READ(job, engine_idx);
		r->entity = BPF_CORE_READ(job, file_priv, ctx.id);
	}
	rec_submit(r);
	return 0;
}

/*
 * amdxdna (include/trace/events/amdxdna.h): the scheduler job's finished fence (as the
 * scheduler's programs read it), the hardware context's name in ring, the step string in
 * dev (record.go moves it to the event's text). Four arguments: the header's earlier
 * version has no op.
 */
SEC("tp_btf/xdna_job")
int BPF_PROG(tpbtf_xdna_job, struct drm_sched_job___gd *sched_job, const char *name, const char *str, __u64 seq)
{
	struct record *r = rec_reserve(HOOK_XDNA_JOB);
	if (!r)
		return 0;
	r->ptr = (__u64)sched_job;
	if (sched_job)
		read_sjob(r, sched_job);
	if (name)
		bpf_probe_read_kernel_str(r->ring, sizeof(r->ring), name);
	if (str)
		bpf_probe_read_kernel_str(r->dev, sizeof(r->dev), str);
	rec_submit(r);
	return 0;
}

/*
 * Classic tracepoints (TRACE_SYSTEM amdgpu, i915, xe, drm_msm_gpu, virtio_gpu, v3d, vc4,
 * pvr, vpu, amdxdna): the raw entry, one program per row of the event table with a live
 * hook (driver_hooks.h, generated).
 */
DRIVER_RAW_COPIES
