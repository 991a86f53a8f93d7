// Configuration of the ghostdriver receiver and its validation. Validate checks only
// what the YAML says; host capabilities (kernel, BTF, privileges) are checked in Start,
// so `otelcol validate` works on any machine.

package ghostdriverreceiver

import (
	"errors"
	"fmt"
	"github.com/ghostdriver/ghostdriver/internal/cupti"
	"math"
	"path/filepath"
	"strings"
	"time"

	"github.com/ghostdriver/ghostdriver/internal/enrich"
	"github.com/ghostdriver/ghostdriver/internal/graph"
	"github.com/ghostdriver/ghostdriver/internal/metadata"
	"github.com/ghostdriver/ghostdriver/internal/replay"
	"github.com/ghostdriver/ghostdriver/internal/sample"
)

// Source names.
const (
	SourceLive   = "live"
	SourceReplay = "replay"
)

// Error modes: what Start does when the live source cannot attach what it needs.
const (
	ErrorModePropagate = "propagate" // fail Start: the collector does not come up
	ErrorModeIgnore    = "ignore"    // keep the collector up, report the receiver's status
)

// Limits that keep the kernel side and the job table bounded whatever the YAML says.
const (
	maxPendingJobsLimit = 10_000_000
	maxRingBufferBytes  = 1 << 30
	minRingBufferBytes  = 1 << 16
	maxFunctions        = 64
)

// Config is the receiver's configuration.
type Config struct {
	// Source is "live" (eBPF programs in this collector) or "replay" (a capture file).
	Source string `mapstructure:"source"`

	Replay ReplayConfig `mapstructure:"replay"`
	Live   LiveConfig   `mapstructure:"live"`

	// JobTimeout evicts a job that has not finished this long after its last event
	// (source clock); evicted jobs are emitted with an error status and counted.
	JobTimeout time.Duration `mapstructure:"job_timeout"`
	// MaxPendingJobs caps the table of unfinished jobs; the oldest are evicted first.
	MaxPendingJobs int `mapstructure:"max_pending_jobs"`
	// ReorderWindow holds finished jobs this long (source clock) for late events from
	// other CPUs before they are emitted.
	ReorderWindow time.Duration `mapstructure:"reorder_window"`

	// FlushInterval is how often buffered job spans are sent to the next consumer.
	FlushInterval time.Duration `mapstructure:"flush_interval"`
	// CollectionInterval is how often metrics are sent to the next consumer.
	CollectionInterval time.Duration `mapstructure:"collection_interval"`
	// StageSpans: one child span per stage under each gpu.job span (default true). Off,
	// each job is one span and its stages are only in ghostdriver.stage.duration: for
	// job rates where seven spans a job are too many to store.
	StageSpans bool `mapstructure:"stage_spans"`

	// ErrorMode is "propagate" (default) or "ignore".
	ErrorMode string `mapstructure:"error_mode"`

	Metrics metadata.MetricsConfig `mapstructure:"metrics"`

	// Sampling: which jobs get spans; every job is in the metrics whatever it decides
	// (docs/design.md "Sampling at the source").
	Sampling SamplingConfig `mapstructure:"sampling"`

	// Context: how GPU job spans join application traces (live source).
	Context ContextConfig `mapstructure:"context"`
	// Tenant: attribution of jobs to processes, containers, pods (live source).
	Tenant TenantConfig `mapstructure:"tenant"`
}

// SamplingConfig configures the sampler (internal/sample) of the DRM and CUDA spans.
type SamplingConfig struct {
	// Enabled: unset, on for the live source and off for a replay (a capture is read to
	// see every job); true or false forces it.
	Enabled *bool `mapstructure:"enabled"`
	// SpansPerSecond is the budget: spans a second that the probability share may use
	// beside what keep rules and sampled parents force (default 10 000, ≈ 1 000 jobs a
	// second with their stage spans). Up to it every job's spans are kept; above it the
	// consistent probability threshold rises to hold it. 0: only keep rules and parents.
	SpansPerSecond float64 `mapstructure:"spans_per_second"`
	// Probability caps the probability share (default 1: every job while the budget allows).
	Probability float64 `mapstructure:"probability"`
	// ParentBased: a job linked to an application span follows its W3C sampled flag
	// (default true).
	ParentBased bool `mapstructure:"parent_based"`
	// Tick: how often (source clock) the threshold moves to hold the budget (default 100ms).
	Tick time.Duration `mapstructure:"tick"`
	// Keep: rules that always win (over the budget and over an unsampled parent).
	Keep SamplingKeepConfig `mapstructure:"keep"`
}

