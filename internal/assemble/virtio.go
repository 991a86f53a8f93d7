// virtio_gpu (virgl) jobs (docs/stages.md "virtio_gpu (virgl)").
//
// virtio_gpu has no DRM scheduler and no ring of its own: a job is one
// DRM_IOCTL_VIRTGPU_EXECBUFFER, whose command buffer the driver sends to the host as one
// VIRTIO_GPU_CMD_SUBMIT_3D on the control virtqueue, inside the ioctl. Its events, in order:
// the ioctl's entry (t0); the fence the driver creates for it (dma_fence_init with seqno 0,
// then dma_fence_emit, which numbers it: seqno = the new fence id), tq = tr; the command
// on the virtqueue (virtio_gpu_cmd_queue, fence_id = that seqno), te; the ioctl's exit
// (tx); the host's response (virtio_gpu_cmd_response, the fence id echoed; on 7.3 also the
// command's seqno), th; the fence's dma_fence_signaled, tf. The host's start is in no
// guest event: te → th is the whole host side (the kick, the host's decoding and
// rendering, its fence poll, the interrupt and the reaping worker) and is tiled as one
// execution stage whose start is inferred (ruleVirtioHostStart); dma_scheduling,
// fence_dependency and scheduler_queue are left out (stages.go: omitted).
//
// Only SUBMIT_3D is a job. The other commands on the queue are set-up (context and
// resource creation: RESOURCE_CREATE_3D carries a fence of the same timeline), transfers,
// and the display's (the fbdev console's RESOURCE_FLUSH / TRANSFER_TO_HOST_2D on a
// kworker): counted in Stats.Ignored, their fences' signals orphans.
//
// An unfenced SUBMIT_3D (fence_id 0: Mesa sends some at tear-down) has no fence: it ends
// at its response, which only its seqno joins (7.3). Where no seqno is printed (6.1, or a
// source that does not read it) nothing can join it: the job is output at its ioctl's exit
// as incomplete (reasonVirtioUnjoinable).

package assemble

import "github.com/ghostdriver/ghostdriver/internal/event"

const (
	virtioCmdSubmit3D = 0x207 // VIRTIO_GPU_CMD_SUBMIT_3D

	// ruleVirtioHostStart: te → th is the host's side as a whole; its start is not observed.
	ruleVirtioHostStart = "host_start_unobserved"

	reasonVirtioUnjoinable = "unfenced command: no event joins its response (the kernel prints no seqno=)"
)

// virtioEmit is the last fence emitted on a thread inside its ioctl (the candidate for the
// SUBMIT_3D command that follows it).
type virtioEmit struct {
	fence event.FenceKey
	time  int64
	hook  string
	wide  bool
	ok    bool
}

func (a *Assembler) virtioEvent(e *event.Event, r *role) {
	switch e.Kind {
	case event.VirtioGPUCmdQueue:
		a.virtioQueue(e, r)
	case event.VirtioGPUCmdResponse:
		a.virtioResponse(e, r)
	}
}

// virtioQueue opens the job of a SUBMIT_3D command.
func (a *Assembler) virtioQueue(e *event.Event, r *role) {
	if e.Cmd != virtioCmdSubmit3D {
		a.st.Ignored++
		return
	}
	fid := e.Fence.Seqno
	j := a.newJob(famVirtio, e.Time)
	th := a.threadOf(e.TID)
	hook := hookOf(e)
	queued, qhook := e.Time, hook
	if fid != 0 {
		a.addID(j, idKey{ns: nsVirtioFence, scope: e.Device, id: fid})
		if th != nil && th.inIoctl && th.virtio.ok && th.virtio.fence.Seqno&0xffffffff == fid&0xffffffff {
			em := th.virtio
			a.setKey(j, em.fence, em.wide)
			j.stream = key32(em.fence) >> 32
			queued, qhook = em.time, em.hook
			th.virtio.ok = false
		}
	}
	if e.JobID != 0 {
		a.addID(j, idKey{ns: nsVirtioSeq, scope: e.Device, id: e.JobID})
	}
	j.set(PointQueued, queued, r.prio, Measured, qhook)
	j.set(PointRun, queued, r.prio, Measured, qhook)
	if !j.hasKey {
		// No fence emitted for it: the command is the job's only submit event, and
		// nothing bounds an emission before it (no ring_emission: virtioOmitted).
		rr := *r
		rr.points = [2]Point{noPoint, noPoint}
		a.apply(j, e, &rr)
		return
	}
	a.apply(j, e, r)
}

// virtioOmitted are the stages a virtio_gpu job has no basis for: no scheduler
// (fence_dependency, scheduler_queue: in-fences are waited for inside the ioctl), no
// observed host start (dma_scheduling), and, without a fence emitted before the command,
// no ring_emission.
func virtioOmitted(j *job) (omit [stageCount]bool) {
	omit[StageFenceDependency], omit[StageSchedulerQueue], omit[StageDMAScheduling] = true, true, true
	omit[StageRingEmission] = !j.hasKey
	return omit
}

// virtioResponse: the host answered a command (th). A fenced job finishes at its fence's
// signal (fences.go); an unfenced one here.
func (a *Assembler) virtioResponse(e *event.Event, r *role) {
	var j *job
	if e.JobID != 0 {
		j = a.byID[idKey{ns: nsVirtioSeq, scope: e.Device, id: e.JobID}]
	}
	if (j == nil || !j.open()) && e.Fence.Seqno != 0 {
		j = a.byID[idKey{ns: nsVirtioFence, scope: e.Device, id: e.Fence.Seqno}]
	}
	if j == nil || !j.open() || j.fam != famVirtio {
		if e.Fence.Seqno != 0 {
			a.orphan(e) // a fenced command that is not a job (RESOURCE_CREATE_3D), or one before the input
		} else {
			a.st.Ignored++ // an unfenced command's: set-up, transfers, the display
		}
		return
	}
	if j.out.Points[PointHWDone].Known() {
		a.st.Duplicates++
		return
	}
	rr := *r
	if !j.hasKey {
		rr.seen |= seenDone // unfenced: the response is the end
	}
	a.apply(j, e, &rr)
}

// virtioUnjoinable reports whether j is an unfenced command whose response nothing can
// join: no fence id and no seqno.
func virtioUnjoinable(j *job) bool {
	return j.fam == famVirtio && !hasNS(j, nsVirtioFence) && !hasNS(j, nsVirtioSeq)
}
