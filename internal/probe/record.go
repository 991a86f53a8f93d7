package probe

import (
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"unsafe"

	"github.com/ghostdriver/ghostdriver/internal/event"
	"github.com/ghostdriver/ghostdriver/internal/kstr"
)

// recordSize is sizeof(struct record), the record of every hook but the dma_fence ones
// (fenceRecordSize), the submit-ioctl entries and exits (ioctlEnterRecordSize,
// ioctlExitRecordSize) and the classic-tracepoint copies (rawRecordSize); the five sizes
// differ, so a sample's size says which it is.
const recordSize = int(unsafe.Sizeof(commonRecord{}))

// fenceRecordSize is sizeof(struct fence_record): the dma_fence hooks' compact record.
const fenceRecordSize = int(unsafe.Sizeof(commonFenceRecord{}))

// ioctlExitRecordSize is sizeof(struct ioctl_exit_record): a followed ioctl's exit
// (syscall tracepoint or fexit drm_ioctl).
const ioctlExitRecordSize = int(unsafe.Sizeof(commonIoctlExitRecord{}))

// ioctlEnterRecordSize is sizeof(struct ioctl_enter_record): a followed ioctl's entry
// (syscall tracepoint, raw_tp sys_enter or fentry drm_ioctl).
const ioctlEnterRecordSize = int(unsafe.Sizeof(commonIoctlEnterRecord{}))

// The sizes must stay distinct: ioctl exit < fence < ioctl entry < record (< raw, classic.go).
const (
	_ = uint(fenceRecordSize - ioctlExitRecordSize - 1)
	_ = uint(ioctlEnterRecordSize - fenceRecordSize - 1)
	_ = uint(recordSize - ioctlEnterRecordSize - 1)
)

// loadSample copies a ring buffer sample into its record type (the caller has checked
// the sample's size; a shorter one leaves the tail zero).
func loadSample[T any](b []byte) (r T) {
	copy(unsafe.Slice((*byte)(unsafe.Pointer(&r)), unsafe.Sizeof(r)), b)
	return r
}

// viewSample reads a ring buffer sample as its record type where it lies, without a copy
// (the caller has checked that the sample is at least that long). Samples start 8-byte
// aligned: in the ring (after the 8-byte header) and in the heap buffers of the other readers.
func viewSample[T any](b []byte) *T {
	return (*T)(unsafe.Pointer(unsafe.SliceData(b)))
}

// hookIndex is hookTable as an array by hook value: decode looks a hook up for every
// record, and a map lookup was a seventh of the reader's CPU.
var hookIndex = func() (a [maxHookValue]struct {
	hookInfo
	ok bool
}) {
	for h, info := range hookTable {
		if int(h) >= maxHookValue {
			panic("hook value beyond maxHookValue: raise it")
		}
		a[h].hookInfo, a[h].ok = info, true
	}
	return a
}()

func lookupHook(h uint16) (hookInfo, bool) {
	if int(h) >= maxHookValue {
		return hookInfo{}, false
	}
	e := &hookIndex[h]
	return e.hookInfo, e.ok
}

// eventHeader is what every record kind says the same way: which hook, when, where, who.
func eventHeader(info hookInfo, ts uint64, cpu uint32, pidTgid uint64) event.Event {
	return event.Event{Kind: info.kind, Name: info.name, Time: int64(ts), CPU: int32(cpu),
		PID: uint32(pidTgid >> 32), TID: uint32(pidTgid)}
}

// unknownHook names a record of a hook this decoder does not know ("hook(N)"), so the
// caller can count it by name.
func unknownHook(ev *event.Event, hook uint16) error {
	*ev = event.Event{Name: "hook(" + strconv.Itoa(int(hook)) + ")"}
	return errUnknownHook
}

// decodeFence decodes a fence_record sample (len(b) == fenceRecordSize): no comm, ring
// or device, which no fence event needs.
func (d *decoder) decodeFence(b []byte, ev *event.Event) error {
	r := viewSample[commonFenceRecord](b)
	info, ok := lookupHook(r.Hook)
	if !ok || !isFenceHook(commonHook(r.Hook)) {
		return unknownHook(ev, r.Hook)
	}
	*ev = eventHeader(info, r.Ts, r.Cpu, r.PidTgid)
	ev.FencePtr = r.Ptr
	flags := commonRecordFlag(r.Flags)
	if flags&commonRecordFlagRF_HAS_FENCE != 0 {
		ev.Fence = event.FenceKey{Context: r.FenceCtx, Seqno: r.FenceSeqno}
		ev.FenceWide = flags&commonRecordFlagRF_FENCE_WIDE != 0
	}
	if d.classic != nil && d.classic.join != nil && ev.Kind == event.FenceInit && r.Ptr != 0 && ev.FenceWide {
		d.classic.join.fenceCreated(r.Ptr, ev.Fence)
	}
	return nil
}

