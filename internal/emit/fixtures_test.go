// Hand-built jobs shared by the span, metric and metadata tests: one of each shape the
// assembler produces (all stages measured; partial with inferred bounds; incomplete;
// evicted without a fence; uint64 values beyond int64).
package emit

import (
	"math"

	"github.com/ghostdriver/ghostdriver/internal/assemble"
	"github.com/ghostdriver/ghostdriver/internal/attr"
	"github.com/ghostdriver/ghostdriver/internal/ctxtier"
	"github.com/ghostdriver/ghostdriver/internal/event"
)

// testClock puts source time 0 at 2023-11-14T22:13:20Z.
var testClock = event.OffsetClock{Offset: 1_700_000_000_000_000_000}

const testOffset = 1_700_000_000_000_000_000

func measured(s assemble.Stage, start, end int64, rule string) assemble.StageSpan {
	return assemble.StageSpan{Stage: s, Start: start, End: end, Src: assemble.Measured, Rule: rule}
}

func inferred(s assemble.Stage, start, end int64, rule string) assemble.StageSpan {
	return assemble.StageSpan{Stage: s, Start: start, End: end, Src: assemble.Inferred, Rule: rule}
}

// fullJob has every stage measured, submitted by the main thread of vkcube.
func fullJob() *assemble.Job {
	return &assemble.Job{
		Driver: "amdgpu", Device: "0000:03:00.0", Ring: "gfx",
		Finished: event.FenceKey{Context: 1234, Seqno: 56}, FinishedWide: true,
		HWFence: event.FenceKey{Context: 17, Seqno: 9001},
		JobID:   42, ClientID: 7,
		PID: 1000, TID: 1000, Comm: "vkcube",
		Stages: []assemble.StageSpan{
			measured(assemble.StageIoctl, 1000, 2000, "sys_enter_ioctl→sys_exit_ioctl"),
			measured(assemble.StageBOValidation, 1000, 1500, "sys_enter_ioctl→amdgpu_cs_parser_bos"),
			measured(assemble.StageFenceDependency, 1800, 2500, "drm_sched_job_queue→dma_fence_signaled"),
			measured(assemble.StageSchedulerQueue, 2500, 2800, "dma_fence_signaled→drm_sched_job_run"),
			measured(assemble.StageRingEmission, 2800, 3000, "drm_sched_job_run→dma_fence_emit"),
			measured(assemble.StageDMAScheduling, 3000, 3200, "dma_fence_emit→dma_fence_signaled"),
			measured(assemble.StageExecution, 3200, 8000, "dma_fence_signaled→dma_fence_signaled"),
			measured(assemble.StageFenceSignal, 8000, 8300, "dma_fence_signaled→drm_sched_job_done"),
		},
		Start: 1000, End: 8300,
		Outcome: assemble.Completed,
	}
}

// appTrace and appSpan are the application context of partialJob.
var (
	appTrace = [16]byte{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36}
	appSpan  = [8]byte{0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7}
)

// partialJob saw only queue/run/done events, from a worker thread of vkcube, with an
// application context, depending on fullJob's finished fence and on a fence of no job.
func partialJob() *assemble.Job {
	return &assemble.Job{
		Driver: "amdgpu", Device: "0000:03:00.0", Ring: "gfx",
		Finished: event.FenceKey{Context: 1234, Seqno: 57},
		PID:      1000, TID: 1001, Comm: "vk-submit",
		Stages: []assemble.StageSpan{
			inferred(assemble.StageFenceDependency, 9000, 9000, "drm_sched_job_queue→=tq"),
			inferred(assemble.StageRingEmission, 9000, 9400, "=tq→drm_run_job"),
			inferred(assemble.StageDMAScheduling, 9400, 9400, "drm_run_job→max(tr,prev done)"),
			inferred(assemble.StageExecution, 9400, 20000, "max(tr,prev done)→drm_sched_process_job"),
		},
		Start: 9000, End: 20000,
		Outcome: assemble.Completed,
		Deps: []assemble.Dependency{
			{Fence: event.FenceKey{Context: 1234, Seqno: 56}, Signaled: 8300, Job: event.FenceKey{Context: 1234, Seqno: 56}, JobKnown: true,
				Wait: assemble.DepWaitScheduled, Scheduled: 3000, Until: 3000},
			{Fence: event.FenceKey{Context: 99, Seqno: 5}, Signaled: 8900},
		},
		TraceID: appTrace, SpanID: appSpan, CtxTier: ctxtier.OTEP4947,
	}
}

