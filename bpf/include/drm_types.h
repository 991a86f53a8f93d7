/* SPDX-License-Identifier: (GPL-2.0-only OR MIT) */
/*
 * GPU driver types that vmlinux.h of a DRM-less build host does not contain (verified:
 * the committed vmlinux.h has no drm_sched_* type). They live in module BTF on the
 * target (gpu-sched.ko, amdgpu.ko, ...), and CO-RE relocates every access against it,
 * so only the members we read are declared, by name, with preserve_access_index.
 * Members that changed across kernel versions are guarded by bpf_core_field_exists().
 *
 * The ___gd suffix keeps these from clashing with a vmlinux.h that does contain the
 * real types (a build host with DRM built in); libbpf/cilium CO-RE ignore the
 * ___suffix when matching names.
 */
#pragma once

#include "vmlinux.h"

struct drm_gpu_scheduler___gd {
	const char *name;
	struct device *dev; /* since 6.0 */
} __attribute__((preserve_access_index));

struct drm_sched_fence___gd {
	struct dma_fence scheduled;
	struct dma_fence finished;
	struct dma_fence *parent;
	__u64 drm_client_id; /* 6.17+ */
} __attribute__((preserve_access_index));

struct drm_sched_job___gd {
	struct drm_gpu_scheduler___gd *sched;
	struct drm_sched_fence___gd *s_fence;
	void *entity;
	__u64 id; /* removed in 6.17 ("drm: Get rid of drm_sched_job.id") */
} __attribute__((preserve_access_index));

/* amdgpu: struct amdgpu_job embeds the scheduler job as its first member `base`. */
struct amdgpu_job___gd {
	struct drm_sched_job___gd base;
} __attribute__((preserve_access_index));

/* i915: the request is its own dma_fence; engine->name is the ring. */
struct intel_engine_cs___gd {
	char name[16];
} __attribute__((preserve_access_index));

struct i915_request___gd {
	struct dma_fence fence;
	struct intel_engine_cs___gd *engine;
} __attribute__((preserve_access_index));

/* xe */
struct xe_sched_job___gd {
	struct drm_sched_job___gd drm;
	struct dma_fence *fence; /* hardware fence (set once the job is armed) */
} __attribute__((preserve_access_index));

struct xe_hw_fence___gd {
	struct dma_fence dma;
} __attribute__((preserve_access_index));

/* msm */
struct msm_ringbuffer___gd {
	int id;
} __attribute__((preserve_access_index));

struct msm_gem_submit___gd {
	__u32 seqno;
	__u32 ident;
	struct msm_ringbuffer___gd *ring;
} __attribute__((preserve_access_index));

/* virtio_gpu: the virtqueue (virtio core) and the command header (uapi virtio_gpu.h) */
struct virtio_device___gd {
	int index;
} __attribute__((preserve_access_index));

struct virtqueue___gd {
	struct virtio_device___gd *vdev;
	unsigned int index;
} __attribute__((preserve_access_index));

struct virtio_gpu_ctrl_hdr___gd {
	__u32 type; /* __le32, as every field: read on little-endian targets only */
	__u32 flags;
	__u64 fence_id;
	__u32 ctx_id;
} __attribute__((preserve_access_index));

/*
 * The DRM file → driver chain, to name the driver of a submit ioctl (scheduler events do
 * not): filp->private_data is the struct drm_file of every DRM file (drm_open).
 */
struct drm_driver___gd {
	const char *name;
} __attribute__((preserve_access_index));

struct drm_minor___gd;

struct drm_device___gd {
	const struct drm_driver___gd *driver;
	struct drm_minor___gd *primary; /* v3d's events print primary->index as dev= */
} __attribute__((preserve_access_index));

struct drm_minor___gd {
	int index;
	struct drm_device___gd *dev;
} __attribute__((preserve_access_index));

struct drm_file___gd {
	struct drm_minor___gd *minor;
	__u64 client_id; /* 6.5+ ("drm: Add common fdinfo helper"): fdinfo's drm-client-id */
} __attribute__((preserve_access_index));

/* imagination (pvr_job.h): the members pvr_trace.h reads. type is enum drm_pvr_job_type
 * (uapi: GEOMETRY 0, FRAGMENT 1, COMPUTE 2, TRANSFER_FRAG 3). */
struct pvr_job___gd {
	void *ctx;
	__u32 type;
	struct dma_fence *done_fence;
} __attribute__((preserve_access_index));

/* ivpu (ivpu_job.h, ivpu_drv.h): job->file_priv->ctx.id, engine_idx, job_id. */
struct ivpu_mmu_context___gd {
	__u32 id;
} __attribute__((preserve_access_index));

struct ivpu_file_priv___gd {
	struct ivpu_mmu_context___gd ctx;
} __attribute__((preserve_access_index));

struct ivpu_job___gd {
	struct ivpu_file_priv___gd *file_priv;
	__u32 job_id;
	__u32 engine_idx;
} __attribute__((preserve_access_index));