// SamplingKeepConfig are the keep rules.
type SamplingKeepConfig struct {
	Failed     bool `mapstructure:"failed"`      // error status (an Xid, a failed sync) (default true)
	Incomplete bool `mapstructure:"incomplete"`  // incomplete, evicted, unsynced (default true)
	LostEvents bool `mapstructure:"lost_events"` // met a window of lost events (default true)
	// SlowestWindow keeps the slowest job of each ring per window (default 10s; 0: off).
	SlowestWindow time.Duration `mapstructure:"slowest_window"`
	// LatencyAbove keeps every job or submission longer than this (0: off, the default).
	LatencyAbove time.Duration `mapstructure:"latency_above"`
	// DependencyWaitAbove keeps every job whose fence_dependency stage is longer (0: off).
	DependencyWaitAbove time.Duration `mapstructure:"dependency_wait_above"`
}

// samplingConfigOf is the receiver's keys for the sampler's configuration c.
func samplingConfigOf(c sample.Config) SamplingConfig {
	return SamplingConfig{
		SpansPerSecond: c.SpansPerSecond,
		Probability:    c.Probability,
		ParentBased:    c.ParentBased,
		Tick:           c.Tick,
		Keep: SamplingKeepConfig{
			Failed: c.Keep.Failed, Incomplete: c.Keep.Incomplete, LostEvents: c.Keep.LostEvents,
			SlowestWindow: c.Keep.SlowestWindow, LatencyAbove: c.Keep.LatencyAbove,
			DependencyWaitAbove: c.Keep.DependencyWaitAbove,
		},
	}
}

// on reports whether the sampler runs for source.
func (c SamplingConfig) on(source string) bool {
	return graph.SamplingOn(c.Enabled, source == SourceReplay)
}

// pipeline is the pipeline's sampling configuration for source (nil: off).
func (c SamplingConfig) pipeline(source string) *sample.Config {
	if !c.on(source) {
		return nil
	}
	sc := c.sampler()
	return &sc
}

// sampler is the sampler's configuration of these keys.
func (c SamplingConfig) sampler() sample.Config {
	return sample.Config{
		SpansPerSecond: c.SpansPerSecond,
		Probability:    c.Probability,
		ParentBased:    c.ParentBased,
		Tick:           c.Tick,
		Keep: sample.KeepConfig{
			Failed: c.Keep.Failed, Incomplete: c.Keep.Incomplete, LostEvents: c.Keep.LostEvents,
			SlowestWindow: c.Keep.SlowestWindow, LatencyAbove: c.Keep.LatencyAbove,
			DependencyWaitAbove: c.Keep.DependencyWaitAbove,
		},
	}
}

// ContextConfig configures the application trace-context tiers (docs/design.md "Linking to application traces").
type ContextConfig struct {
	// Tiers in lookup order; the first that has a context for a job (or a CUDA
	// submission) parents its span. otep4947 (thread context read in the kernel at the
	// submit ioctl, or at the entry of a CUDA API call), obi (OBI's pinned
	// traces_ctx_v1 map), traceparent (TRACEPARENT in the process environment). Leave a
	// tier out to switch it off; [] switches all off (every job span is a root span).
	Tiers []string `mapstructure:"tiers"`
	// OBIMapPath is where OBI pins traces_ctx_v1 (default ctxtier.OBIMapPath,
	// /sys/fs/bpf/traces_ctx_v1).
	OBIMapPath string `mapstructure:"obi_map_path"`
	// MaxWait bounds how long a job whose process is still being read (its first read:
	// TRACEPARENT, resource, thread-context recipe) is held for that read, so that it is
	// not emitted with a worse context than the read gives (default 1s, at most 1m; 0:
	// never hold). Jobs of processes already read are never held.
	MaxWait time.Duration `mapstructure:"max_wait"`
}