// decodeIoctlExit decodes an ioctl_exit_record sample (len(b) == ioctlExitRecordSize) of
// a syscall-tracepoint or fexit drm_ioctl exit: fd (-1 for fexit), cmd and the return
// value; no comm (the entry of the same thread has it).
func (d *decoder) decodeIoctlExit(b []byte, ev *event.Event) error {
	r := viewSample[commonIoctlExitRecord](b)
	info, ok := lookupHook(r.Hook)
	if h := commonHook(r.Hook); !ok || h != commonHookHOOK_SYS_EXIT_IOCTL && h != commonHookHOOK_DRM_IOCTL_EXIT {
		return unknownHook(ev, r.Hook)
	}
	*ev = eventHeader(info, r.Ts, r.Cpu, r.PidTgid)
	ev.Fd, ev.Cmd, ev.Ret = r.Fd, r.Cmd, r.Ret
	return nil
}

// decodeIoctlEnter decodes an ioctl_enter_record sample (len(b) == ioctlEnterRecordSize):
// a syscall-tracepoint or raw_tp entry (fd, no driver) or fentry drm_ioctl's (fd -1, the
// DRM driver's name), with comm and the application's trace context when one was read.
func (d *decoder) decodeIoctlEnter(b []byte, ev *event.Event) error {
	r := viewSample[commonIoctlEnterRecord](b)
	info, ok := lookupHook(r.Hook)
	if h := commonHook(r.Hook); !ok || h != commonHookHOOK_SYS_ENTER_IOCTL && h != commonHookHOOK_DRM_IOCTL_ENTER {
		return unknownHook(ev, r.Hook)
	}
	*ev = eventHeader(info, r.Ts, r.Cpu, r.PidTgid)
	ev.Comm = d.names.FromC(r.Comm[:])
	ev.Fd, ev.Cmd, ev.Arg = r.Fd, r.Cmd, r.Arg
	ev.Driver = d.names.FromC(r.Driver[:])
	if r.CtxTier != uint8(commonCtxTierCTX_TIER_NONE) {
		ev.TraceID, ev.SpanID, ev.CtxTier = r.TraceId, r.SpanId, r.CtxTier
	} else if r.CtxError == uint8(commonCtxErrorCTX_ERR_UNREADABLE) {
		d.ctxUnreadable.Add(1)
	}
	return nil
}

// isFenceHook reports whether h is one of the dma_fence hooks (the fence_record's).
func isFenceHook(h commonHook) bool {
	switch h {
	case commonHookHOOK_DMA_FENCE_INIT, commonHookHOOK_DMA_FENCE_EMIT, commonHookHOOK_DMA_FENCE_ENABLE_SIGNAL,
		commonHookHOOK_DMA_FENCE_SIGNALED, commonHookHOOK_DMA_FENCE_WAIT_START, commonHookHOOK_DMA_FENCE_WAIT_END,
		commonHookHOOK_DMA_FENCE_DESTROY:
		return true
	}
	return false
}

var (
	errShortRecord = errors.New("short record")
	errUnknownHook = errors.New("unknown hook")
)

// decoder turns ring buffer records into events. It needs the configuration only to
// name fentry/fexit targets and interrupts.
type decoder struct {
	boFuncs  []string
	runFuncs []string
	irqNames map[int32]string
	// classic decodes the raw copies of the classic-tracepoint rung (nil: none attached).
	classic *classicDecoder
	// names caches the comm, ring, device and driver strings of the records.
	names kstr.Interner
	// ctxUnreadable counts ioctl entries whose thread context could not be read
	// (kernel_drops{reason=thread_context_unreadable}); read by other goroutines.
	ctxUnreadable atomic.Uint64
}