// incompleteJob: the capture ended after the ioctl; the submitter is a worker thread.
func incompleteJob() *assemble.Job {
	return &assemble.Job{
		Driver: "amdgpu", Device: "0000:03:00.0", Ring: "comp_1.0.0",
		Finished: event.FenceKey{Context: 1300, Seqno: 3},
		PID:      2000, TID: 2001, Comm: "pt_main_thread",
		Stages: []assemble.StageSpan{
			measured(assemble.StageIoctl, 30000, 31000, "sys_enter_ioctl→sys_exit_ioctl"),
		},
		Start: 30000, End: 31000,
		Outcome: assemble.Incomplete, Reason: "capture ended before the job finished",
		Loss:    assemble.LossInfo{Windows: 1, Events: 7, Counted: true},
		CtxTier: ctxtier.Traceparent,
	}
}

// evictedJob: an old-kernel job known by id only, evicted by job_timeout, no submitter.
func evictedJob() *assemble.Job {
	return &assemble.Job{
		Driver: "amdgpu", Ring: "sdma0",
		JobID: 77,
		Stages: []assemble.StageSpan{
			inferred(assemble.StageRingEmission, 40000, 40500, "drm_sched_job→amdgpu_sched_run_job"),
		},
		Start: 40000, End: 40500,
		Outcome: assemble.Evicted, Reason: "no progress for job_timeout (5s)",
	}
}

// overflowJob carries uint64 values above math.MaxInt64.
func overflowJob() *assemble.Job {
	return &assemble.Job{
		Driver: "xe", Device: "0000:00:02.0", Ring: "rcs0",
		Finished: event.FenceKey{Context: 1<<63 + 5, Seqno: math.MaxUint64}, FinishedWide: true,
		HWFence: event.FenceKey{Context: math.MaxInt64, Seqno: 1 << 63},
		JobID:   math.MaxUint64, ClientID: 1 << 63,
		PID: 3000, TID: 3000, Comm: "xe_exec",
		Stages: []assemble.StageSpan{
			measured(assemble.StageExecution, 50000, 51000, "xe_hw_fence_emit→xe_hw_fence_signal"),
		},
		Start: 50000, End: 51000,
		Outcome: assemble.Completed, CtxTier: 9,
	}
}

// enrichedJob went through the tenant enricher (live source): its process's resource and
// tenancy, its DRM client and device, and TRACEPARENT as the context.
func enrichedJob() *assemble.Job {
	j := fullJob()
	j.Finished = event.FenceKey{Context: 1400, Seqno: 1}
	j.PID, j.TID, j.Comm = 4000, 4001, "pt_main_thread"
	j.ClientID = 0
	j.TraceID, j.SpanID, j.CtxTier = appTrace, appSpan, ctxtier.Traceparent
	j.Resource = []attr.Attribute{
		attr.String("service.name", "trainer"),
		attr.Int("process.pid", 4000),
		attr.String("process.executable.name", "python3.12"),
		attr.String("process.executable.path", "/usr/bin/python3.12"),
		attr.String("process.linux.cgroup", "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod6e1f7f4a_1b2c_4d5e_8f90_a1b2c3d4e5f6.slice/cri-containerd-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef.scope"),
		attr.String("container.id", "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"),
		attr.String("container.runtime.name", "containerd"),
		attr.String("k8s.pod.uid", "6e1f7f4a-1b2c-4d5e-8f90-a1b2c3d4e5f6"),
		attr.String("ghostdriver.k8s.pod.qos_class", "burstable"),
		attr.String("ghostdriver.systemd.unit", "cri-containerd-0123.scope"),
		attr.String("ghostdriver.nvidia.mig_instance", "gpu0/gi1/ci0"),
		attr.String("ghostdriver.resource.source", "env"),
	}
	j.Attrs = []attr.Attribute{
		attr.Int("ghostdriver.client_id", 12),
		attr.String("ghostdriver.drm.client_name", "torch-rank0"),
		attr.String("hw.type", "gpu"),
		attr.String("hw.vendor", "AMD"),
		attr.String("ghostdriver.gpu.pci_address", "0000:03:00.0"),
		attr.String("ghostdriver.gpu.driver", "amdgpu"),
		attr.Bool("ghostdriver.gpu.sriov_vf", true),
	}
	return j
}

// allJobs returns one of each fixture, dependencies first.
func allJobs() []*assemble.Job {
	return []*assemble.Job{fullJob(), partialJob(), incompleteJob(), evictedJob(), overflowJob(), enrichedJob()}
}
