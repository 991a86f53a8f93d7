// One line per print-format generation in the event table, rendered from the kernel's
// TP_printk format with realistic values, exactly as printk prints it (these lines are
// rendered from the formats, not real captures: the real lines are in capture_test.go and
// snippets_test.go). Each must decode to the exact event.

package ftrace

import (
	"fmt"
	"testing"

	"github.com/ghostdriver/ghostdriver/internal/event"
)

// The header every rendered line carries, as tracefs prints it (kernel/trace/
// trace_output.c: "%16s-%-7d " comm-pid, "[%03d] " cpu, five irq-flags characters,
// "%5lu.%06lu: " timestamp, then "%s: " the event name).
const (
	rComm = "kworker/u64:3"
	rTID  = 412
	rCPU  = 5
	rTime = 1234_567_890_000
)

func rendered(name, payload string) string {
	return fmt.Sprintf("%16s-%-7d [%03d] d..1. %5d.%06d: %s: %s", rComm, rTID, rCPU, 1234, 567890, name, payload)
}

type formatCase struct {
	name    string // event name as printed
	payload string
	want    event.Event // payload fields and Kind; header fields and Name are added
}

var formatCases = []formatCase{
	// gpu_scheduler ≤6.16: pointers only (hashed %p since 4.15).
	{"drm_sched_job", "entity=0000000076f0d517, id=1, fence=000000008dd56028, ring=gfx, job count:0, hw job count:0",
		event.Event{Kind: event.JobQueue, Entity: 0x76f0d517, JobID: 1, FencePtr: 0x8dd56028, Ring: "gfx"}},
	{"drm_run_job", "entity=0000000076f0d517, id=1, fence=000000008dd56028, ring=gfx, job count:0, hw job count:1",
		event.Event{Kind: event.JobRun, Entity: 0x76f0d517, JobID: 1, FencePtr: 0x8dd56028, Ring: "gfx"}},
	{"drm_sched_process_job", "fence=000000008dd56028 signaled",
		event.Event{Kind: event.JobDone, FencePtr: 0x8dd56028}},
	{"drm_sched_job_wait_dep", "job ring=gfx, id=4711, depends fence=0000000031f2e5a7, context=1278, seq=2201",
		event.Event{Kind: event.JobDependency, Ring: "gfx", JobID: 4711, Dep: fk(1278, 2201)}},
	// 312a2ebb: dev= prefix.
	{"drm_run_job", "dev=0000:03:00.0, entity=00000000a3c51e2b, id=4711, fence=00000000d1e2f3a4, ring=gfx_0.0.0, job count:1, hw job count:2",
		event.Event{Kind: event.JobRun, Device: "0000:03:00.0", Entity: 0xa3c51e2b, JobID: 4711, FencePtr: 0xd1e2f3a4, Ring: "gfx_0.0.0"}},
	// d6319892: 64-bit fence keys.
	{"drm_sched_job", "dev=0000:03:00.0, id=4712, fence=1291:4712, ring=gfx_0.0.0, job count:0, hw job count:1",
		event.Event{Kind: event.JobQueue, Device: "0000:03:00.0", JobID: 4712, Fence: fk(1291, 4712), FenceWide: true, Ring: "gfx_0.0.0"}},
	{"drm_sched_process_job", "fence=1291:4712 signaled",
		event.Event{Kind: event.JobDone, Fence: fk(1291, 4712), FenceWide: true}},
	{"drm_sched_job_wait_dep", "fence=1291:4712, id=4712 depends on unsignalled fence=1278:2201",
		event.Event{Kind: event.JobDependency, Fence: fk(1291, 4712), FenceWide: true, JobID: 4712, Dep: fk(1278, 2201), DepWide: true}},
	{"drm_sched_job_add_dep", "fence=1291:4712, id=4712 depends on fence=1278:2201",
		event.Event{Kind: event.JobDependency, Fence: fk(1291, 4712), FenceWide: true, JobID: 4712, Dep: fk(1278, 2201), DepWide: true}},
	// 5fe9e6aa / def54f40: client_id, then the 6.17 names.
	{"drm_sched_job_queue", "dev=0000:04:00.0, id=17, fence=401:1, ring=gfx_0.0.0, job count:0, hw job count:0, client_id:13",
		event.Event{Kind: event.JobQueue, Device: "0000:04:00.0", JobID: 17, Fence: fk(401, 1), FenceWide: true, Ring: "gfx_0.0.0", ClientID: 13}},
	{"drm_sched_job_unschedulable", "fence=401:2, id=18 depends on unsignalled fence=399:88",
		event.Event{Kind: event.JobDependency, Fence: fk(401, 2), FenceWide: true, JobID: 18, Dep: fk(399, 88), DepWide: true}},
	{"drm_sched_job_done", "fence=401:1 signaled",
		event.Event{Kind: event.JobDone, Fence: fk(401, 1), FenceWide: true}},
	// 0d27480e: no job id.
	{"drm_sched_job_run", "dev=0000:04:00.0, fence=401:1, ring=gfx_0.0.0, job count:0, hw job count:1, client_id:13",
		event.Event{Kind: event.JobRun, Device: "0000:04:00.0", Fence: fk(401, 1), FenceWide: true, Ring: "gfx_0.0.0", ClientID: 13}},
	{"drm_sched_job_add_dep", "fence=401:2 depends on fence=399:88",
		event.Event{Kind: event.JobDependency, Fence: fk(401, 2), FenceWide: true, Dep: fk(399, 88), DepWide: true}},
	{"drm_sched_job_unschedulable", "fence=401:2 depends on unsignalled fence=18446744073709551615:88",
		event.Event{Kind: event.JobDependency, Fence: fk(401, 2), FenceWide: true, Dep: fk(1<<64-1, 88), DepWide: true}},

	// amdgpu, every generation. Pre-4.15 %p prints the raw pointer; a char* %s is
	// dereferenced by tracefs (trace-cmd prints the pointer: see capture_test.go).
	{"amdgpu_cs_ioctl", "adev=ffff8801e3a00000, sched_job=ffff8801d2c4b800, first ib=ffff8801d2c4b8a8, sched fence=ffff8801c1f0e540, ring name:gfx, num_ibs:1",
		event.Event{Kind: event.JobQueue, Driver: "amdgpu", JobID: 0xffff8801d2c4b800, FencePtr: 0xffff8801c1f0e540, Ring: "gfx"}},
	{"amdgpu_sched_run_job", "adev=ffff8801e3a00000, sched_job=ffff8801d2c4b800, first ib=ffff8801d2c4b8a8, sched fence=ffff8801c1f0e540, ring name=gfx, num_ibs=1",
		event.Event{Kind: event.JobRun, Driver: "amdgpu", JobID: 0xffff8801d2c4b800, FencePtr: 0xffff8801c1f0e540, Ring: "gfx"}},
	{"amdgpu_sched_run_job", "adev=ffff8801e3a00000, sched_job=ffff8801d2c4b800, first ib=ffff8801d2c4b8a8, sched fence=ffff8801c1f0e540, timeline=gfx, context=249, seqno=91446, ring name=gfx, num_ibs=1",
		event.Event{Kind: event.JobRun, Driver: "amdgpu", JobID: 0xffff8801d2c4b800, FencePtr: 0xffff8801c1f0e540, Timeline: "gfx", Fence: fk(249, 91446), Ring: "gfx"}},
	{"amdgpu_cs_ioctl", "adev=ffff8801e3a00000, sched_job=ffff8801d2c4b800, first_ib=ffff8801d2c4b8a8, sched_fence=ffff8801c1f0e540, ring_name=gfx, num_ibs=1",
		event.Event{Kind: event.JobQueue, Driver: "amdgpu", JobID: 0xffff8801d2c4b800, FencePtr: 0xffff8801c1f0e540, Ring: "gfx"}},
	{"amdgpu_sched_run_job", "adev=ffff8801e3a00000, sched_job=ffff8801d2c4b800, first_ib=ffff8801d2c4b8a8, sched_fence=ffff8801c1f0e540, timeline=gfx, context=249, seqno=91446, ring_name=gfx, num_ibs=1",
		event.Event{Kind: event.JobRun, Driver: "amdgpu", JobID: 0xffff8801d2c4b800, FencePtr: 0xffff8801c1f0e540, Timeline: "gfx", Fence: fk(249, 91446), Ring: "gfx"}},
	{"amdgpu_cs_ioctl", "adev=ffff8801e3a00000, sched_job=185904, first_ib=ffff8801d2c4b8a8, sched_fence=ffff8801c1f0e540, ring_name=gfx, num_ibs=1",
		event.Event{Kind: event.JobQueue, Driver: "amdgpu", JobID: 185904, FencePtr: 0xffff8801c1f0e540, Ring: "gfx"}},
	{"amdgpu_sched_run_job", "adev=ffff8801e3a00000, sched_job=185904, first_ib=ffff8801d2c4b8a8, sched_fence=ffff8801c1f0e540, timeline=gfx, context=249, seqno=91446, ring_name=gfx, num_ibs=1",
		event.Event{Kind: event.JobRun, Driver: "amdgpu", JobID: 185904, FencePtr: 0xffff8801c1f0e540, Timeline: "gfx", Fence: fk(249, 91446), Ring: "gfx"}},
	{"amdgpu_cs_ioctl", "sched_job=185904, sched_fence=ffff8801c1f0e540, ring_name=gfx, num_ibs=3",
		event.Event{Kind: event.JobQueue, Driver: "amdgpu", JobID: 185904, FencePtr: 0xffff8801c1f0e540, Ring: "gfx"}},
	{"amdgpu_sched_run_job", "sched_job=12, timeline=gfx_0.0.0, context=234, seqno=2, ring_name=gfx_0.0.0, num_ibs=1",
		event.Event{Kind: event.JobRun, Driver: "amdgpu", JobID: 12, Timeline: "gfx_0.0.0", Fence: fk(234, 2), Ring: "gfx_0.0.0"}},
	{"amdgpu_cs_ioctl", "timeline=gfx_0.0.0, context=234, seqno=2, ring_name=gfx_0.0.0, num_ibs=1",
		event.Event{Kind: event.JobQueue, Driver: "amdgpu", Timeline: "gfx_0.0.0", Fence: fk(234, 2), Ring: "gfx_0.0.0"}},
	{"amdgpu_sched_run_job", "timeline=gfx_0.0.0, fence=234:2, ring_name=gfx_0.0.0, num_ibs=1",
		event.Event{Kind: event.JobRun, Driver: "amdgpu", Timeline: "gfx_0.0.0", Fence: fk(234, 2), FenceWide: true, Ring: "gfx_0.0.0"}},

	// dma_fence (≥4.10), fence (≤4.9), and the 6.17..7.0 detached names (V4).
	{"dma_fence_init", "driver=drm_sched timeline=gfx_0.0.0 context=1291 seqno=4712",
		event.Event{Kind: event.FenceInit, Driver: "drm_sched", Timeline: "gfx_0.0.0", Fence: fk(1291, 4712)}},
	{"dma_fence_emit", "driver=amdgpu timeline=gfx_0.0.0 context=12 seqno=99081",
		event.Event{Kind: event.FenceEmit, Driver: "amdgpu", Timeline: "gfx_0.0.0", Fence: fk(12, 99081)}},
	{"dma_fence_enable_signal", "driver=amdgpu timeline=gfx_0.0.0 context=12 seqno=99081",
		event.Event{Kind: event.FenceEnableSignal, Driver: "amdgpu", Timeline: "gfx_0.0.0", Fence: fk(12, 99081)}},
	{"dma_fence_signaled", "driver=amdgpu timeline=gfx_0.0.0 context=12 seqno=99081",
		event.Event{Kind: event.FenceSignaled, Driver: "amdgpu", Timeline: "gfx_0.0.0", Fence: fk(12, 99081)}},
	{"dma_fence_wait_start", "driver=drm_sched timeline=gfx_0.0.0 context=1291 seqno=4712",
		event.Event{Kind: event.FenceWaitStart, Driver: "drm_sched", Timeline: "gfx_0.0.0", Fence: fk(1291, 4712)}},
	{"dma_fence_wait_end", "driver=detached-driver timeline=signaled-timeline context=1291 seqno=4712",
		event.Event{Kind: event.FenceWaitEnd, Driver: "detached-driver", Timeline: "signaled-timeline", Fence: fk(1291, 4712)}},
	{"dma_fence_destroy", "driver=detached-driver timeline=signaled-timeline context=1291 seqno=4712",
		event.Event{Kind: event.FenceDestroy, Driver: "detached-driver", Timeline: "signaled-timeline", Fence: fk(1291, 4712)}},
	{"fence_init", "driver=i915 timeline=ctx 3 ring 0 context=33 seqno=512",
		event.Event{Kind: event.FenceInit, Driver: "i915", Timeline: "ctx 3 ring 0", Fence: fk(33, 512)}},
	{"fence_emit", "driver=amd_sched timeline=gfx context=249 seqno=91446",
		event.Event{Kind: event.FenceEmit, Driver: "amd_sched", Timeline: "gfx", Fence: fk(249, 91446)}},
	{"fence_enable_signal", "driver=amd_sched timeline=gfx context=249 seqno=91446",
		event.Event{Kind: event.FenceEnableSignal, Driver: "amd_sched", Timeline: "gfx", Fence: fk(249, 91446)}},
	{"fence_wait_start", "driver=amd_sched timeline=gfx context=249 seqno=91446",
		event.Event{Kind: event.FenceWaitStart, Driver: "amd_sched", Timeline: "gfx", Fence: fk(249, 91446)}},
	{"fence_wait_end", "driver=amd_sched timeline=gfx context=249 seqno=91446",
		event.Event{Kind: event.FenceWaitEnd, Driver: "amd_sched", Timeline: "gfx", Fence: fk(249, 91446)}},
	{"fence_destroy", "driver=amd_sched timeline=gfx context=249 seqno=91446",
		event.Event{Kind: event.FenceDestroy, Driver: "amd_sched", Timeline: "gfx", Fence: fk(249, 91446)}},
	{"fence_annotate_wait_on", "driver=sw_sync timeline=display context=7 seqno=30 waits on driver=amd_sched timeline=gfx context=249 seqno=91446",
		event.Event{Kind: event.JobDependency, Driver: "sw_sync", Timeline: "display", Fence: fk(7, 30), Dep: fk(249, 91446)}},
	{"dma_fence_used_as_dependency", "driver=drm_sched timeline=gfx_0.0.0 context=270 seqno=73240 reason=dma_fence_chain_init",
		event.Event{Kind: event.FenceUsedAsDep, Driver: "drm_sched", Timeline: "gfx_0.0.0", Fence: fk(270, 73240), Text: "dma_fence_chain_init"}},

	// xe: the job's fence pointer is its identity.
	{"xe_sched_job_create", "fence=00000000c6a4e1f2, seqno=4294967295, guc_id=3, batch_addr=0x0000001a0000, guc_state=0x0, flags=0x0, error=0",
		event.Event{Kind: event.XeSchedJobCreate, Driver: "xe", FencePtr: 0xc6a4e1f2, JobID: 0xc6a4e1f2, Fence: fk(0, 4294967295)}},
	{"xe_sched_job_exec", "fence=00000000c6a4e1f2, seqno=82, lrc_seqno=82, guc_id=3, batch_addr=0x0000001a0000, guc_state=0x1, flags=0x0, error=0",
		event.Event{Kind: event.XeSchedJobExec, Driver: "xe", FencePtr: 0xc6a4e1f2, JobID: 0xc6a4e1f2, Fence: fk(0, 82)}},
	{"xe_sched_job_run", "dev=0000:03:00.0, fence=00000000c6a4e1f2, seqno=82, lrc_seqno=82, guc_id=3, batch_addr=0x0000001a0000, guc_state=0x1, flags=0x0, error=0",
		event.Event{Kind: event.XeSchedJobRun, Driver: "xe", Device: "0000:03:00.0", FencePtr: 0xc6a4e1f2, JobID: 0xc6a4e1f2, Fence: fk(0, 82)}},
	{"xe_sched_job_free", "dev=0000:03:00.0, fence=00000000c6a4e1f2, seqno=82, lrc_seqno=82, gt=0, guc_id=3, batch_addr=0x0000001a0000, guc_state=0x1, flags=0x0, error=-125",
		event.Event{Kind: event.XeSchedJobFree, Driver: "xe", Device: "0000:03:00.0", FencePtr: 0xc6a4e1f2, JobID: 0xc6a4e1f2, Fence: fk(0, 82)}},
	{"xe_hw_fence_create", "ctx=0x0000000000000152, fence=000000009b3f6a10, seqno=82",
		event.Event{Kind: event.XeHwFenceCreate, Driver: "xe", Fence: fk(0x152, 82), FencePtr: 0x9b3f6a10}},
	{"xe_hw_fence_signal", "dev=0000:03:00.0, ctx=0x0000000000000152, fence=000000009b3f6a10, seqno=82",
		event.Event{Kind: event.XeHwFenceSignal, Driver: "xe", Device: "0000:03:00.0", Fence: fk(0x152, 82), FencePtr: 0x9b3f6a10}},
	{"xe_hw_fence_free", "dev=0000:03:00.0, ctx=0x0000000000000152, fence=000000009b3f6a10, seqno=82",
		event.Event{Kind: event.XeHwFenceFree, Driver: "xe", Device: "0000:03:00.0", Fence: fk(0x152, 82), FencePtr: 0x9b3f6a10}},

	// msm.
	{"msm_gpu_submit", "id=2081 pid=1453 ring=0 bos=12 cmds=2",
		event.Event{Kind: event.MsmSubmit, Driver: "msm", JobID: 2081, Ring: "0", Submitter: 1453}},
	{"msm_gpu_submit_flush", "id=2081 pid=1453 ring=0:16665 ticks=1083423501",
		event.Event{Kind: event.MsmSubmitFlush, Driver: "msm", JobID: 2081, Ring: "0", Fence: fk(0, 16665),
			Submitter: 1453, GPUTicks: 1083423501}},
	// elapsed = (end-start)*10000/192 as msm_gpu.c retire_submit computes it: 2262 ticks.
	{"msm_gpu_submit_retired", "id=2081 pid=1453 ring=0:16665 elapsed=117812 ns mhz=587 start=1083423660 end=1083425922",
		event.Event{Kind: event.MsmSubmitRetired, Driver: "msm", JobID: 2081, Ring: "0", Fence: fk(0, 16665),
			Submitter: 1453, GPUStart: 1083423660, GPUEnd: 1083425922}},

	// virtio_gpu (virgl): virtgpu_trace.h's TP_printk of 6.1.172 (bookworm) and 7.3.4
	// (trixie-backports), lines as the guests printed them (testdata/captures/virgl/).
	// 6.1: a job's SUBMIT_3D (fence 6) and the host's response; an unfenced fbcon flush.
	{"virtio_gpu_cmd_queue", "vdev=0 vq=0 name=control type=0x207 flags=0x1 fence_id=6 ctx_id=2",
		event.Event{Kind: event.VirtioGPUCmdQueue, Driver: "virtio_gpu", Device: "0", Ring: "0", Cmd: 0x207, Fence: fk(0, 6)}},
	{"virtio_gpu_cmd_response", "vdev=0 vq=0 name=control type=0x1100 flags=0x1 fence_id=6 ctx_id=2",
		event.Event{Kind: event.VirtioGPUCmdResponse, Driver: "virtio_gpu", Device: "0", Ring: "0", Cmd: 0x1100, Fence: fk(0, 6)}},
	{"virtio_gpu_cmd_queue", "vdev=0 vq=0 name=control type=0x104 flags=0x0 fence_id=0 ctx_id=0",
		event.Event{Kind: event.VirtioGPUCmdQueue, Driver: "virtio_gpu", Device: "0", Ring: "0", Cmd: 0x104}},
	// 7.3: num_free= and seqno= (the command's seqno joins its response, fenced or not).
	{"virtio_gpu_cmd_queue", "vdev=0 vq=0 name=control type=0x207 flags=0x1 fence_id=9 ctx_id=2 num_free=250 seqno=47",
		event.Event{Kind: event.VirtioGPUCmdQueue, Driver: "virtio_gpu", Device: "0", Ring: "0", Cmd: 0x207, Fence: fk(0, 9), JobID: 47}},
	{"virtio_gpu_cmd_response", "vdev=0 vq=0 name=control type=0x1100 flags=0x0 fence_id=0 ctx_id=0 num_free=256 seqno=612",
		event.Event{Kind: event.VirtioGPUCmdResponse, Driver: "virtio_gpu", Device: "0", Ring: "0", Cmd: 0x1100, JobID: 612}},

	// syscalls through their print fmt (trace-cmd, perf) and raw_syscalls.
	{"sys_enter_ioctl", "fd: 0x00000003, cmd: 0xc0186444, arg: 0x7ffd5b0c1a40",
		event.Event{Kind: event.IoctlEnter, Fd: 3, Cmd: 0xc0186444, Arg: 0x7ffd5b0c1a40}},
	{"sys_exit_ioctl", "0x0", event.Event{Kind: event.IoctlExit}},
	{"sys_exit_ioctl", "0xfffffffffffffff2", event.Event{Kind: event.IoctlExit, Ret: -14}},
	{"sys_enter", "NR 16 (3, c0186444, 7ffd5b0c1a40, 0, 0, 0)",
		event.Event{Kind: event.IoctlEnter, Fd: 3, Cmd: 0xc0186444, Arg: 0x7ffd5b0c1a40}},
	{"sys_exit", "NR 16 = -22", event.Event{Kind: event.IoctlExit, Ret: -22}},

	{"irq_handler_entry", "irq=45 name=amdgpu", event.Event{Kind: event.IRQEntry, IRQ: 45, IRQName: "amdgpu"}},
	{"irq_handler_exit", "irq=45 ret=handled", event.Event{Kind: event.IRQExit, IRQ: 45, Ret: 1}},
	{"irq_handler_exit", "irq=45 ret=unhandled", event.Event{Kind: event.IRQExit, IRQ: 45}},

	// trace_marker: tracefs names the event after the ip's symbol; trace-cmd prints "print:"
	// followed by the symbol or the raw ip.
	{"tracing_mark_write", "frame 1610: begin", event.Event{Kind: event.Marker, Text: "frame 1610: begin"}},
	{"print", "tracing_mark_write: B|2837|present", event.Event{Kind: event.Marker, Text: "B|2837|present"}},
	{"print", "0xffffffffabf5a467: [Compositor] Warp:L", event.Event{Kind: event.Marker, Text: "[Compositor] Warp:L"}},
}