// maxContextWait is the longest context.max_wait accepted.
const maxContextWait = time.Minute

// enrichMaxWait is MaxWait as enrich.Config takes it (negative: never hold).
func (c ContextConfig) enrichMaxWait() time.Duration {
	if c.MaxWait == 0 {
		return -1
	}
	return c.MaxWait
}

// TenantConfig configures tenant attribution (the enrich stage, live source only).
type TenantConfig struct {
	// Enabled: read /proc and /sys for the submitting processes (default true). Off, job
	// spans carry only what the kernel events tell (pid, tid, comm) and no traceparent or
	// OTEP 4947 context can be found.
	Enabled bool `mapstructure:"enabled"`
	// ProcRoot and SysRoot: the host's procfs and sysfs (a DaemonSet with hostPID can keep
	// /proc; otherwise mount the host's at /host/proc).
	ProcRoot string `mapstructure:"proc_root"`
	SysRoot  string `mapstructure:"sys_root"`
}

// ReplayConfig configures `source: replay`.
type ReplayConfig struct {
	// Path of a tracefs trace/trace_pipe or `trace-cmd report` text file, gzip or plain.
	Path string `mapstructure:"path"`
	// Epoch: unix nanoseconds or RFC 3339. When set, span time = epoch + capture
	// timestamp exactly; when empty the capture is anchored to the time the replay starts.
	Epoch string `mapstructure:"epoch"`
	// Speed: 0 = as fast as possible, 1 = real time, 2 = twice real time.
	Speed float64 `mapstructure:"speed"`
}

// LiveConfig configures `source: live`.
type LiveConfig struct {
	// DRMMajors: device majors whose ioctls are followed (filtered in the kernel).
	DRMMajors []uint32 `mapstructure:"drm_majors"`
	// BOValidationFunctions: kernel functions traced with fentry/fexit as buffer-object validation.
	BOValidationFunctions []string `mapstructure:"bo_validation_functions"`
	// RunJobFunctions: the drivers' run_job callbacks (fexit marks ring emission done).
	RunJobFunctions []string `mapstructure:"run_job_functions"`
	// RingBufferSize in bytes (power of two, multiple of the page size).
	RingBufferSize int `mapstructure:"ring_buffer_size"`
	// PollInterval: the ring buffer reader's deadline (no per-event wakeups).
	PollInterval time.Duration `mapstructure:"poll_interval"`
	// IRQNames: names in /proc/interrupts of GPU interrupts to hook (irq_handler_entry
	// and irq_handler_exit). Default none: no stage uses interrupts (a job's hardware-done
	// point is its hardware fence's signal), so their events are only counted, while
	// every interrupt of the host would run the hooks. amdgpu, radeon, i915, xe, msm,
	// kgsl-3d0, nouveau, nvidia, panfrost, panthor, v3d, etnaviv and lima are known.
	IRQNames []string `mapstructure:"irq_names"`
	// ClassicTracepoints: hook the gpu_scheduler and driver events (amdgpu, i915, xe,
	// msm) with classic tracepoints, their last rung, even where tp_btf/raw_tp would
	// attach. That rung needs no BTF: the raw trace entry is copied and decoded in user
	// space with the event's tracefs format file, so it carries only what the event
	// prints (before Linux 6.17: pointers, joined to fence keys through dma_fence events).
	// Default false: the classic rung is used only where the others cannot attach.
	ClassicTracepoints bool `mapstructure:"classic_tracepoints"`
	// Records: how the gpu_scheduler and dma_fence hooks report. "jobs": each hook writes
	// its stamp into the job's state in a kernel hash (keyed by the finished fence) and the
	// kernel sends one record per completed job; "events": one record per hook run (the
	// event stream, kept for debugging). Both give the same spans (the virtual GPU rig
	// checks it). jobs needs BTF, so it cannot be combined with classic_tracepoints.
	// Default "": events (probe.DefaultRecords says why jobs is not the default yet).
	Records string `mapstructure:"records"`
	// MountTracefs: where tracefs is not mounted, mount it at /sys/kernel/tracing while the
	// hooks attach and unmount it again (logged), so that the submit ioctls are hooked
	// with the syscall tracepoints. false forbids the mount: the ioctls then fall back to
	// raw_tp sys_enter/sys_exit, which run for every syscall of the host (logged at warn
	// level with the cost measured in BENCHMARKS.md). Default true.
	MountTracefs bool `mapstructure:"mount_tracefs"`
	// FenceFilter: send dma_fence events only for fence contexts seen in GPU jobs; the
	// host's other fences (display, media, sync files) are passed over in the kernel and
	// counted (ghostdriver.source.kernel_drops{reason=fence_passed_over}). A context is
	// followed once its first job has been read, so that job's earlier fence events are
	// passed over too; the context of a fence emitted inside a followed ioctl (virtio_gpu's
	// jobs) is followed from that emit on. Default false: every dma_fence of the host is sent.
	FenceFilter bool `mapstructure:"fence_filter"`
	// SendJoblessIoctls: send the records of every followed ioctl. Default false: an ioctl
	// of a process already resolved sends its entry only once something of its thread is
	// recorded inside it (a job queued, a BO validated, a fence waited on); one with
	// nothing inside is counted in the kernel
	// (ghostdriver.source.kernel_drops{reason=ioctl_without_job}) and sends nothing. The
	// jobs are the same either way; true is for looking at the raw ioctl stream.
	SendJoblessIoctls bool `mapstructure:"send_jobless_ioctls"`
	// CUDA: the NVIDIA path (uprobes on libcuda/libcudart), off by default.
	CUDA CUDAConfig `mapstructure:"cuda"`
}

