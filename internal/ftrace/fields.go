// The argument names the event table (internal/eventdef) uses for printk arguments, and
// how each captured value fills an event.Event field.

package ftrace

import (
	"github.com/ghostdriver/ghostdriver/internal/event"
)

type argID uint8

const (
	argSkip      argID = iota // printed, not kept
	argDev                    // Device (a name, or the DRM minor for i915)
	argEntity                 // Entity pointer
	argJob                    // JobID (scheduler job id, amdgpu sched_job, msm submit id)
	argFencePtr               // FencePtr
	argJobFence               // xe: the job's fence pointer is its only identity: FencePtr and JobID
	argFenceCtx               // Fence.Context
	argFenceSeq               // Fence.Seqno
	argRing                   // Ring, as printed (a name or a number)
	argRingName               // amdgpu ring_name: Ring, or Timeline when it is a printed pointer
	argClass                  // i915 engine class: Ring = "class:instance" with the next
	argInst                   // i915 engine instance
	argClient                 // ClientID
	argDepCtx                 // Dep.Context
	argDepSeq                 // Dep.Seqno
	argDriver                 // Driver
	argTimeline               // Timeline
	argReason                 // Text (RFC dma_fence_sync_to reason)
	argFd                     // Fd
	argCmd                    // Cmd
	argArg                    // Arg
	argRet                    // Ret
	argNR                     // raw syscall number: the event is ours only when it is ioctlNR
	argIRQ                    // IRQ
	argIRQName                // IRQName
	argIRQRet                 // Ret: 1 for "handled", 0 for "unhandled"
	argGPUTicks               // GPUTicks (msm flush: always-on counter read by the CPU)
	argGPUStart               // GPUStart (msm retired: counter written by the GPU at start)
	argGPUEnd                 // GPUEnd (msm retired: counter written by the GPU at end)
	argSubmitter              // Submitter (msm pid=: the submitting thread's id)
)

var argByName = map[string]argID{
	"_": argSkip, "dev": argDev, "entity": argEntity, "id": argJob, "fence": argFencePtr,
	"jobfence": argJobFence, "fctx": argFenceCtx, "fseq": argFenceSeq, "ring": argRing,
	"ringname": argRingName, "class": argClass, "inst": argInst, "client": argClient,
	"dctx": argDepCtx, "dseq": argDepSeq, "driver": argDriver, "timeline": argTimeline,
	"reason": argReason, "fd": argFd, "cmd": argCmd, "arg": argArg, "ret": argRet,
	"nr": argNR, "irq": argIRQ, "irqname": argIRQName, "irqret": argIRQRet,
	"gputicks": argGPUTicks, "gpustart": argGPUStart, "gpuend": argGPUEnd, "submitter": argSubmitter,
}

// applyResult says what apply made of a matched payload.
type applyResult uint8

const (
	applied   applyResult = iota
	notOurs               // a raw syscall other than ioctl: counted as unknown
	badValues             // matched the format, but a value is impossible
)

// apply fills ev from the captures of a matched template.
func (d *Decoder) apply(ev *event.Event, t *template, p []byte) applyResult {
	var fctxWide, fseqWide, dctxWide, dseqWide bool
	classStart := -1
	for i := range t.segs {
		s := &t.segs[i]
		c := &d.caps[i]
		span := p[c.start:c.end]
		switch s.arg {
		case argSkip:
		case argDev:
			ev.Device = d.intern(span)
		case argEntity:
			ev.Entity = c.n
		case argJob:
			ev.JobID = c.n
		case argFencePtr:
			ev.FencePtr = c.n
		case argJobFence:
			ev.FencePtr, ev.JobID = c.n, c.n
		case argFenceCtx:
			ev.Fence.Context, fctxWide = c.n, s.wide
		case argFenceSeq:
			ev.Fence.Seqno, fseqWide = c.n, s.wide
		case argRing:
			ev.Ring = d.intern(span)
		case argRingName:
			if isPrintedPointer(span) && ev.Timeline != "" {
				ev.Ring = ev.Timeline
			} else {
				ev.Ring = d.intern(span)
			}
		case argClass:
			classStart = c.start
		case argInst:
			if classStart < 0 {
				return badValues
			}
			ev.Ring = d.intern(p[classStart:c.end])
		case argClient:
			ev.ClientID = c.n
		case argDepCtx:
			ev.Dep.Context, dctxWide = c.n, s.wide
		case argDepSeq:
			ev.Dep.Seqno, dseqWide = c.n, s.wide
		case argDriver:
			ev.Driver = d.intern(span)
		case argTimeline:
			ev.Timeline = d.intern(span)
		case argReason:
			ev.Text = d.intern(span)
		case argFd:
			ev.Fd = int32(c.n)
		case argCmd:
			ev.Cmd = uint32(c.n)
		case argArg:
			ev.Arg = c.n
		case argRet:
			ev.Ret = int64(c.n)
		case argNR:
			if c.n != ioctlNR {
				return notOurs
			}
		case argIRQ:
			ev.IRQ = int32(c.n)
		case argIRQName:
			ev.IRQName = d.intern(span)
		case argIRQRet:
			switch string(span) {
			case "handled":
				ev.Ret = 1
			case "unhandled":
				ev.Ret = 0
			default:
				return badValues
			}
		case argGPUTicks:
			ev.GPUTicks = c.n
		case argGPUStart:
			ev.GPUStart = c.n
		case argGPUEnd:
			ev.GPUEnd = c.n
		case argSubmitter:
			ev.Submitter = uint32(c.n)
		}
	}
	ev.FenceWide = fctxWide && fseqWide
	ev.DepWide = dctxWide && dseqWide
	return applied
}

// isPrintedPointer reports whether a %s value is a kernel pointer printed as bare hex
// (libtraceevent's rendering of a char* field it cannot dereference).
func isPrintedPointer(b []byte) bool {
	if len(b) != 8 && len(b) != 16 {
		return false
	}
	for _, c := range b {
		if hexVal(c) < 0 {
			return false
		}
	}
	return true
}