// i915: one line per layout of i915_key_events_history.txt (first commit noted).
var i915Cases = []struct {
	name, payload string
	kind          event.Kind
	ring          string
	ctx, seq      uint64
}{
	{"i915_gem_request_add", "dev=0, ring=2, seqno=17313", event.I915RequestAdd, "2", 0, 17313},                                                                       // 08780cff: dev=%u, ring=%u, seqno=%u
	{"i915_gem_ring_dispatch", "dev=0, ring=2, seqno=17313, flags=1", event.I915RequestQueue, "2", 0, 17313},                                                          // 08780cff: dev=%u, ring=%u, seqno=%u, flags=%x
	{"i915_gem_request_add", "dev=0, ring=2, ctx=44, seqno=17313, global=17290", event.I915RequestAdd, "2", 44, 17313},                                                // cf17d070: dev=%u, ring=%u, ctx=%u, seqno=%u, global=%u
	{"i915_gem_request_queue", "dev=0, ring=2, ctx=44, seqno=17313, flags=0x1", event.I915RequestQueue, "2", 44, 17313},                                               // 184d011b: dev=%u, ring=%u, ctx=%u, seqno=%u, flags=0x%x
	{"i915_gem_request_in", "dev=0, ring=2, ctx=44, seqno=17313, global=17290, port=1", event.I915RequestIn, "2", 44, 17313},                                          // edebf871: dev=%u, ring=%u, ctx=%u, seqno=%u, global=%u, port=%u
	{"i915_gem_request_add", "dev=0, hw_id=6, ring=2, ctx=44, seqno=17313, global=17290", event.I915RequestAdd, "2", 44, 17313},                                       // 515e4495: dev=%u, hw_id=%u, ring=%u, ctx=%u, seqno=%u, global=%u
	{"i915_gem_request_in", "dev=0, hw_id=6, ring=2, ctx=44, seqno=17313, global=17290, port=1", event.I915RequestIn, "2", 44, 17313},                                 // 515e4495: …, global=%u, port=%u
	{"i915_gem_request_queue", "dev=0, hw_id=6, ring=2, ctx=44, seqno=17313, flags=0x1", event.I915RequestQueue, "2", 44, 17313},                                      // 515e4495: …, flags=0x%x
	{"i915_request_wait_begin", "dev=0, hw_id=6, ring=2, ctx=44, seqno=17313, global=17290, blocking=1, flags=0x1", event.I915RequestWaitBegin, "2", 44, 17313},       // 9a895192
	{"i915_request_in", "dev=0, hw_id=6, ring=2, ctx=44, seqno=17313, prio=1024, global=17290, port=1", event.I915RequestIn, "2", 44, 17313},                          // 5c3a5089
	{"i915_request_out", "dev=0, hw_id=6, ring=2, ctx=44, seqno=17313, global=17290, completed?=1", event.I915RequestOut, "2", 44, 17313},                             // 5c3a5089
	{"i915_request_queue", "dev=0, hw_id=6, engine=1:0, ctx=44, seqno=17313, flags=0x1", event.I915RequestQueue, "1:0", 44, 17313},                                    // 26b7a10e
	{"i915_request_add", "dev=0, hw_id=6, engine=1:0, ctx=44, seqno=17313, global=17290", event.I915RequestAdd, "1:0", 44, 17313},                                     // 26b7a10e
	{"i915_request_in", "dev=0, hw_id=6, engine=1:0, ctx=44, seqno=17313, prio=1024, global=17290, port=1", event.I915RequestIn, "1:0", 44, 17313},                    // 26b7a10e
	{"i915_request_out", "dev=0, hw_id=6, engine=1:0, ctx=44, seqno=17313, global=17290, completed?=1", event.I915RequestOut, "1:0", 44, 17313},                       // 26b7a10e
	{"i915_request_wait_begin", "dev=0, hw_id=6, engine=1:0, ctx=44, seqno=17313, global=17290, blocking=1, flags=0x1", event.I915RequestWaitBegin, "1:0", 44, 17313}, // 26b7a10e
	{"i915_request_queue", "dev=0, engine=1:0, hw_id=6, ctx=44, seqno=17313, flags=0x1", event.I915RequestQueue, "1:0", 44, 17313},                                    // f6ff37c5
	{"i915_request_submit", "dev=0, engine=1:0, hw_id=6, ctx=44, seqno=17313, global=17290", event.I915RequestSubmit, "1:0", 44, 17313},                               // f6ff37c5
	{"i915_request_in", "dev=0, engine=1:0, hw_id=6, ctx=44, seqno=17313, prio=1024, global=17290, port=1", event.I915RequestIn, "1:0", 44, 17313},                    // f6ff37c5
	{"i915_request_out", "dev=0, engine=1:0, hw_id=6, ctx=44, seqno=17313, global=17290, completed?=1", event.I915RequestOut, "1:0", 44, 17313},                       // f6ff37c5
	{"i915_request_wait_begin", "dev=0, engine=1:0, hw_id=6, ctx=44, seqno=17313, global=17290, blocking=1, flags=0x1", event.I915RequestWaitBegin, "1:0", 44, 17313}, // f6ff37c5
	{"i915_request_retire", "dev=0, engine=1:0, hw_id=6, ctx=18446744073709551615, seqno=17313, global=17290", event.I915RequestRetire, "1:0", 1<<64 - 1, 17313},      // 5e4d21da: ctx=%llu
	{"i915_request_add", "dev=0, engine=1:0, hw_id=6, ctx=44, seqno=17313", event.I915RequestAdd, "1:0", 44, 17313},                                                   // cd76e753
	{"i915_request_in", "dev=0, engine=1:0, hw_id=6, ctx=44, seqno=17313, prio=1024, port=1", event.I915RequestIn, "1:0", 44, 17313},                                  // cd76e753
	{"i915_request_out", "dev=0, engine=1:0, hw_id=6, ctx=44, seqno=17313, completed?=1", event.I915RequestOut, "1:0", 44, 17313},                                     // cd76e753
	{"i915_request_wait_begin", "dev=0, engine=1:0, hw_id=6, ctx=44, seqno=17313, blocking=1, flags=0x1", event.I915RequestWaitBegin, "1:0", 44, 17313},               // cd76e753
	{"i915_request_wait_end", "dev=0, engine=1:0, ctx=44, seqno=17313", event.I915RequestWaitEnd, "1:0", 44, 17313},                                                   // 38394bc2
	{"i915_request_queue", "dev=0, engine=1:0, ctx=44, seqno=17313, flags=0x1", event.I915RequestQueue, "1:0", 44, 17313},                                             // 38394bc2
	{"i915_request_in", "dev=0, engine=1:0, ctx=44, seqno=17313, prio=-1, port=1", event.I915RequestIn, "1:0", 44, 17313},                                             // 94eed8ff: prio=%d
	{"i915_request_out", "dev=0, engine=1:0, ctx=44, seqno=17313, completed?=1", event.I915RequestOut, "1:0", 44, 17313},                                              // 38394bc2
	{"i915_request_retire", "dev=0, engine=1:0, ctx=44, seqno=17313, tail=3720", event.I915RequestRetire, "1:0", 44, 17313},                                           // df2b824e (LTS)
	{"i915_gem_request_retire", "dev=1, ring=0, ctx=29, seqno=333715, global=0", event.I915RequestRetire, "0", 29, 333715},                                            // cf17d070, dev 1
	{"i915_gem_request_wait_end", "dev=0, hw_id=6, ring=2, ctx=44, seqno=17313, global=17290", event.I915RequestWaitEnd, "2", 44, 17313},                              // 515e4495 class layout
	{"i915_gem_request_submit", "dev=0, ring=2, ctx=44, seqno=17313, global=17290", event.I915RequestSubmit, "2", 44, 17313},                                          // d34cd4d6
	{"i915_gem_request_out", "dev=0, ring=2, ctx=44, seqno=17313, global=17290", event.I915RequestOut, "2", 44, 17313},                                                // edebf871
	{"i915_gem_request_wait_begin", "dev=0, hw_id=6, ring=2, ctx=44, seqno=17313, global=17290, blocking=1, flags=0x1", event.I915RequestWaitBegin, "2", 44, 17313},   // as 9a895192 before the rename
	{"i915_request_in", "dev=0, hw_id=6, engine=1:0, ctx=44, seqno=17313, prio=1024, global=17290, port=1", event.I915RequestIn, "1:0", 44, 17313},                    // 26b7a10e
	{"i915_request_wait_end", "dev=0, hw_id=6, engine=1:0, ctx=44, seqno=17313, global=17290, completed?=1", event.I915RequestWaitEnd, "1:0", 44, 17313},              // completed? layout on another name
	{"i915_request_queue", "dev=0, engine=1:0, hw_id=6, ctx=44, seqno=17313, prio=1024, global=17290, port=1", event.I915RequestQueue, "1:0", 44, 17313},              // in-layout on another name
	{"i915_request_submit", "dev=0, engine=1:0, hw_id=6, ctx=44, seqno=17313, global=17290, completed?=1", event.I915RequestSubmit, "1:0", 44, 17313},                 // out-layout on another name
	{"i915_request_in", "dev=0, engine=1:0, hw_id=6, ctx=44, seqno=17313, global=17290, blocking=1, flags=0x1", event.I915RequestIn, "1:0", 44, 17313},                // wait-layout on another name
	{"i915_request_out", "dev=0, hw_id=6, ring=2, ctx=44, seqno=17313, global=17290, port=1", event.I915RequestOut, "2", 44, 17313},                                   // in-layout on another name
	{"i915_request_wait_end", "dev=0, hw_id=6, engine=1:0, ctx=44, seqno=17313, flags=0x1", event.I915RequestWaitEnd, "1:0", 44, 17313},                               // queue-layout on another name
}

