// Resolver: the per-process cache in front of procfs, sysfs and process memory.

package tenant

import (
	"container/list"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/ghostdriver/ghostdriver/internal/tenant/appctx"
)

// Config configures a Resolver. Use DefaultConfig and override.
type Config struct {
	ProcRoot string // "/proc" (a host procfs mounted elsewhere inside a container: "/host/proc")
	SysRoot  string // "/sys"

	// MaxProcesses bounds the cache (least recently used processes are dropped).
	MaxProcesses int
	// Refresh re-reads a cached process after this long: a process context published
	// after start-up, DRM files opened later, and exec (same pid and start time) are
	// picked up. The live source should also call Forget on exit and exec.
	Refresh time.Duration

	// ReadEnv reads TRACEPARENT, TRACESTATE, OTEL_SERVICE_NAME and
	// OTEL_RESOURCE_ATTRIBUTES from /proc/<pid>/environ, and nothing else.
	ReadEnv bool
	// ReadProcessContext reads the OTEP 4719 OTEL_CTX mapping through Mem.
	ReadProcessContext bool
	// ResolveThreadContext locates otel_thread_ctx_v1 in processes whose process context
	// announces an OTEP 4947 schema (ELF parsing: cached per file).
	ResolveThreadContext bool
	// ScanThreadContext also looks for otel_thread_ctx_v1 in processes that publish no
	// process context (or one without a thread-local schema): the symbol in the module's
	// .dynsym is itself the OTEP 4947 announcement. Cost: the ELF dynamic symbol table of
	// each mapped executable file is read once per file (cached by device/inode), on the
	// first sight of a process. Needs ResolveThreadContext.
	ScanThreadContext bool
	// ReadFds scans /proc/<pid>/fd for DRM clients and NVIDIA MIG capabilities.
	ReadFds bool
	// MaxFds bounds the fds examined per process.
	MaxFds int

	// Mem reads other processes' memory; appctx.ProcessVM{} by default.
	Mem appctx.MemReader
	// Now is the clock (tests).
	Now func() time.Time
}

// DefaultConfig reads everything from the host's /proc and /sys.
func DefaultConfig() Config {
	return Config{
		ProcRoot: "/proc", SysRoot: "/sys",
		MaxProcesses: 4096, Refresh: 30 * time.Second, MaxFds: 4096,
		ReadEnv: true, ReadProcessContext: true, ResolveThreadContext: true, ScanThreadContext: true, ReadFds: true,
		Mem: appctx.ProcessVM{}, Now: time.Now,
	}
}

// Resolver resolves and caches process and device attribution. Safe for concurrent use.
// It is meant for the enrich stage (per job, per new process), never per kernel event.
type Resolver struct {
	cfg Config
	tls *appctx.TLSFinder

	mu      sync.Mutex
	procs   map[uint32]*list.Element // of *entry, most recent at the front
	lru     *list.List
	loading map[uint32]*call

	devMu     sync.Mutex
	devices   []Device
	devLoaded time.Time
	migMinors map[int]MIGInstance
	gpuMinors map[int]string
	migLoaded time.Time

	loadsTotal uint64 // procfs loads, for tests and self-overhead metrics
}

type entry struct{ p *Process }

type call struct {
	done chan struct{}
	p    *Process
	err  error
}

// NewResolver returns a Resolver; zero fields of cfg take DefaultConfig's values (the
// booleans are taken as given).
func NewResolver(cfg Config) *Resolver {
	d := DefaultConfig()
	if cfg.ProcRoot == "" {
		cfg.ProcRoot = d.ProcRoot
	}
	if cfg.SysRoot == "" {
		cfg.SysRoot = d.SysRoot
	}
	if cfg.MaxProcesses <= 0 {
		cfg.MaxProcesses = d.MaxProcesses
	}
	if cfg.Refresh <= 0 {
		cfg.Refresh = d.Refresh
	}
	if cfg.MaxFds <= 0 {
		cfg.MaxFds = d.MaxFds
	}
	if cfg.Mem == nil {
		cfg.Mem = d.Mem
	}
	if cfg.Now == nil {
		cfg.Now = d.Now
	}
	return &Resolver{
		cfg:     cfg,
		tls:     &appctx.TLSFinder{ProcRoot: cfg.ProcRoot, Mem: cfg.Mem},
		procs:   map[uint32]*list.Element{},
		lru:     list.New(),
		loading: map[uint32]*call{},
	}
}

