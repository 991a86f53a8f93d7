/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * vgpu UAPI: the ioctls of the test-only virtual GPU (testdata/vgpu/kmod/vgpu.c).
 *
 * Shared by the kernel module and the test application. User space does not
 * need libdrm headers: the few core DRM ioctls the app uses (syncobj) are
 * declared below with their upstream numbers (include/uapi/drm/drm.h).
 */
#ifndef VGPU_DRM_H
#define VGPU_DRM_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <drm/drm.h>
#else
#include <linux/types.h>
#include <linux/ioctl.h>
#define DRM_IOCTL_BASE 'd'
#define DRM_IO(nr) _IO(DRM_IOCTL_BASE, nr)
#define DRM_IOWR(nr, type) _IOWR(DRM_IOCTL_BASE, nr, type)
#define DRM_COMMAND_BASE 0x40

struct drm_syncobj_create {
	__u32 handle;
	__u32 flags;
};
struct drm_syncobj_destroy {
	__u32 handle;
	__u32 pad;
};
struct drm_syncobj_handle {
	__u32 handle;
	__u32 flags;
	__s32 fd;
	__u32 pad;
};
struct drm_syncobj_wait {
	__u64 handles;
	__s64 timeout_nsec;
	__u32 count_handles;
	__u32 flags;
	__u32 first_signaled;
	__u32 pad;
};
#define DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL (1 << 0)
#define DRM_IOCTL_SYNCOBJ_CREATE DRM_IOWR(0xBF, struct drm_syncobj_create)
#define DRM_IOCTL_SYNCOBJ_DESTROY DRM_IOWR(0xC0, struct drm_syncobj_destroy)
#define DRM_IOCTL_SYNCOBJ_WAIT DRM_IOWR(0xC3, struct drm_syncobj_wait)
#endif

#define VGPU_NUM_RINGS 2
#define VGPU_MAX_BOS 64

struct drm_vgpu_bo_create {
	__u64 size;	/* in: bytes */
	__u32 handle;	/* out: GEM handle */
	__u32 pad;
};

/* flags of drm_vgpu_submit */
#define VGPU_SUBMIT_IN_SYNCOBJ   (1u << 0) /* wait for in_syncobj's fence */
#define VGPU_SUBMIT_IN_FENCE_FD  (1u << 1) /* wait for the sync_file in_fence_fd */
#define VGPU_SUBMIT_OUT_SYNCOBJ  (1u << 2) /* put the finished fence into out_syncobj */
#define VGPU_SUBMIT_OUT_FENCE_FD (1u << 3) /* return a sync_file of the finished fence */
#define VGPU_SUBMIT_FLAGS        0xfu

struct drm_vgpu_submit {
	__u64 bo_handles;	/* in: pointer to __u32[bo_count] */
	__u32 bo_count;		/* in */
	__u32 ring;		/* in: 0 .. VGPU_NUM_RINGS-1 */
	__u64 engine_ns;	/* in: modelled engine time of the job */
	__u32 flags;		/* in: VGPU_SUBMIT_* */
	__u32 in_syncobj;	/* in */
	__s32 in_fence_fd;	/* in */
	__u32 out_syncobj;	/* in */
	__s32 out_fence_fd;	/* out: sync_file fd (VGPU_SUBMIT_OUT_FENCE_FD) */
	__u32 pad;
	__u64 fence_context;	/* out: the scheduler's finished fence */
	__u64 fence_seqno;	/* out */
};

#define DRM_VGPU_BO_CREATE 0x00
#define DRM_VGPU_SUBMIT    0x01

#define DRM_IOCTL_VGPU_BO_CREATE \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_VGPU_BO_CREATE, struct drm_vgpu_bo_create)
#define DRM_IOCTL_VGPU_SUBMIT \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_VGPU_SUBMIT, struct drm_vgpu_submit)

#endif /* VGPU_DRM_H */
