// The CUDA source's configuration: what it hooks, how large its ring and queues are,
// and the defaults and checks applied at Open.

package cuda

import (
	"fmt"
	"os"
	"time"

	"github.com/ghostdriver/ghostdriver/internal/ctxtier"
)

// Config selects what the CUDA source hooks.
type Config struct {
	// ProcRoot is where processes are found (default /proc; tests point elsewhere).
	ProcRoot string
	// ExtraLibraries are more library files to hook (absolute paths), e.g. a runtime
	// statically linked into an application library that exports the cuda* symbols.
	ExtraLibraries []string
	// RescanInterval is how often /proc/*/maps is scanned for CUDA library files not
	// hooked yet (new containers, new CUDA versions). Default 2s; <0 disables.
	RescanInterval time.Duration
	// IgnoreEntryPoints turns off following cuGetProcAddress: launches the runtime makes
	// through the driver's entry-point table are then seen only at the runtime layer.
	IgnoreEntryPoints bool
	// NoXid leaves the nvidia:nvidia_dev_xid tracepoint alone.
	NoXid bool
	// RingBufferBytes sizes the ring (power of two, page multiple; default 4 MiB).
	RingBufferBytes int
	// PollInterval is the reader's deadline (default 10ms): records are produced
	// without wakeups and drained at least this often.
	PollInterval time.Duration
	// ContextTiers are the in-kernel application trace-context tiers read at the entry
	// of a top-level API call, in lookup order ("otep4947", "obi"); nil means both in
	// that order, an empty non-nil slice none.
	ContextTiers []string
	// OBIMapPath is where OBI pins traces_ctx_v1 (default ctxtier.OBIMapPath);
	// when nothing usable is pinned there the OBI tier reads an empty placeholder.
	OBIMapPath string

	// Layers picks whose API functions are hooked: "" or "both" (the default: runtime and
	// driver, a runtime launch is then seen twice, the driver call nested in it), "driver"
	// (libcuda only: the runtime reaches the driver for every launch, so launches are
	// still seen once each, at depth 0, but under driver names), or "runtime" (libcudart
	// only: direct driver calls such as Triton's launches are not seen). A lever on the
	// per-call cost (issue 15): fewer uprobes per launch.
	Layers string
	// LaunchesAtEntry records the launch calls (ClassLaunch) of the innermost hooked layer
	// at their entry with no return probe: the driver's, or the runtime's when Layers is
	// "runtime". One uprobe instead of an entry/return pair; a driver launch made inside a
	// runtime launch (whose pair is kept) still reads as nested. Such a Call has NoReturn
	// set, End == Start and no result (Ret 0): a launch's return only tells how long the
	// enqueue took and whether it failed.
	LaunchesAtEntry bool
	// UprobeMulti attaches each library's functions with two uprobe_multi links (kernel
	// 6.6+: BPF_TRACE_UPROBE_MULTI) instead of a perf-event uprobe per function and
	// probe; where the kernel refuses, the report says so and classic uprobes are used.
	// Entry points learnt later keep classic uprobes.
	UprobeMulti bool
	// SyncWakeups attaches sched:sched_waking and irq:irq_handler_entry (the nvidia
	// driver's interrupts, by WakeupIRQNames): a call during which the scheduler woke its
	// thread carries the last wake-up and the latest GPU interrupt before it (Call.Wake,
	// Call.IRQ), which splits a blocking sync's wait (interrupt → wake-up → return). Every
	// wake-up on the host runs the program (one hash lookup for threads not in a call).
	SyncWakeups bool
	// WakeupIRQNames are the interrupt actions counted as the GPU's (default "nvidia").
	WakeupIRQNames []string
	// FloorLaunches is for measuring only (cudatrace -floor): the launches LaunchesAtEntry
	// would record at entry are hooked there with a program that counts the hit
	// (Source.FloorHits) and returns, recording nothing. The added time per launch over
	// no tracer is then the uprobe trap and the program's dispatch alone, the floor under
	// LaunchesAtEntry's. Launches are not seen: never set it to trace.
	FloorLaunches bool

	// hookQueue bounds the learned entry points waiting for the hook worker (default
	// defaultHookQueue; tests make it small).
	hookQueue int
	// threadTable is the size of the kernel's per-thread frame table, cuda_threads
	// (default defaultThreadTable; tests make it small to provoke evictions).
	threadTable int
}

