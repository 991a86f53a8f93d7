// Source-side contracts shared by the live and replay sources.

package event

import (
	"context"

	"github.com/ghostdriver/ghostdriver/internal/capability"
)

// Clock converts a source timestamp (Event.Time) to wall-clock Unix nanoseconds.
// Replay: epoch + capture time, exactly. Live: CLOCK_MONOTONIC + a re-synced offset.
type Clock interface {
	WallNanos(t int64) int64
}

// OffsetClock is a fixed offset clock: wall = t + Offset.
type OffsetClock struct{ Offset int64 }

// WallNanos implements Clock.
func (c OffsetClock) WallNanos(t int64) int64 { return t + c.Offset }

// Sink receives events in batches, in the order the source produced them. The slice is
// only valid during the call: a sink that keeps events must copy them.
type Sink interface {
	Consume(batch []Event)
	// Watermark tells the sink that no event earlier than t (source clock) is still to
	// come except within the source's reorder window; it drives timeouts.
	Watermark(t int64)
}

// Source produces events until ctx is cancelled or the input ends.
type Source interface {
	// Clock is valid once Run has started delivering events.
	Clock() Clock
	// Run blocks, delivering to sink, and returns nil at the end of a finite input.
	Run(ctx context.Context, sink Sink) error
	// Stats reports what the source decoded, skipped and dropped so far.
	Stats() SourceStats
}

// SourceStats is what a source counted. Nothing is dropped without being counted here.
type SourceStats struct {
	Events    [kindCount]uint64 // decoded events by kind
	Unknown   map[string]uint64 // events of families we do not decode, by name
	Malformed uint64            // lines/records that could not be parsed
	// MalformedSamples holds the first few malformed inputs with their position
	// ("line 1234: <reason>").
	MalformedSamples []string
	// Truncated counts inputs that ended inside a line (a capture cut short, no final
	// newline): the partial line is not decoded.
	Truncated uint64
	// SortedRuns is how many sorted runs a capture not in time order was merged from (per-CPU
	// files concatenated); 0 when it was read in its own order.
	SortedRuns int
	// Lost counts events the kernel could not deliver: ring buffer reserve failures and
	// program runs it skipped (recursion protection).
	Lost uint64
	// LostSkipped is the part of Lost that is program runs the kernel skipped (live
	// source); the rest are ring buffer reserve failures (live) or a capture's loss notes.
	LostSkipped uint64
	// LostAtStop is the part of Lost that the ring still held at the live source's stop
	// when the stop's read of it ran out of time (internal/ringread: Stop, StopTimeout).
	LostAtStop uint64
	// Hooks is the live source's capability report: each stage's hook and whether it
	// attached (nil for replay).
	Hooks []HookStatus
	// KernelDrops counts what the live source's kernel side passed over or could not keep
	// besides Lost, by reason (the KernelDrop* names; nil for replay).
	KernelDrops map[string]uint64
}

// Reasons of SourceStats.KernelDrops (ghostdriver.source.kernel_drops).
const (
	// A followed submit ioctl whose arguments found no slot for its exit (the enter is
	// recorded, the exit will not be).
	KernelDropIoctlSlotUnavailable = "ioctl_slot_unavailable"
	// A pending submit ioctl's slot evicted from the pre-5.11 tid table (LRU): its exit
	// will not be recorded.
	KernelDropIoctlSlotEvicted = "ioctl_slot_evicted"
	// A thread exited with a followed submit ioctl in flight.
	KernelDropIoctlThreadExited = "ioctl_thread_exited"
	// A followed submit ioctl entered while the thread's previous one was still in flight:
	// that one's exit was never recorded (no slot at the exit, the exit hook skipped).
	KernelDropIoctlExitMissed = "ioctl_exit_missed"
	// A dma_fence event passed over by the fence filter (its context is in no GPU job seen).
	KernelDropFencePassedOver = "fence_passed_over"
	// A process the enricher resolved that did not fit the kernel's process table: its
	// submits carry no in-kernel thread context and its exec/exit is not reported.
	KernelDropProcessTableFull = "process_table_full"
	// A GPU interrupt line found after Start (by the periodic re-read of
	// /proc/interrupts): its interrupts until then were not seen. Counts lines, not events.
	KernelDropIRQFoundLate = "gpu_irq_found_late"
	// live.records: jobs. A new job found the kernel's pending-job map full: each of its
	// hooks sent its stamp at once instead (decoded, nothing lost). Counts jobs.
	KernelDropJobStateFull = "job_state_full"
	// live.records: jobs. A job pending in the kernel's map longer than the reader holds
	// events back (5 s), taken out of the map and decoded with what it had; a later stamp
	// of it comes as a second record, joined by its fence key. Counts jobs.
	KernelDropJobStateEvicted = "job_state_evicted"
	// Not a loss: a followed ioctl of a process user space knows in which nothing of the
	// thread was recorded (no job queued, no BO validated, no fence waited on). Its
	// records were not sent (probe.Config.SendJoblessIoctls); user space would only have
	// counted it. Counts ioctls.
	KernelDropIoctlWithoutJob = "ioctl_without_job"
	// A followed ioctl's entry of a process with an OTEP 4947 recipe whose thread context
	// could not be read: a read of the thread's memory faulted in the kernel, where no page
	// fault may be taken, at the entry and (deferred entries) again when it was sent. The
	// memory was not mapped at that instant (the kernel collapsing it into a huge page, or
	// migrating it), or the recipe points nowhere. The entry goes out without its context.
	// Counts entries. (CUDA calls: cuda.Stats.ContextUnreadable.)
	KernelDropThreadContextUnreadable = "thread_context_unreadable"
)

// KernelDropReasons lists the reasons in export order.
var KernelDropReasons = []string{
	KernelDropIoctlSlotUnavailable, KernelDropIoctlSlotEvicted, KernelDropIoctlThreadExited,
	KernelDropIoctlExitMissed, KernelDropFencePassedOver, KernelDropProcessTableFull, KernelDropIRQFoundLate,
	KernelDropJobStateFull, KernelDropJobStateEvicted, KernelDropIoctlWithoutJob, KernelDropThreadContextUnreadable,
}

// HookStatus is one line of a live source's capability report, the report's own entry
// type (internal/capability), so that the report becomes the hooks metric unconverted.
type HookStatus = capability.Entry

// EventsOf returns the count of decoded events of kind k.
func (s *SourceStats) EventsOf(k Kind) uint64 {
	if k < kindCount {
		return s.Events[k]
	}
	return 0
}
