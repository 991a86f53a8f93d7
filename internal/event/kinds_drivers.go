// Code generated from internal/eventdef/table.go by internal/eventdef/kindgen (go generate ./internal/event); DO NOT EDIT.

// The kinds of drivers' own events: one per event table row that names its kind
// (eventdef.Event.KindName), in table order, after the core's kinds (event.go).

package event

const (
	I915RequestQueue     Kind = firstDriverKind + iota // i915: i915_gem_ring_dispatch, i915_gem_request_queue, i915_request_queue
	I915RequestAdd                                     // i915: i915_gem_request_add, i915_request_add
	I915RequestSubmit                                  // i915: i915_gem_request_submit, i915_request_submit
	I915RequestIn                                      // i915: i915_gem_request_in, i915_request_in
	I915RequestOut                                     // i915: i915_gem_request_out, i915_request_out
	I915RequestRetire                                  // i915: i915_gem_request_retire, i915_request_retire
	I915RequestWaitBegin                               // i915: i915_gem_request_wait_begin, i915_request_wait_begin
	I915RequestWaitEnd                                 // i915: i915_gem_request_wait_end, i915_request_wait_end
	I915RequestComplete                                // i915: i915_gem_request_complete, i915_gem_request_notify
	XeSchedJobCreate                                   // xe: xe_sched_job_create
	XeSchedJobExec                                     // xe: xe_sched_job_exec
	XeSchedJobRun                                      // xe: xe_sched_job_run
	XeSchedJobFree                                     // xe: xe_sched_job_free
	XeHwFenceCreate                                    // xe: xe_hw_fence_create
	XeHwFenceSignal                                    // xe: xe_hw_fence_signal
	XeHwFenceFree                                      // xe: xe_hw_fence_free
	MsmSubmit                                          // msm: msm_gpu_submit
	MsmSubmitFlush                                     // msm: msm_gpu_submit_flush
	MsmSubmitRetired                                   // msm: msm_gpu_submit_retired
	VirtioGPUCmdQueue                                  // virtio_gpu: virtio_gpu_cmd_queue
	VirtioGPUCmdResponse                               // virtio_gpu: virtio_gpu_cmd_response
	V3DSubmitCL                                        // v3d: v3d_submit_cl
	V3DSubmitTFU                                       // v3d: v3d_submit_tfu
	V3DSubmitCSD                                       // v3d: v3d_submit_csd
	V3DBinIRQ                                          // v3d: v3d_bcl_irq
	V3DRenderIRQ                                       // v3d: v3d_rcl_irq
	V3DTFUIRQ                                          // v3d: v3d_tfu_irq
	V3DCSDIRQ                                          // v3d: v3d_csd_irq
	V3DCacheCleanBegin                                 // v3d: v3d_cache_clean_begin
	V3DCacheCleanEnd                                   // v3d: v3d_cache_clean_end
	VC4SubmitCL                                        // vc4: vc4_submit_cl
	VC4BinEndIRQ                                       // vc4: vc4_bcl_end_irq
	VC4RenderEndIRQ                                    // vc4: vc4_rcl_end_irq
	PVRJobCreate                                       // powervr: pvr_job_create
	PVRJobSubmitFW                                     // powervr: pvr_job_submit_fw
	PVRJobDone                                         // powervr: pvr_job_done
	IVPUJob                                            // intel_vpu: job
	XDNAJob                                            // amdxdna: xdna_job

	endDriverKinds // the core's kinds go on after the drivers' (event.go)
)

// driverKindNames are the drivers' kinds' names, from firstDriverKind on.
var driverKindNames = [endDriverKinds - firstDriverKind]string{
	I915RequestQueue - firstDriverKind:     "i915_request_queue",
	I915RequestAdd - firstDriverKind:       "i915_request_add",
	I915RequestSubmit - firstDriverKind:    "i915_request_submit",
	I915RequestIn - firstDriverKind:        "i915_request_in",
	I915RequestOut - firstDriverKind:       "i915_request_out",
	I915RequestRetire - firstDriverKind:    "i915_request_retire",
	I915RequestWaitBegin - firstDriverKind: "i915_request_wait_begin",
	I915RequestWaitEnd - firstDriverKind:   "i915_request_wait_end",
	I915RequestComplete - firstDriverKind:  "i915_request_complete",
	XeSchedJobCreate - firstDriverKind:     "xe_sched_job_create",
	XeSchedJobExec - firstDriverKind:       "xe_sched_job_exec",
	XeSchedJobRun - firstDriverKind:        "xe_sched_job_run",
	XeSchedJobFree - firstDriverKind:       "xe_sched_job_free",
	XeHwFenceCreate - firstDriverKind:      "xe_hw_fence_create",
	XeHwFenceSignal - firstDriverKind:      "xe_hw_fence_signal",
	XeHwFenceFree - firstDriverKind:        "xe_hw_fence_free",
	MsmSubmit - firstDriverKind:            "msm_submit",
	MsmSubmitFlush - firstDriverKind:       "msm_submit_flush",
	MsmSubmitRetired - firstDriverKind:     "msm_submit_retired",
	VirtioGPUCmdQueue - firstDriverKind:    "virtio_gpu_cmd_queue",
	VirtioGPUCmdResponse - firstDriverKind: "virtio_gpu_cmd_response",
	V3DSubmitCL - firstDriverKind:          "v3d_submit_cl",
	V3DSubmitTFU - firstDriverKind:         "v3d_submit_tfu",
	V3DSubmitCSD - firstDriverKind:         "v3d_submit_csd",
	V3DBinIRQ - firstDriverKind:            "v3d_bin_irq",
	V3DRenderIRQ - firstDriverKind:         "v3d_render_irq",
	V3DTFUIRQ - firstDriverKind:            "v3d_tfu_irq",
	V3DCSDIRQ - firstDriverKind:            "v3d_csd_irq",
	V3DCacheCleanBegin - firstDriverKind:   "v3d_cache_clean_begin",
	V3DCacheCleanEnd - firstDriverKind:     "v3d_cache_clean_end",
	VC4SubmitCL - firstDriverKind:          "vc4_submit_cl",
	VC4BinEndIRQ - firstDriverKind:         "vc4_bin_end_irq",
	VC4RenderEndIRQ - firstDriverKind:      "vc4_render_end_irq",
	PVRJobCreate - firstDriverKind:         "pvr_job_create",
	PVRJobSubmitFW - firstDriverKind:       "pvr_job_submit_fw",
	PVRJobDone - firstDriverKind:           "pvr_job_done",
	IVPUJob - firstDriverKind:              "ivpu_job",
	XDNAJob - firstDriverKind:              "xdna_job",
}