// CUDAConfig configures `live.cuda`: CUDA applications traced at the API with uprobes on
// the driver (libcuda.so*) and runtime (libcudart.so*) libraries, plus the NVIDIA Xid
// tracepoint. NVIDIA GPUs have no per-launch kernel event (no drm_sched): without this
// block an NVIDIA node produces no spans. Submissions become `cuda.submission` spans
// (documentation.md). It runs next to the DRM source; when one of the two cannot attach,
// the other runs alone (a warning says why), and error_mode applies when neither can.
//
//	live:
//	  cuda:
//	    enabled: true
//	    libraries: [/usr/local/nvidia/lib64/libcuda.so.1]   # hooked at start, globs allowed
//	    rescan_interval: 2s
//	    follow_entry_points: true
//	    xid: true
//	    ring_buffer_size: 4194304
//	    layers: both               # or driver, runtime
//	    launches_at_entry: false
//	    uprobe_multi: false
type CUDAConfig struct {
	// Enabled turns the CUDA source on (default false). It also adds the majors of the
	// NVIDIA devices CUDA work goes through (the frontend, 195, and nvidia-uvm, from
	// <tenant.proc_root>/devices) to the DRM source's ioctl filter, with their ioctl types
	// ('F', 'm'; 0), so the kernel still drops other ioctls by type alone: NVIDIA ioctls
	// (resource-manager allocations, UVM faults) then count as ioctl events in
	// ghostdriver.decoder.events and give the tenant enricher first sight of a process;
	// they are not submissions and never make gpu.job spans.
	Enabled bool `mapstructure:"enabled"`
	// Libraries are library files hooked at start (absolute paths, globs allowed), for
	// example the host driver mounted into the collector's container, or an application
	// library with a statically linked CUDA runtime. Libraries that processes map are
	// found without this, by scanning /proc/*/maps.
	Libraries []string `mapstructure:"libraries"`
	// RescanInterval is how often /proc/*/maps is scanned for CUDA library files not hooked
	// yet (new containers, other CUDA versions): 100ms..10m, or 0 to scan only at start.
	RescanInterval time.Duration `mapstructure:"rescan_interval"`
	// FollowEntryPoints hooks the driver functions the runtime reaches through
	// cuGetProcAddress (default true). Off, device syncs' driver calls (cuCtxSynchronize)
	// and some copies are not seen at the driver layer; launches still are, at the runtime.
	FollowEntryPoints bool `mapstructure:"follow_entry_points"`
	// Xid attaches the nvidia:nvidia_dev_xid tracepoint (default true): GPU errors become
	// nvidia.xid span events and the ghostdriver.nvidia.xid counter.
	Xid bool `mapstructure:"xid"`
	// RingBufferSize in bytes of the CUDA source's own ring buffer (one record of 216
	// bytes per traced call): a power of two in 64 KiB..1 GiB, default 4 MiB. Calls that
	// find it full are counted in ghostdriver.cuda.lost_calls{reason=ring_buffer}.
	RingBufferSize int `mapstructure:"ring_buffer_size"`
	// Layers, LaunchesAtEntry and UprobeMulti trade detail for the per-launch hook cost
	// (BENCHMARKS.md, "CUDA hook levers on the H200"). Layers is whose API functions are
	// hooked: both (default; a runtime launch is seen with its driver call nested in it),
	// driver (libcuda only: launches counted once each under driver names; a runtime
	// error that never reaches the driver is not seen, nor, until some process
	// initialises CUDA while the collector runs, the driver entry points learnt from
	// cuGetProcAddress) or runtime (libcudart only: direct driver launches, e.g.
	// Triton's, are not seen).
	Layers string `mapstructure:"layers"`
	// LaunchesAtEntry records the innermost hooked layer's launches at their entry with
	// no return probe (default false): one uprobe per launch instead of a pair, but
	// cuda.launch spans then have no duration and no result code (a failed launch is not
	// marked).
	LaunchesAtEntry bool `mapstructure:"launches_at_entry"`
	// UprobeMulti attaches each library's functions with uprobe_multi links (kernel 6.6+)
	// instead of one perf-event uprobe per function (default false); where the kernel
	// refuses, classic uprobes are used and the capability report says why.
	UprobeMulti bool `mapstructure:"uprobe_multi"`
	// SyncWakeups follows the scheduler's wake-ups of threads inside CUDA calls and the
	// nvidia driver's interrupts (sched:sched_waking, irq:irq_handler_entry): a blocking
	// sync's wait splits into GPU end → interrupt → wake-up → return. Off by default: the
	// wake-up program runs on every wake-up of the host.
	SyncWakeups bool `mapstructure:"sync_wakeups"`
	// Timeline is the GPU's own timeline from the processes that loaded the injection
	// library (libghostdriver_cupti.so through CUDA_INJECTION64_PATH): CUPTI's kernel
	// records joined to the submissions (docs/nvidia-timeline.md).
	Timeline CUDATimelineConfig `mapstructure:"timeline"`
}

