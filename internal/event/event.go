// Package event is the source-agnostic model of what the kernel told us about GPU work.
//
// Both sources (live eBPF records and replayed ftrace text) produce Event values; the
// assembler consumes nothing else. An Event is a flat value type on purpose: it is
// created once per kernel event on the hot path, so it carries no maps and no pointers
// except the few strings a text decoder has to allocate anyway.
package event

import "fmt"

// Kind says which kernel hook produced an event, normalised across kernel generations:
// drm_sched_job (≤6.16) and drm_sched_job_queue (6.17+) are both JobQueue, and so on.
// The original tracepoint name is kept in Event.Name for diagnostics.
type Kind uint8

const (
	KindUnknown Kind = iota

	// Submitting thread (user context).
	IoctlEnter    // syscalls:sys_enter_ioctl / fentry drm_ioctl: Fd, Cmd, Arg
	IoctlExit     // syscalls:sys_exit_ioctl / fexit drm_ioctl: Ret
	BOValidStart  // fentry of a buffer-object validation function (Func)
	BOValidEnd    // fexit of a buffer-object validation function (Func, Ret)
	JobQueue      // drm_sched_job / drm_sched_job_queue / amdgpu_cs_ioctl
	JobDependency // drm_sched_job_wait_dep / drm_sched_job_add_dep / drm_sched_job_unschedulable: Dep

	// Scheduler worker.
	JobRun    // drm_run_job / drm_sched_job_run / amdgpu_sched_run_job
	RunJobEnd // fexit of the driver's run_job callback

	// Completion.
	JobDone // drm_sched_process_job / drm_sched_job_done (scheduler's finished fence signalled)

	// dma_fence core (every driver). Fence is the fence the event is about (32-bit keys).
	FenceInit
	FenceEmit
	FenceEnableSignal
	FenceSignaled
	FenceWaitStart
	FenceWaitEnd
	FenceDestroy
	FenceUsedAsDep // unmerged RFC dma_fence_sync_to / dma_fence_used_as_dependency

	// Interrupts.
	IRQEntry // irq_handler_entry: IRQ, IRQName
	IRQExit  // irq_handler_exit: IRQ, Ret (1 handled)

	// The drivers' own kinds (i915, xe, msm, virtio_gpu, v3d, vc4, ...) are the event
	// table's: kinds_drivers.go, generated from internal/eventdef/table.go, declares them
	// from firstDriverKind to endDriverKinds; what their fields carry is said in the table.
	firstDriverKind
)

const (
	// trace_marker writes ("print" events), kept as markers on the timeline.
	Marker Kind = endDriverKinds + iota

	// Process lifecycle (live source), only for processes the enricher resolved: their
	// cached attribution and thread-context recipe are stale. PID is the process.
	ProcessExec // sched_process_exec
	ProcessExit // sched_process_exit of the thread-group leader

	// A capture's "CPU:N [LOST n EVENTS]" note: CPU lost Arg events (0: the count was
	// not printed) between its event before the note and its event after it.
	EventsLost

	kindCount
)

var kindNames = withDriverKinds([kindCount]string{
	KindUnknown:       "unknown",
	IoctlEnter:        "ioctl_enter",
	IoctlExit:         "ioctl_exit",
	BOValidStart:      "bo_validate_start",
	BOValidEnd:        "bo_validate_end",
	JobQueue:          "job_queue",
	JobDependency:     "job_dependency",
	JobRun:            "job_run",
	RunJobEnd:         "run_job_end",
	JobDone:           "job_done",
	FenceInit:         "fence_init",
	FenceEmit:         "fence_emit",
	FenceEnableSignal: "fence_enable_signal",
	FenceSignaled:     "fence_signaled",
	FenceWaitStart:    "fence_wait_start",
	FenceWaitEnd:      "fence_wait_end",
	FenceDestroy:      "fence_destroy",
	FenceUsedAsDep:    "fence_used_as_dependency",
	IRQEntry:          "irq_entry",
	IRQExit:           "irq_exit",
	Marker:            "marker",
	ProcessExec:       "process_exec",
	ProcessExit:       "process_exit",
	EventsLost:        "events_lost",
})

// withDriverKinds adds the drivers' kinds' names (kinds_drivers.go) to the core's.
func withDriverKinds(names [kindCount]string) [kindCount]string {
	copy(names[firstDriverKind:endDriverKinds], driverKindNames[:])
	return names
}