// defaultThreadTable: threads of the node that may be inside a traced call at once
// (bpf/cuda.c declares the same; beyond it, live frames are evicted and counted as
// Stats.ReturnsWithoutFrame).
const defaultThreadTable = 16384

// defaultHookQueue bounds the learned entry points waiting for the worker. The runtime
// asks cuGetProcAddress for every driver function once per process at initialisation
// (a few hundred names, most of them not in the API table and not queued), so the queue
// only fills when many processes start at once while the worker is slow.
const defaultHookQueue = 1024

// The defaults of RescanInterval and RingBufferBytes (also the receiver's and the CLI's,
// through internal/graph's DefaultSpec).
const (
	DefaultRescanInterval  = 2 * time.Second
	DefaultRingBufferBytes = 4 << 20
)

func (c Config) withDefaults() (Config, error) {
	if c.ProcRoot == "" {
		c.ProcRoot = "/proc"
	}
	if c.RescanInterval == 0 {
		c.RescanInterval = DefaultRescanInterval
	}
	if c.RingBufferBytes == 0 {
		c.RingBufferBytes = DefaultRingBufferBytes
	}
	if err := checkRingBufferBytes(c.RingBufferBytes); err != nil {
		return c, err
	}
	switch c.Layers {
	case "", LayersBoth, LayersDriver, LayersRuntime:
	default:
		return c, fmt.Errorf("cuda layers %q: want %q, %q or %q", c.Layers, LayersBoth, LayersDriver, LayersRuntime)
	}
	if c.threadTable <= 0 {
		c.threadTable = defaultThreadTable
	}
	if c.hookQueue <= 0 {
		c.hookQueue = defaultHookQueue
	}
	if c.ContextTiers == nil {
		c.ContextTiers = []string{ctxtier.NameOTEP4947, ctxtier.NameOBI}
	}
	if c.OBIMapPath == "" {
		c.OBIMapPath = ctxtier.OBIMapPath
	}
	if c.PollInterval <= 0 {
		c.PollInterval = 10 * time.Millisecond
	}
	return c, nil
}

// checkRingBufferBytes: the kernel takes a BPF ring buffer of a power of two pages.
func checkRingBufferBytes(n int) error {
	page := os.Getpagesize()
	switch {
	case n < page:
		return fmt.Errorf("ring buffer size %d bytes is smaller than one page (%d bytes)", n, page)
	case n&(n-1) != 0:
		return fmt.Errorf("ring buffer size %d bytes is not a power of two", n)
	case n > 1<<30:
		return fmt.Errorf("ring buffer size %d bytes exceeds 1 GiB", n)
	}
	return nil
}

// Config.Layers values.
const (
	LayersBoth    = "both"
	LayersDriver  = "driver"
	LayersRuntime = "runtime"
)

// hooks reports whether the configured layers include l.
func (c Config) hooks(l Layer) bool {
	switch c.Layers {
	case LayersDriver:
		return l == Driver
	case LayersRuntime:
		return l == Runtime
	}
	return true
}

// cookieOf is the attach cookie of API row id under this configuration.
func (c Config) cookieOf(id int) uint64 {
	k := cookie(id)
	if a := apis[id]; (c.LaunchesAtEntry || c.FloorLaunches) && a.Class == ClassLaunch && (a.Layer == Driver || c.Layers == LayersRuntime) {
		k |= cookieEntryOnly
		if c.FloorLaunches {
			k |= cookieFloor
		}
	}
	return k
}