// CUDATimelineConfig is live.cuda.timeline.
type CUDATimelineConfig struct {
	// Mode: off (default: every library stays dormant, CUPTI untouched), on, or duty
	// (on for OnFor at the start of every Every, the same windows for every process).
	Mode  string        `mapstructure:"mode"`
	OnFor time.Duration `mapstructure:"on_for"`
	Every time.Duration `mapstructure:"every"`
}

// live.cuda.layers values (the same as internal/cuda's Config.Layers, which builds on
// Linux only).
const (
	CUDALayersBoth    = "both"
	CUDALayersDriver  = "driver"
	CUDALayersRuntime = "runtime"
)

// Bounds of live.cuda.
const (
	minCUDARescan    = 100 * time.Millisecond
	maxCUDARescan    = 10 * time.Minute
	maxCUDALibraries = 64
)

func (c *CUDAConfig) validate() []error {
	if !c.Enabled {
		return nil
	}
	var errs []error
	if r := c.RescanInterval; r != 0 && (r < minCUDARescan || r > maxCUDARescan) {
		errs = append(errs, fmt.Errorf("live.cuda.rescan_interval must be 0 (scan only at start) or in %v..%v, got %v", minCUDARescan, maxCUDARescan, r))
	}
	if rb := c.RingBufferSize; rb < minRingBufferBytes || rb > maxRingBufferBytes || rb&(rb-1) != 0 {
		errs = append(errs, fmt.Errorf("live.cuda.ring_buffer_size must be a power of two in %d..%d bytes, got %d", minRingBufferBytes, maxRingBufferBytes, rb))
	}
	switch c.Layers {
	case CUDALayersBoth, CUDALayersDriver, CUDALayersRuntime:
	default:
		errs = append(errs, fmt.Errorf("live.cuda.layers must be %q, %q or %q, got %q", CUDALayersBoth, CUDALayersDriver, CUDALayersRuntime, c.Layers))
	}
	if err := c.Timeline.policy().Validate(); err != nil {
		errs = append(errs, fmt.Errorf("live.cuda.timeline: %w", err))
	}
	if len(c.Libraries) > maxCUDALibraries {
		errs = append(errs, fmt.Errorf("live.cuda.libraries lists %d entries; at most %d are allowed", len(c.Libraries), maxCUDALibraries))
	}
	for _, p := range c.Libraries {
		if !filepath.IsAbs(p) {
			errs = append(errs, fmt.Errorf("live.cuda.libraries: %q is not an absolute path", p))
			continue
		}
		if _, err := filepath.Match(p, ""); err != nil {
			errs = append(errs, fmt.Errorf("live.cuda.libraries: %q is not a valid glob: %w", p, err))
		}
	}
	return errs
}