// decode decodes one raw sample into ev. An unknown hook returns errUnknownHook with
// ev.Name set to "hook(N)" so that the caller can count it by name.
func (d *decoder) decode(b []byte, ev *event.Event) error {
	switch len(b) {
	case fenceRecordSize:
		return d.decodeFence(b, ev)
	case ioctlExitRecordSize:
		return d.decodeIoctlExit(b, ev)
	case ioctlEnterRecordSize:
		return d.decodeIoctlEnter(b, ev)
	case rawRecordSize:
		return d.decodeRaw(b, ev)
	}
	if len(b) < recordSize {
		return fmt.Errorf("%w: %d bytes, want %d", errShortRecord, len(b), recordSize)
	}
	r := viewSample[commonRecord](b)

	info, ok := lookupHook(r.Hook)
	if !ok {
		return unknownHook(ev, r.Hook)
	}
	*ev = eventHeader(info, r.Ts, r.Cpu, r.PidTgid)
	ev.Comm = d.names.FromC(r.Comm[:])
	flags := commonRecordFlag(r.Flags)
	if flags&commonRecordFlagRF_HAS_FENCE != 0 {
		ev.Fence = event.FenceKey{Context: r.FenceCtx, Seqno: r.FenceSeqno}
		ev.FenceWide = flags&commonRecordFlagRF_FENCE_WIDE != 0
	}
	if flags&commonRecordFlagRF_HAS_DEP != 0 {
		ev.Dep = event.FenceKey{Context: r.DepCtx, Seqno: r.DepSeqno}
		ev.DepWide = flags&commonRecordFlagRF_DEP_WIDE != 0
	}
	if flags&commonRecordFlagRF_HW_FENCE != 0 {
		ev.HWFence = event.FenceKey{Context: r.HwCtx, Seqno: r.HwSeqno}
	}
	ev.JobID = r.JobId
	ev.Entity = r.Entity
	ev.ClientID = r.ClientId
	ev.Ring = d.names.FromC(r.Ring[:])
	ev.Device = d.names.FromC(r.Dev[:])

	switch commonHook(r.Hook) {
	case commonHookHOOK_SYS_ENTER_IOCTL, commonHookHOOK_SYS_EXIT_IOCTL,
		commonHookHOOK_DRM_IOCTL_ENTER, commonHookHOOK_DRM_IOCTL_EXIT:
		// The kernel sends these as ioctl_enter_record / ioctl_exit_record; a full record
		// of an ioctl hook is not a record any program writes.
		return unknownHook(ev, r.Hook)
	case commonHookHOOK_BO_VALIDATE_ENTER, commonHookHOOK_BO_VALIDATE_EXIT:
		ev.Func = funcName(d.boFuncs, r.Func)
		ev.Ret = r.Ret
	case commonHookHOOK_RUN_JOB_EXIT:
		ev.Func = funcName(d.runFuncs, r.Func)
		ev.Ret = r.Ret
	case commonHookHOOK_IRQ_HANDLER_ENTRY, commonHookHOOK_IRQ_HANDLER_EXIT:
		ev.IRQ = r.Irq
		ev.IRQName = d.irqNames[r.Irq]
		ev.Ret = r.Ret
	case commonHookHOOK_DRM_SCHED_PROCESS_JOB:
		ev.FencePtr = r.Ptr
	case commonHookHOOK_MSM_GPU_SUBMIT, commonHookHOOK_MSM_GPU_SUBMIT_FLUSH, commonHookHOOK_MSM_GPU_SUBMIT_RETIRED:
		// drivers.c: ring id in arg, msm_gpu_submit's pid (the submitting thread) in cmd
		// (0 from flush and retire), the GPU counter values in dep_ctx/dep_seqno (flush:
		// ticks; retired: start, end).
		ev.Ring = strconv.FormatUint(r.Arg, 10)
		ev.Submitter = r.Cmd
		switch commonHook(r.Hook) {
		case commonHookHOOK_MSM_GPU_SUBMIT_FLUSH:
			ev.GPUTicks = r.DepCtx
		case commonHookHOOK_MSM_GPU_SUBMIT_RETIRED:
			ev.GPUStart, ev.GPUEnd = r.DepCtx, r.DepSeqno
		}
	}
	return nil
}

func funcName(funcs []string, i uint16) string {
	if int(i) < len(funcs) {
		return funcs[i]
	}
	return "func(" + strconv.Itoa(int(i)) + ")"
}
