// Process: what tenant attribution knows about one process, and how it is read.

package tenant

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/ghostdriver/ghostdriver/internal/attr"
	"github.com/ghostdriver/ghostdriver/internal/procfs"
	"github.com/ghostdriver/ghostdriver/internal/tenant/appctx"
)

// ResourceSource says where a process's resource (service.name first of all) came from.
type ResourceSource uint8

const (
	FromExecutable     ResourceSource = iota // nothing published: service.name = executable name
	FromEnv                                  // OTEL_SERVICE_NAME / OTEL_RESOURCE_ATTRIBUTES
	FromProcessContext                       // OTEP 4719 OTEL_CTX mapping
)

func (s ResourceSource) String() string {
	switch s {
	case FromEnv:
		return "env"
	case FromProcessContext:
		return "otel_ctx"
	}
	return "executable"
}

// Process is a snapshot of one process. The Resolver shares it between callers: treat it
// as read-only.
type Process struct {
	PID       uint32
	StartTime uint64 // /proc/<pid>/stat field 22, clock ticks after boot: (PID, StartTime) is unique
	Comm      string // sanitised
	Exe       string // basename of /proc/<pid>/exe ("" for kernel threads)
	ExePath   string
	Cgroup    CgroupInfo

	// ServiceName and Resource follow the precedence of docs/design.md: OTEL_CTX, else the
	// environment, else the executable name. Resource always contains service.name.
	ServiceName    string
	Resource       []attr.Attribute
	ResourceSource ResourceSource

	// TraceParent from the environment (linking tier 3), nil when absent or invalid.
	TraceParent *appctx.TraceParent
	TraceState  string

	// ThreadLocal is the OTEP 4947 reference data from the process context; when its
	// SchemaVersion is set and resolution is enabled, ThreadContextTLS says where the
	// otel_thread_ctx_v1 slot is (for the BPF side), or ThreadContextErr why not.
	ThreadLocal      appctx.ThreadLocalSchema
	ThreadContextTLS *appctx.TLSAccess
	ThreadContextErr string
	// Modules fingerprints the mapped modules the thread-context search examined
	// (appctx.ModuleSet; 0 when there was no search): a re-search skips an unchanged set.
	Modules uint64
	// ProcessContextErr says why an OTEL_CTX mapping that exists could not be used
	// (permissions, malformed, mid-update); empty when there is none or it was read.
	ProcessContextErr string

	DRMClients []DRMClient
	MIG        []MIGInstance

	LoadedAt time.Time
}

// ErrNoProcess is returned for a pid that does not exist (or exited meanwhile).
var ErrNoProcess = errors.New("no such process")

// Attributes returns what the kernel tells about the process: identity and tenancy
// (pid, executable, cgroup, container, pod, unit, MIG). Empty values are left out.
func (p *Process) Attributes() []attr.Attribute {
	out := []attr.Attribute{attr.Int(KeyProcessPID, int64(p.PID))}
	add := func(k, v string) {
		if v != "" {
			out = append(out, attr.String(k, v))
		}
	}
	exe := p.Exe
	if exe == "" {
		exe = p.Comm
	}
	add(KeyProcessExecutableName, exe)
	add(KeyProcessExecutablePath, p.ExePath)
	add(KeyProcessLinuxCgroup, p.Cgroup.Line)
	add(KeyContainerID, p.Cgroup.ContainerID)
	add(KeyContainerRuntimeName, p.Cgroup.Runtime)
	add(KeyK8sPodUID, p.Cgroup.PodUID)
	add(KeyK8sPodQoSClass, p.Cgroup.QoSClass)
	add(KeySystemdUnit, p.Cgroup.Unit)
	if len(p.MIG) == 1 {
		add(KeyNvidiaMIGInstance, p.MIG[0].String())
	}
	return out
}

// ResourceAttributes is the resource of the process's spans: the application's own
// resource (Resource: OTEL_CTX or environment, service.name first), then Attributes(),
// then ghostdriver.resource.source. Where both name a key, the kernel's observation wins:
// an SDK in a container publishes its own pid namespace's process.pid, and the cgroup is
// the ground truth for container.id and k8s.pod.uid.
func (p *Process) ResourceAttributes() []attr.Attribute {
	out := append([]attr.Attribute(nil), p.Resource...)
	for _, a := range p.Attributes() {
		replaced := false
		for i := range out {
			if out[i].Key == a.Key {
				out[i], replaced = a, true
			}
		}
		if !replaced {
			out = append(out, a)
		}
	}
	return append(out, attr.String(KeyResourceSource, p.ResourceSource.String()))
}

// DRMClient returns the process's DRM client with the given id (6.17+ scheduler events
// and fdinfo agree on drm-client-id).
func (p *Process) DRMClient(id uint64) (DRMClient, bool) {
	for _, c := range p.DRMClients {
		if c.HasID && c.ClientID == id {
			return c, true
		}
	}
	return DRMClient{}, false
}

// Attributes of a DRM client (per job).
func (c DRMClient) Attributes() []attr.Attribute {
	var out []attr.Attribute
	if c.HasID {
		out = append(out, attr.Int(KeyClientID, int64(c.ClientID)))
	}
	if c.ClientName != "" {
		out = append(out, attr.String(KeyDRMClientName, c.ClientName))
	}
	return out
}

// Attributes of a device.
func (d Device) Attributes() []attr.Attribute {
	out := []attr.Attribute{attr.String(KeyHWType, "gpu")}
	if d.Name != "" {
		out = append(out, attr.String(KeyDevice, d.Name))
	}
	if d.PCIAddress != "" {
		out = append(out, attr.String(KeyGPUPCIAddress, d.PCIAddress))
	}
	if d.Driver != "" {
		out = append(out, attr.String(KeyGPUDriver, d.Driver))
	}
	if d.Vendor != "" {
		out = append(out, attr.String(KeyHWVendor, d.Vendor))
	}
	return append(out, attr.Bool(KeyGPUSRIOVVF, d.SRIOVVF))
}