// Validate implements confmap.Validator.
func (c *Config) Validate() error {
	var errs []error
	switch c.Source {
	case SourceLive:
		errs = append(errs, c.Live.validate()...)
	case SourceReplay:
		if strings.TrimSpace(c.Replay.Path) == "" {
			errs = append(errs, errors.New("replay.path must name a capture file when source is \"replay\""))
		}
		if c.Replay.Epoch != "" {
			if _, err := replay.ParseEpoch(c.Replay.Epoch); err != nil {
				errs = append(errs, fmt.Errorf("replay.epoch: %w", err))
			}
		}
		if c.Replay.Speed < 0 || math.IsNaN(c.Replay.Speed) || math.IsInf(c.Replay.Speed, 0) {
			errs = append(errs, fmt.Errorf("replay.speed must be ≥ 0 and finite (0 = as fast as possible), got %v", c.Replay.Speed))
		}
	default:
		errs = append(errs, fmt.Errorf("source must be %q or %q, got %q", SourceLive, SourceReplay, c.Source))
	}
	if c.JobTimeout <= 0 {
		errs = append(errs, fmt.Errorf("job_timeout must be positive, got %v", c.JobTimeout))
	}
	if c.MaxPendingJobs <= 0 || c.MaxPendingJobs > maxPendingJobsLimit {
		errs = append(errs, fmt.Errorf("max_pending_jobs must be in 1..%d, got %d", maxPendingJobsLimit, c.MaxPendingJobs))
	}
	if c.ReorderWindow < 0 || c.ReorderWindow > c.JobTimeout {
		errs = append(errs, fmt.Errorf("reorder_window must be in 0..job_timeout (%v), got %v", c.JobTimeout, c.ReorderWindow))
	}
	if c.FlushInterval <= 0 {
		errs = append(errs, fmt.Errorf("flush_interval must be positive, got %v", c.FlushInterval))
	}
	if c.CollectionInterval <= 0 {
		errs = append(errs, fmt.Errorf("collection_interval must be positive, got %v", c.CollectionInterval))
	}
	if c.Sampling.on(c.Source) {
		if err := c.Sampling.sampler().Validate(); err != nil {
			errs = append(errs, err)
		}
	}
	switch c.ErrorMode {
	case ErrorModePropagate, ErrorModeIgnore:
	default:
		errs = append(errs, fmt.Errorf("error_mode must be %q or %q, got %q", ErrorModePropagate, ErrorModeIgnore, c.ErrorMode))
	}
	if err := enrich.ValidateTiers(c.Context.Tiers); err != nil {
		errs = append(errs, fmt.Errorf("context.tiers: %w", err))
	}
	if strings.TrimSpace(c.Context.OBIMapPath) == "" {
		errs = append(errs, errors.New("context.obi_map_path must not be empty"))
	}
	if c.Context.MaxWait < 0 || c.Context.MaxWait > maxContextWait {
		errs = append(errs, fmt.Errorf("context.max_wait must be between 0 (never hold a job) and %v, got %v", maxContextWait, c.Context.MaxWait))
	}
	if c.Tenant.Enabled && (c.Tenant.ProcRoot == "" || c.Tenant.SysRoot == "") {
		errs = append(errs, errors.New("tenant.proc_root and tenant.sys_root must not be empty"))
	}
	if err := c.Metrics.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("metrics: %w", err))
	}
	return errors.Join(errs...)
}

