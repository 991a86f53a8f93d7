// The live source's configuration (Config) and its defaults: which devices' ioctls are
// followed, which kernel functions bound the stages, the ring buffer and poll interval,
// the context tiers, the record mode.

package probe

import (
	"fmt"
	"os"
	"time"

	"github.com/ghostdriver/ghostdriver/internal/ctxtier"
)

// Config selects what the live source hooks and how it reads.
type Config struct {
	// DRMMajors are the character-device majors whose ioctls are submits (DRM: 226).
	// The syscall hooks filter on them in the kernel, before anything is reserved.
	DRMMajors []uint32
	// IoctlTypes are the _IOC_TYPE bytes of the ioctls followed on each major (226, DRM:
	// 'd', built in). When every major of DRMMajors has its types here, an ioctl of
	// another type is dropped before its file is looked at — the filter-miss path every
	// ioctl of the host pays; otherwise every ioctl's fd is checked.
	IoctlTypes map[uint32][]uint8
	// BOValidationFuncs are kernel functions whose fentry/fexit bound bo_validation (t1).
	BOValidationFuncs []string
	// RunJobFuncs are drivers' drm_sched run_job callbacks (fexit: te, hardware fence).
	RunJobFuncs []string
	// RingBufferBytes is the size of the one ring buffer: a power of two, a multiple
	// of the page size (default 8 MiB).
	RingBufferBytes int
	// PollInterval is the reader's deadline: records are produced without wakeups and
	// drained at least this often (default 10ms).
	PollInterval time.Duration
	// IRQNames are interrupt action names (as in /proc/interrupts) of GPU drivers whose
	// interrupts are hooked; an action matches when it equals a name or starts with
	// name + "-" or "_". Default none: the GPU interrupt hooks are opt-in (GPUIRQNames
	// lists the known drivers' names). No stage uses these events — a hardware fence's
	// signal, not the interrupt's entry, bounds a job's hardware-done point (docs/stages.md)
	// — while every interrupt of the host would run the entry and exit hooks; the events
	// are only counted (ghostdriver.events{kind=irq_entry|irq_exit}).
	IRQNames []string

	// ContextTiers are the in-kernel application trace-context tiers read at the submit
	// ioctl, in lookup order: ctxtier.NameOTEP4947, ctxtier.NameOBI. nil means both in that order; an
	// empty non-nil slice reads none (TRACEPARENT is applied in user space, not here).
	ContextTiers []string
	// OBIMapPath is where OBI pins its traces_ctx_v1 map (default DefaultOBIMapPath).
	// When nothing is pinned there at start, the DRM programs skip the OBI tier (their
	// placeholder map would stay empty); a map pinned later is used from the next start.
	OBIMapPath string

	// ClassicTracepoints hooks the gpu_scheduler and driver events with their last rung,
	// classic tracepoints decoded with the events' tracefs formats (classic.go), even
	// where tp_btf/raw_tp would attach; the report lists the rungs skipped. That rung
	// needs no BTF; its events carry what they print (≤6.16 scheduler events: pointers,
	// joined to fence keys through the dma_fence hooks). Off: it is only the last resort.
	ClassicTracepoints bool

	// Records picks how the scheduler and dma_fence hooks report (jobs_config.go):
	// RecordsJobs, one ring-buffer record per completed job from per-job state in the
	// kernel, or RecordsEvents, one record per hook run (kept for debugging). "" is
	// DefaultRecords. JobsMapEntries bounds the kernel's pending-job state in jobs mode.
	Records        string
	JobsMapEntries int

	// NoTracefsMount forbids the loader to mount tracefs where it is not mounted. Without
	// tracefs the submit ioctls are hooked with raw_tp sys_enter/sys_exit, which run for
	// every syscall of the host (logged at warn level, and in doctor's verdict). With it
	// off, the loader mounts tracefs at /sys/kernel/tracing when nothing is mounted there,
	// attaches, and unmounts it again (logged).
	NoTracefsMount bool
	// FenceFilter sends dma_fence events only for contexts seen in GPU jobs (bpf/fence.c);
	// the others are counted (ghostdriver.source.kernel_drops{reason=fence_passed_over}).
	// A context is followed once its first job has been read, so that job's earlier
	// fence events are passed over; the context of a fence emitted inside a followed ioctl
	// (virtio_gpu's jobs, whose events name none) is followed from that emit on, by the kernel.
	FenceFilter bool
	// SendJoblessIoctls sends the records of every followed ioctl. By default (false), a
	// process the enricher has resolved sends its ioctl's entry only once something of the
	// thread is recorded inside the ioctl (a job queued, a BO validated, a fence waited
	// on), and an ioctl with nothing inside is counted in the kernel
	// (ghostdriver.source.kernel_drops{reason=ioctl_without_job}) instead of sent
	// (bpf/include/ioctl_slot.h). It needs task storage (5.11+); without it every ioctl
	// is sent anyway.
	SendJoblessIoctls bool
	// IRQRefreshInterval is how often /proc/interrupts is read again for GPU interrupt
	// lines registered after Start (default 30s; negative: never). Not read at all
	// without IRQNames.
	IRQRefreshInterval time.Duration
	// InflightThreads sizes the pre-5.11 table of threads inside a followed ioctl (an
	// LRU hash keyed by tid; default 16384). Unused where the kernel has task storage.
	InflightThreads int

	// noTaskStorage makes the ioctl hooks use their pre-5.11 path (the inflight hash)
	// even where task storage exists: tests run both paths on one kernel.
	noTaskStorage bool
}