func TestRenderedFormats(t *testing.T) {
	for _, c := range formatCases {
		want := c.want
		want.Time, want.CPU, want.TID, want.Comm = rTime, rCPU, rTID, rComm
		want.Name = c.name
		if c.name == "tracing_mark_write" {
			want.Name = "print"
		}
		checkOutcome(t, c.name, rendered(c.name, c.payload), ev(want))
	}
	for _, c := range i915Cases {
		want := event.Event{Kind: c.kind, Time: rTime, CPU: rCPU, TID: rTID, Comm: rComm, Name: c.name, Driver: "i915",
			Device: c.payload[4:5], Ring: c.ring, Fence: fk(c.ctx, c.seq)}
		checkOutcome(t, c.name, rendered(c.name, c.payload), ev(want))
	}
}

// tracefs prints syscall events with its own printer, not the print fmt.
func TestRenderedSyscallText(t *testing.T) {
	enter := event.Event{Kind: event.IoctlEnter, Time: rTime, CPU: rCPU, TID: rTID, Comm: rComm, Name: "sys_enter_ioctl",
		Fd: 3, Cmd: 0xc0084601, Arg: 0x7ffd5b0c1a40}
	exit := event.Event{Kind: event.IoctlExit, Time: rTime, CPU: rCPU, TID: rTID, Comm: rComm, Name: "sys_exit_ioctl"}
	head := fmt.Sprintf("%16s-%-7d [%03d] ..... %5d.%06d: ", rComm, rTID, rCPU, 1234, 567890)
	for _, c := range []struct {
		text string
		want event.Event
	}{
		{"sys_ioctl(fd: 3, cmd: c0084601, arg: 7ffd5b0c1a40)", enter},                                         // 6.1 guest: hex without 0x
		{"sys_ioctl(fd: 0x3, cmd: 0xc0084601, arg: 0x7ffd5b0c1a40)", enter},                                   // 7.3 guest: 0x%lx
		{"sys_ioctl(unsigned int fd: 3, unsigned int cmd: c0084601, unsigned long arg: 7ffd5b0c1a40)", enter}, // verbose option
		{"sys_ioctl -> 0x0", exit},
		{"sys_ioctl -> 0xffffffffffffffea", func() event.Event { e := exit; e.Ret = -22; return e }()},
	} {
		checkOutcome(t, c.text, head+c.text, ev(c.want))
	}
	checkOutcome(t, "openat", head+"sys_openat(dfd: ffffff9c, filename: 7ffd5b0c2000, flags: 80000, mode: 0)", unknown("sys_openat"))
	checkOutcome(t, "openat exit", head+"sys_openat -> 0x3", unknown("sys_openat"))
	checkOutcome(t, "raw read", rendered("sys_enter", "NR 0 (3, 7ffd5b0c1a40, 1000, 0, 0, 0)"), unknown("sys_enter"))
	checkOutcome(t, "raw read exit", rendered("sys_exit", "NR 0 = 4096"), unknown("sys_exit"))
}