func (l *LiveConfig) validate() []error {
	var errs []error
	if len(l.DRMMajors) == 0 {
		errs = append(errs, errors.New("live.drm_majors must list at least one device major (226 for DRM)"))
	}
	if len(l.DRMMajors) > graph.MaxDRMMajors {
		errs = append(errs, fmt.Errorf("live.drm_majors lists %d majors; at most %d are filtered in the kernel", len(l.DRMMajors), graph.MaxDRMMajors))
	}
	for _, m := range l.DRMMajors {
		if m == 0 || m > 4095 {
			errs = append(errs, fmt.Errorf("live.drm_majors: %d is not a valid device major (1..4095)", m))
		}
	}
	for _, fl := range []struct {
		key   string
		names []string
	}{{"bo_validation_functions", l.BOValidationFunctions}, {"run_job_functions", l.RunJobFunctions}} {
		if len(fl.names) > maxFunctions {
			errs = append(errs, fmt.Errorf("live.%s lists %d entries; at most %d are allowed", fl.key, len(fl.names), maxFunctions))
		}
		for _, n := range fl.names {
			if !validSymbol(n) {
				errs = append(errs, fmt.Errorf("live.%s: %q is not a kernel symbol name", fl.key, n))
			}
		}
	}
	if len(l.IRQNames) > maxFunctions {
		errs = append(errs, fmt.Errorf("live.irq_names lists %d entries; at most %d are allowed", len(l.IRQNames), maxFunctions))
	}
	for _, n := range l.IRQNames {
		if !validIRQName(n) {
			errs = append(errs, fmt.Errorf("live.irq_names: %q is not an interrupt name as /proc/interrupts prints it", n))
		}
	}
	switch l.Records {
	case "", "jobs", "events":
		if l.Records == "jobs" && l.ClassicTracepoints {
			errs = append(errs, errors.New("live.records: jobs reads the scheduler's structures through BTF; classic_tracepoints needs records: events"))
		}
		if l.Records == "jobs" && l.FenceFilter {
			errs = append(errs, errors.New("live.records: jobs does not feed the fence filter (its dma_fence hooks are the jobs mode's own); fence_filter needs records: events"))
		}
	default:
		errs = append(errs, fmt.Errorf("live.records must be jobs or events, got %q", l.Records))
	}
	rb := l.RingBufferSize
	if rb < minRingBufferBytes || rb > maxRingBufferBytes || rb&(rb-1) != 0 {
		errs = append(errs, fmt.Errorf("live.ring_buffer_size must be a power of two in %d..%d bytes, got %d", minRingBufferBytes, maxRingBufferBytes, rb))
	}
	if l.PollInterval < time.Millisecond || l.PollInterval > 10*time.Second {
		errs = append(errs, fmt.Errorf("live.poll_interval must be in 1ms..10s, got %v", l.PollInterval))
	}
	return append(errs, l.CUDA.validate()...)
}

// validSymbol accepts C identifiers (and the `.`-suffixed clones the kernel produces, e.g. "foo.isra.0").
func validSymbol(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for i, r := range s {
		switch {
		case r == '_' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z'):
		case (r >= '0' && r <= '9') || r == '.':
			if i == 0 {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// validIRQName accepts what request_irq names look like: printable, no blanks, ≤ 64 bytes.
func validIRQName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if r <= ' ' || r > '~' {
			return false
		}
	}
	return true
}

func (t CUDATimelineConfig) policy() cupti.Policy {
	return cupti.Policy{Mode: cupti.Mode(t.Mode), OnFor: t.OnFor, Every: t.Every}
}