// loadProcess reads everything about pid. Only a missing process is an error: any other
// piece that cannot be read (permissions, races, kernel threads) is left empty.
func (r *Resolver) loadProcess(pid uint32) (*Process, error) {
	pidDir := filepath.Join(r.cfg.ProcRoot, strconv.FormatUint(uint64(pid), 10))
	stat, err := readBounded(filepath.Join(pidDir, "stat"), 4096)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH) {
		return nil, fmt.Errorf("pid %d: %w", pid, ErrNoProcess)
	}
	if err != nil {
		return nil, err
	}
	p := &Process{PID: pid, LoadedAt: r.now()}
	if p.StartTime, err = ParseStatStartTime(stat); err != nil {
		return nil, fmt.Errorf("pid %d: %w", pid, err)
	}
	if b, err := readBounded(filepath.Join(pidDir, "comm"), 256); err == nil {
		p.Comm = SanitizeComm(b)
	}
	if l, err := os.Readlink(filepath.Join(pidDir, "exe")); err == nil {
		p.ExePath, p.Exe = ExecutablePath(l)
		p.ExePath, p.Exe = sanitize([]byte(p.ExePath), 4096), sanitize([]byte(p.Exe), 256)
	}
	if b, err := readBounded(filepath.Join(pidDir, "cgroup"), 64<<10); err == nil {
		p.Cgroup = ParseCgroupFile(b)
	}

	var env Environ
	if r.cfg.ReadEnv {
		if f, err := os.Open(filepath.Join(pidDir, "environ")); err == nil {
			env, _ = ScanEnviron(f, DefaultEnvironLimit)
			f.Close()
		}
		if env.TraceParent != "" {
			if tp, err := appctx.ParseTraceParent(env.TraceParent); err == nil {
				p.TraceParent = &tp
				if appctx.ValidTraceState(env.TraceState) {
					p.TraceState = env.TraceState
				}
			}
		}
	}

	var pc *appctx.ProcessContext
	if r.cfg.ReadProcessContext {
		pc, err = r.readProcessContext(pidDir, pid)
		if err != nil {
			p.ProcessContextErr = err.Error()
		}
	}
	p.ServiceName, p.Resource, p.ResourceSource = composeResource(pc, env, p.Exe, p.Comm)
	if pc != nil {
		p.ThreadLocal = pc.ThreadLocal()
	}
	if r.SearchesThreadContext(p) {
		acc, set, err := r.tls.FindChanged(pid, 0)
		p.Modules = set
		if err == nil {
			p.ThreadContextTLS = &acc
		} else if p.ThreadLocal.SchemaVersion != "" || !errors.Is(err, appctx.ErrNoTLSSymbol) {
			p.ThreadContextErr = err.Error()
		}
	}

	if r.cfg.ReadFds {
		scan := scanFds(pidDir, r.cfg.MaxFds)
		p.DRMClients = scan.drm
		if len(scan.capLinks) > 0 {
			p.MIG = r.migInstances(scan.capLinks)
		}
	}
	return p, nil
}

// readProcessContext locates and reads the OTEL_CTX mapping: nil when there is none or it
// cannot be used (readers must fall back gracefully, says OTEP 4719), with the reason.
func (r *Resolver) readProcessContext(pidDir string, pid uint32) (*appctx.ProcessContext, error) {
	f, err := os.Open(filepath.Join(pidDir, "maps"))
	if err != nil {
		return nil, nil
	}
	maps, err := procfs.ParseMaps(f)
	f.Close()
	if err != nil {
		return nil, err
	}
	var firstErr error
	for _, addr := range appctx.ProcessContextCandidates(maps, hostPageSize) {
		pc, err := appctx.ReadProcessContext(r.cfg.Mem, pid, addr)
		if err == nil {
			return &pc, nil
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	return nil, firstErr
}

// composeResource applies the precedence OTEL_CTX > environment > executable name.
func composeResource(pc *appctx.ProcessContext, env Environ, exe, comm string) (string, []attr.Attribute, ResourceSource) {
	fallback := exe
	if fallback == "" {
		fallback = comm
	}
	if fallback == "" {
		// The process was gone before it could be read: never an empty service.name.
		fallback = "unknown_service"
	}
	envAttrs, envErr := ParseResourceAttributes(env.ResourceAttributes)
	envName := env.ServiceName
	if envName == "" && envErr == nil {
		if v, ok := attr.Lookup(envAttrs, KeyServiceName); ok {
			envName = v.Str
		}
	}
	withName := func(attrs []attr.Attribute, name string) []attr.Attribute {
		out := make([]attr.Attribute, 0, len(attrs)+1)
		for _, a := range attrs {
			if a.Key != KeyServiceName {
				out = append(out, a)
			}
		}
		return append([]attr.Attribute{attr.String(KeyServiceName, name)}, out...)
	}
	if pc != nil {
		name := ""
		if v, ok := attr.Lookup(pc.Resource, KeyServiceName); ok {
			name = v.AsString()
		}
		if name == "" {
			name = envName
		}
		if name == "" {
			name = fallback
		}
		return name, withName(pc.Resource, name), FromProcessContext
	}
	if envName != "" || (envErr == nil && len(envAttrs) > 0) {
		if envErr != nil {
			envAttrs = nil
		}
		name := envName
		if name == "" {
			name = fallback
		}
		return name, withName(envAttrs, name), FromEnv
	}
	return fallback, withName(nil, fallback), FromExecutable
}