// Every format in the table is exercised by some line of these tests or the real captures.
func TestEveryFormatDecoded(t *testing.T) {
	d := NewDecoder()
	var e event.Event
	n := 0
	feed := func(l string) { n++; d.Decode([]byte(l), n, &e) }
	for _, c := range formatCases {
		feed(rendered(c.name, c.payload))
	}
	for _, c := range i915Cases {
		feed(rendered(c.name, c.payload))
	}
	for _, l := range kernelFormatLines() {
		feed(l)
	}
	for _, b := range snippetBlocks(t) {
		for _, l := range b {
			feed(string(l))
		}
	}
	feed(rendered("sys_ioctl(fd", "")) // not an event: fills nothing
	feed(fmt.Sprintf("x-1 [000] 1.000001: sys_ioctl(fd: 3, cmd: c0084601, arg: 0)"))
	feed(fmt.Sprintf("x-1 [000] 1.000001: sys_ioctl(unsigned int fd: 3, unsigned int cmd: c0084601, unsigned long arg: 0)"))
	feed(fmt.Sprintf("x-1 [000] 1.000001: sys_ioctl -> 0x0"))
	for _, l := range readLines(t, "gpuvis_amdgpu_4.11_gpu_only.trace-cmd-report.txt") {
		feed(string(l))
	}
	for _, tm := range templates {
		if d.formatHits[tm.id] == 0 {
			t.Errorf("format of %s never decoded: %q (%s)", tm.fam.name, tm.fmt.printk, tm.fmt.src)
		}
	}
}