// String returns the stable, metric-safe name of the kind.
func (k Kind) String() string {
	if k < kindCount {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Kinds lists every defined kind except KindUnknown, in declaration order.
func Kinds() []Kind {
	out := make([]Kind, 0, kindCount-1)
	for k := Kind(1); k < kindCount; k++ {
		out = append(out, k)
	}
	return out
}

// FenceKey identifies a dma_fence: (context, seqno). Scheduler events of 6.17+ carry
// 64-bit values; dma_fence tracepoints truncate both to 32 bits (Wide=false).
type FenceKey struct {
	Context uint64
	Seqno   uint64
}

// IsZero reports whether the key is unset.
func (f FenceKey) IsZero() bool { return f.Context == 0 && f.Seqno == 0 }

// Truncated returns the key as a 32-bit dma_fence tracepoint would print it.
func (f FenceKey) Truncated() FenceKey {
	return FenceKey{Context: f.Context & 0xffffffff, Seqno: f.Seqno & 0xffffffff}
}

func (f FenceKey) String() string { return fmt.Sprintf("%d:%d", f.Context, f.Seqno) }

// Event is one kernel event, normalised. Fields that a kind does not use are zero.
//
// The fields are grouped by type, strings first: an event is copied into and out of the
// assembler's reorder buffer, and the garbage collector scans and write-barriers only the
// prefix of a struct that holds pointers (144 bytes with the strings first, 304 when they
// were spread among the numbers), and grouping the small fields saves the padding (336
// bytes with InThreadOrder, was 368 without it). Keep new string fields in the first group.
type Event struct {
	Comm string // the thread's comm; empty on the live source's fence events and syscall ioctl exits (the entry has it)

	// Name is the tracepoint (or hook) name as the kernel spells it, for diagnostics.
	Name string

	Driver   string // fence driver name, or the GPU driver that produced the event
	Timeline string // fence timeline name (never used as a key: may read "signaled-timeline")
	Device   string // dev_name of the scheduler's device (PCI address) when the event carries it
	Ring     string // ring / scheduler / engine name

	IRQName string // IRQ: the interrupt's name

	// Func is the kernel function of an fentry/fexit event (BO validation, run_job).
	Func string

	// Text is a marker's payload.
	Text string

	// Time is nanoseconds on the source's clock: CLOCK_MONOTONIC for the live source,
	// the capture's own timestamp for replay. The source supplies the wall-clock anchor.
	Time int64

	// Fence: for scheduler events, the scheduler's finished fence of the job; for
	// dma_fence events, the fence itself. FenceWide (below) is true when both halves are 64-bit.
	Fence FenceKey
	// Dep: the fence a JobDependency event says the job depends on (DepWide below).
	Dep FenceKey

	JobID    uint64   // scheduler job id, amdgpu sched_job id, msm submit id, xe job pointer
	FencePtr uint64   // old kernels: fence pointer (hashed %p in text), the only job identity they print
	Entity   uint64   // scheduler entity pointer, when printed
	ClientID uint64   // DRM client id (6.17+ scheduler events)
	HWFence  FenceKey // hardware fence linked in the kernel (s_fence->parent), when the live source reads it

	// ioctl: Arg and Ret (Fd and Cmd below); Ret is also an fexit's return value.
	Arg uint64
	Ret int64

	// GPU-side stamps and the submitter, from driver events that print them
	// (docs/gpu-timestamps.md). msm_gpu_submit_flush: GPUTicks is the GPU's always-on
	// counter as the CPU read it just before the event (the anchor to the CPU clock).
	// msm_gpu_submit_retired: GPUStart and GPUEnd are the counter values the GPU wrote
	// at the submit's start and end (both 0 when the GPU generation writes none). The
	// counters are unsigned 64-bit; the kernel prints them %lld (values from 2^63 read
	// negative and are kept as two's complement). Submitter (below) is the thread id the
	// driver stored for the submit (msm's pid=: pid_nr of the submitting thread's
	// struct pid), whatever thread the event itself ran on; 0 when not printed.
	GPUTicks uint64
	GPUStart uint64
	GPUEnd   uint64

	// Trace context read at the submitting ioctl (live source only; zero otherwise).
	// CtxTier (below) numbers the tier that supplied it (internal/ctxtier; 0: none) and
	// TraceFlags (below) are its W3C trace flags.
	TraceID [16]byte
	SpanID  [8]byte

	CPU int32
	PID uint32 // thread-group id when known (0 when the source only knows the thread)
	TID uint32 // kernel task id of the thread the event ran on

	// ioctl (Cmd: the ioctl command; of virtio_gpu command events, the command type)
	Fd  int32
	Cmd uint32

	// IRQ: the interrupt line (IRQName above)
	IRQ int32

	Submitter uint32

	Kind      Kind
	FenceWide bool
	DepWide   bool
	CtxTier   uint8
	// TraceFlags: the W3C trace flags of the context (bit 0: sampled); meaningful only when
	// CtxTier != 0. OBI's map carries none: its contexts come as 0x01 (bpf/include/appctx.h).
	TraceFlags uint8

	// InThreadOrder: the source hands over every event of this event's thread after the
	// thread's earlier events, whatever CPU they ran on (the live source's one ring buffer,
	// filled by each thread in program order). Events of different threads may still
	// arrive out of order. Set by the source; the assembler's ioctl shortcut needs it
	// (assemble/pairs.go). Not set for a capture handed over per CPU.
	InThreadOrder bool
}