// DefaultOBIMapPath is OBI's default pin path of traces_ctx_v1.
const DefaultOBIMapPath = ctxtier.OBIMapPath

// maxCtxTiers mirrors MAX_CTX_TIERS in bpf/include/appctx.h.
const maxCtxTiers = ctxtier.MaxKernel

// ctxOrder is the ctx_order constant of bpf/include/appctx.h for the configured tiers.
func (c Config) ctxOrder() ([maxCtxTiers]uint8, error) {
	return ctxtier.KernelOrder(c.ContextTiers)
}

// MaxDRMMajors is how many device majors the ioctl filter holds: MAX_MAJORS of
// bpf/syscalls.c (enum ioctl_limit, generated), one link constant gd_majorN each.
const MaxDRMMajors = int(syscallsIoctlLimitMAX_MAJORS)

// DefaultConfig returns the configuration used when the user sets nothing.
func DefaultConfig() Config {
	return Config{
		DRMMajors: []uint32{226},
		BOValidationFuncs: []string{
			"amdgpu_cs_parser_bos",
			"ttm_bo_validate",
			"drm_gem_objects_lookup",
			"xe_bo_validate",
		},
		RunJobFuncs: []string{
			"amdgpu_job_run",
			"nouveau_sched_run_job",
			"panfrost_job_run",
			"panthor_queue_run_job",
			"msm_job_run",
			"etnaviv_sched_run_job",
			"lima_sched_run_job",
			"v3d_bin_job_run",
			"v3d_render_job_run",
		},
		ContextTiers:    []string{ctxtier.NameOTEP4947, ctxtier.NameOBI},
		OBIMapPath:      DefaultOBIMapPath,
		RingBufferBytes: 8 << 20,
		PollInterval:    10 * time.Millisecond,
		// GPU interrupt lines registered after Start are found within this.
		IRQRefreshInterval: 30 * time.Second,
		InflightThreads:    16384,
	}
}

// GPUIRQNames are the interrupt action names of the GPU drivers ghostdriver knows, for
// Config.IRQNames (live.irq_names) when a user asks for the GPU interrupt hooks.
var GPUIRQNames = []string{
	"amdgpu", "radeon", "i915", "xe", "msm", "kgsl-3d0", "nouveau", "nvidia",
	"panfrost", "panthor", "v3d", "etnaviv", "lima",
}

// withDefaults fills zero fields from DefaultConfig and checks the rest.
func (c Config) withDefaults() (Config, error) {
	d := DefaultConfig()
	if len(c.DRMMajors) == 0 {
		c.DRMMajors = d.DRMMajors
	}
	if len(c.DRMMajors) > MaxDRMMajors {
		return c, fmt.Errorf("at most %d device majors can be filtered, got %d", MaxDRMMajors, len(c.DRMMajors))
	}
	if c.BOValidationFuncs == nil {
		c.BOValidationFuncs = d.BOValidationFuncs
	}
	if c.RunJobFuncs == nil {
		c.RunJobFuncs = d.RunJobFuncs
	}
	if len(c.BOValidationFuncs) > 0xffff || len(c.RunJobFuncs) > 0xffff {
		return c, fmt.Errorf("too many functions")
	}
	if c.RingBufferBytes == 0 {
		c.RingBufferBytes = d.RingBufferBytes
	}
	page := os.Getpagesize()
	if n := c.RingBufferBytes; n < page || n&(n-1) != 0 || n%page != 0 {
		return c, fmt.Errorf("ring buffer size %d is not a power of two multiple of the page size (%d)", n, page)
	}
	if c.PollInterval <= 0 {
		c.PollInterval = d.PollInterval
	}
	if c.IRQNames == nil {
		c.IRQNames = d.IRQNames
	}
	if c.ContextTiers == nil {
		c.ContextTiers = d.ContextTiers
	}
	if _, err := c.ctxOrder(); err != nil {
		return c, err
	}
	if c.OBIMapPath == "" {
		c.OBIMapPath = d.OBIMapPath
	}
	if c.IRQRefreshInterval == 0 {
		c.IRQRefreshInterval = d.IRQRefreshInterval
	}
	if c.InflightThreads == 0 {
		c.InflightThreads = d.InflightThreads
	}
	if c.InflightThreads < 0 {
		return c, fmt.Errorf("inflight threads %d is negative", c.InflightThreads)
	}
	return c.withJobsDefaults()
}