func (r *Resolver) now() time.Time { return r.cfg.Now() }

// Process returns the cached snapshot of pid, loading it on a miss or when it is older
// than Config.Refresh. A reload that finds a different start time (the pid was reused)
// replaces the entry. Concurrent callers for one pid share a single load.
func (r *Resolver) Process(pid uint32) (*Process, error) {
	r.mu.Lock()
	if el, ok := r.procs[pid]; ok {
		p := el.Value.(*entry).p
		if r.now().Sub(p.LoadedAt) < r.cfg.Refresh {
			r.lru.MoveToFront(el)
			r.mu.Unlock()
			return p, nil
		}
	}
	if c, ok := r.loading[pid]; ok {
		r.mu.Unlock()
		<-c.done
		return c.p, c.err
	}
	c := &call{done: make(chan struct{})}
	r.loading[pid] = c
	r.loadsTotal++
	r.mu.Unlock()

	c.p, c.err = r.loadProcess(pid)

	r.mu.Lock()
	delete(r.loading, pid)
	switch {
	case c.err == nil:
		r.store(c.p)
	case errors.Is(c.err, ErrNoProcess):
		r.drop(pid)
	}
	r.mu.Unlock()
	close(c.done)
	return c.p, c.err
}

// Refresh is how long a snapshot is served before it is re-read (Config.Refresh).
func (r *Resolver) Refresh() time.Duration { return r.cfg.Refresh }

// Loads is the number of times a process was read from procfs (cache misses and refreshes).
func (r *Resolver) Loads() uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.loadsTotal
}

// Forget drops pid from the cache: call it on process exit and exec.
func (r *Resolver) Forget(pid uint32) {
	r.mu.Lock()
	r.drop(pid)
	r.mu.Unlock()
}

// Len is the number of cached processes.
func (r *Resolver) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lru.Len()
}

func (r *Resolver) store(p *Process) {
	if el, ok := r.procs[p.PID]; ok {
		el.Value.(*entry).p = p
		r.lru.MoveToFront(el)
		return
	}
	r.procs[p.PID] = r.lru.PushFront(&entry{p})
	for r.lru.Len() > r.cfg.MaxProcesses {
		old := r.lru.Back()
		r.lru.Remove(old)
		delete(r.procs, old.Value.(*entry).p.PID)
	}
}

func (r *Resolver) drop(pid uint32) {
	if el, ok := r.procs[pid]; ok {
		r.lru.Remove(el)
		delete(r.procs, pid)
	}
}

// Devices returns the DRM devices of the host (cached; rescanned after Config.Refresh).
func (r *Resolver) Devices() []Device {
	r.devMu.Lock()
	defer r.devMu.Unlock()
	if r.devices == nil || r.now().Sub(r.devLoaded) >= r.cfg.Refresh {
		if ds, err := ScanDevices(r.cfg.SysRoot); err == nil {
			r.devices = ds
		} else if r.devices == nil {
			r.devices = []Device{}
		}
		r.devLoaded = r.now()
	}
	return r.devices
}

// Device finds a device by the name a kernel event carries (dev_name: a PCI address or a
// platform name), by fdinfo drm-pdev, or by node ("renderD128").
func (r *Resolver) Device(name string) (Device, bool) {
	for _, d := range r.Devices() {
		if d.Name == name || d.PCIAddress == name {
			return d, true
		}
		for _, n := range d.Nodes {
			if n == name {
				return d, true
			}
		}
	}
	return Device{}, false
}

// migInstances resolves capability fds with the (cached) MIG minor table.
func (r *Resolver) migInstances(links []string) []MIGInstance {
	r.devMu.Lock()
	if r.migMinors == nil || r.now().Sub(r.migLoaded) >= r.cfg.Refresh {
		b, _ := readBounded(filepath.Join(r.cfg.ProcRoot, "driver", "nvidia-caps", "mig-minors"), 1<<20)
		r.migMinors = ParseMigMinors(b)
		r.gpuMinors = nvidiaGPUMinors(r.cfg.ProcRoot)
		r.migLoaded = r.now()
	}
	minors, gpus := r.migMinors, r.gpuMinors
	r.devMu.Unlock()
	out := migFromCapLinks(links, minors)
	for i := range out {
		out[i].PCIAddress = gpus[out[i].GPUMinor]
	}
	return out
}

// hostPageSize is used to recognise two-page OTEL_CTX mappings on old kernels.
var hostPageSize = uint64(os.Getpagesize())
