/* SPDX-License-Identifier: (GPL-2.0-only OR MIT) */
/*
 * Code generated from internal/eventdef/table.go by internal/eventdef/cheader
 * (make generate); DO NOT EDIT.
 *
 * The live hooks of drivers' own events: DRIVER_HOOKS are their enum hook values
 * (ghostdriver.h), DRIVER_RAW_COPIES their classic-tracepoint programs, which copy the
 * raw trace entry (drivers.c). Their tp_btf programs are written in drivers.c.
 */
#pragma once

#define DRIVER_HOOKS \
	HOOK_AMDGPU_CS_IOCTL = 40, \
	HOOK_AMDGPU_SCHED_RUN_JOB = 41, \
	HOOK_I915_REQUEST_QUEUE = 50, \
	HOOK_I915_REQUEST_ADD = 51, \
	HOOK_I915_REQUEST_SUBMIT = 52, \
	HOOK_I915_REQUEST_IN = 53, \
	HOOK_I915_REQUEST_OUT = 54, \
	HOOK_I915_REQUEST_RETIRE = 55, \
	HOOK_I915_REQUEST_WAIT_BEGIN = 56, \
	HOOK_I915_REQUEST_WAIT_END = 57, \
	HOOK_XE_SCHED_JOB_CREATE = 60, \
	HOOK_XE_SCHED_JOB_EXEC = 61, \
	HOOK_XE_SCHED_JOB_RUN = 62, \
	HOOK_XE_SCHED_JOB_FREE = 63, \
	HOOK_XE_HW_FENCE_CREATE = 64, \
	HOOK_XE_HW_FENCE_SIGNAL = 65, \
	HOOK_XE_HW_FENCE_FREE = 66, \
	HOOK_MSM_GPU_SUBMIT = 70, \
	HOOK_MSM_GPU_SUBMIT_FLUSH = 71, \
	HOOK_MSM_GPU_SUBMIT_RETIRED = 72, \
	HOOK_VIRTIO_GPU_CMD_QUEUE = 90, \
	HOOK_VIRTIO_GPU_CMD_RESPONSE = 91,

#define DRIVER_RAW_COPIES \
	RAW_TRACEPOINT_COPY(amdgpu, amdgpu_cs_ioctl, HOOK_AMDGPU_CS_IOCTL) \
	RAW_TRACEPOINT_COPY(amdgpu, amdgpu_sched_run_job, HOOK_AMDGPU_SCHED_RUN_JOB) \
	RAW_TRACEPOINT_COPY(i915, i915_request_queue, HOOK_I915_REQUEST_QUEUE) \
	RAW_TRACEPOINT_COPY(i915, i915_request_add, HOOK_I915_REQUEST_ADD) \
	RAW_TRACEPOINT_COPY(i915, i915_request_submit, HOOK_I915_REQUEST_SUBMIT) \
	RAW_TRACEPOINT_COPY(i915, i915_request_in, HOOK_I915_REQUEST_IN) \
	RAW_TRACEPOINT_COPY(i915, i915_request_out, HOOK_I915_REQUEST_OUT) \
	RAW_TRACEPOINT_COPY(i915, i915_request_retire, HOOK_I915_REQUEST_RETIRE) \
	RAW_TRACEPOINT_COPY(i915, i915_request_wait_begin, HOOK_I915_REQUEST_WAIT_BEGIN) \
	RAW_TRACEPOINT_COPY(i915, i915_request_wait_end, HOOK_I915_REQUEST_WAIT_END) \
	RAW_TRACEPOINT_COPY(xe, xe_sched_job_create, HOOK_XE_SCHED_JOB_CREATE) \
	RAW_TRACEPOINT_COPY(xe, xe_sched_job_exec, HOOK_XE_SCHED_JOB_EXEC) \
	RAW_TRACEPOINT_COPY(xe, xe_sched_job_run, HOOK_XE_SCHED_JOB_RUN) \
	RAW_TRACEPOINT_COPY(xe, xe_sched_job_free, HOOK_XE_SCHED_JOB_FREE) \
	RAW_TRACEPOINT_COPY(xe, xe_hw_fence_create, HOOK_XE_HW_FENCE_CREATE) \
	RAW_TRACEPOINT_COPY(xe, xe_hw_fence_signal, HOOK_XE_HW_FENCE_SIGNAL) \
	RAW_TRACEPOINT_COPY(xe, xe_hw_fence_free, HOOK_XE_HW_FENCE_FREE) \
	RAW_TRACEPOINT_COPY(drm_msm_gpu, msm_gpu_submit, HOOK_MSM_GPU_SUBMIT) \
	RAW_TRACEPOINT_COPY(drm_msm_gpu, msm_gpu_submit_flush, HOOK_MSM_GPU_SUBMIT_FLUSH) \
	RAW_TRACEPOINT_COPY(drm_msm_gpu, msm_gpu_submit_retired, HOOK_MSM_GPU_SUBMIT_RETIRED) \
	RAW_TRACEPOINT_COPY(virtio_gpu, virtio_gpu_cmd_queue, HOOK_VIRTIO_GPU_CMD_QUEUE) \
	RAW_TRACEPOINT_COPY(virtio_gpu, virtio_gpu_cmd_response, HOOK_VIRTIO_GPU_CMD_RESPONSE)
