// What the CUDA source hands on (Call, Xid through a Sink) and what it counts (Stats,
// Losses, the kernel's per-CPU loss counters).

package cuda

// Call is one traced CUDA API call, entry to return, decoded.
type Call struct {
	API   int // row of APIs()
	Start int64
	End   int64 // source clock (CLOCK_MONOTONIC ns)
	PID   uint32
	TID   uint32
	CPU   uint32
	Comm  string
	// Stream is the stream argument (for event APIs: the event). Bytes is the size
	// argument scaled to bytes, Handle the API's handle argument (api.go).
	Stream, Bytes, Handle uint64
	Ret                   int32
	// Depth is how many traced calls were in progress on the thread at entry: the
	// driver launch the runtime makes inside cudaLaunchKernel has Depth 1.
	Depth uint8
	// EntryPoint is true when the call was caught at an address learned from
	// cuGetProcAddress rather than at the exported symbol.
	EntryPoint bool
	// Untimed: nested deeper than the BPF stack (Start is 0); ArgFault: an argument
	// could not be read.
	Untimed, ArgFault bool
	// NoReturn: recorded at entry (Config.LaunchesAtEntry): End == Start, Ret not read.
	NoReturn bool
	// CtxTier says where TraceID/SpanID (the calling thread's application span when the
	// call began) came from: ctxtier.OTEP4947 or ctxtier.OBI, 0 when none
	// (nested calls never read it). TraceFlags are that span's W3C trace flags (bit 0:
	// sampled; OBI's map has none: its contexts come as 0x01), meaningful only when
	// CtxTier != 0.
	CtxTier    uint8
	TraceFlags uint8
	TraceID    [16]byte
	SpanID     [8]byte
	// WakeTraced: the source followed the thread's wake-ups during the call
	// (Config.SyncWakeups attached). Wake is the scheduler's last wake-up of the thread
	// inside the call (0: it never slept, or was not traced); IRQ the latest GPU interrupt
	// before that wake-up (0: none seen). Source clock.
	WakeTraced bool
	Wake, IRQ  int64
}

// Name is the API function's name.
func (c *Call) Name() string { return apis[c.API].Name }

// Info is the call's API row.
func (c *Call) Info() API { return apis[c.API] }

// Xid is one nvidia:nvidia_dev_xid event: the driver reported a GPU error.
type Xid struct {
	Time   int64
	Device string // PCI name (0000:xx:00.0)
	Code   uint32
	Msg    string
	// PID/TID are of the task the tracepoint ran in: often the faulting process (the
	// channel's owner when the error is reported from its ioctl), often not (interrupt
	// or a kernel worker): match jobs by device and time, not by PID alone.
	PID, TID uint32
	Comm     string
}

// Sink receives the source's output in order per CPU (the reader merges CPUs as the
// ring buffer does: commit order). The slice is only valid during the call.
type Sink interface {
	Calls(batch []Call)
	Xid(x Xid)
	// ProcessGone: a process the source was told about (SetProcess) exec'd or exited;
	// the kernel has already forgotten its thread-context recipe.
	ProcessGone(pid uint32, exec bool)
	// Watermark says no record earlier than t is still to come except within the
	// poll interval; it drives the assembler's timeouts.
	Watermark(t int64)
}

// Stats is what the source counted.
type Stats struct {
	Calls              uint64 // call records decoded
	ByAPI              map[string]uint64
	Xids               uint64
	ProcAddress        uint64 // cuGetProcAddress returns seen
	EntryPointHooks    uint64 // uprobes attached at addresses learned from them
	EntryPointAtExport uint64 // learned addresses that were the exported symbol itself
	// EntryPointsRefused counts learned addresses not hooked: outside every hooked driver
	// library (libcuda), not the start of one of its function symbols, or over the
	// library's maxLearntHooks. The addresses come from the process: it can return any.
	EntryPointsRefused uint64
	// EntryPointsDropped counts learned entry points (cuGetProcAddress returns of API
	// table symbols) never examined: the hook worker's queue was full. Calls through
	// such a pointer are seen at the runtime layer only.
	EntryPointsDropped uint64
	// MapsTruncated counts /proc/<pid>/maps reads that stopped at their bounds
	// (mapsBounds): libraries or entry points beyond them are not seen.
	MapsTruncated uint64
	Libraries     int
	Malformed     uint64
	Lost          uint64 // ring buffer reserve failures (kernel side), and records left in the ring at the stop (ringread.Stop)
	// StaleFrames counts calls whose return the kernel never saw (a frame dropped by
	// stack position: hook attached mid-call, longjmp or an exception through it).
	StaleFrames uint64
	// ReturnsWithoutFrame counts returns the kernel saw with no entry frame for them:
	// the thread's frames were evicted from the thread table (more threads inside calls
	// than it holds), or the call began before its entry hook was attached. Each is a
	// call not recorded.
	ReturnsWithoutFrame uint64
	Recipes             uint64 // processes pushed into the kernel's thread-context table
	ProcessesGone       uint64 // exec/exit records of those processes
	WithContext         uint64 // top-level calls that carried an in-kernel application context
	// ContextUnreadable counts top-level calls of processes with an OTEP 4947 recipe whose
	// thread context could not be read: a read of the thread's memory faulted in the kernel
	// (memory being collapsed into a huge page or migrated at that instant).
	ContextUnreadable uint64
}

// Losses are the calls the source saw begin (or return) but could not record, by cause,
// and the learned entry points it never examined; all cumulative.
type Losses struct {
	RingBuffer   uint64 // ring-buffer reserve failures and records left at the stop (Stats.Lost)
	MissedReturn uint64 // entry frames dropped by stack position (Stats.StaleFrames)
	NoFrame      uint64 // returns without an entry frame (Stats.ReturnsWithoutFrame)
	// EntryPointsDropped: the hook worker's queue was full (Stats.EntryPointsDropped).
	EntryPointsDropped uint64
}
