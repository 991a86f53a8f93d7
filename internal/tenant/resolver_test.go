// The Resolver over the fake trees in testdata: real shapes in, attributes out.
package tenant

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/ghostdriver/ghostdriver/internal/attr"
	"github.com/ghostdriver/ghostdriver/internal/tenant/appctx"
)

// ctxMem serves one published OTEL_CTX mapping (pid 5151's [anon:OTEL_CTX] in testdata).
type ctxMem struct {
	regions map[uint64][]byte
}

func (m ctxMem) ReadMemory(pid uint32, addr uint64, buf []byte) error {
	for base, b := range m.regions {
		if addr >= base && addr-base <= uint64(len(b)) && uint64(len(buf)) <= uint64(len(b))-(addr-base) {
			copy(buf, b[addr-base:])
			return nil
		}
	}
	return fmt.Errorf("pid %d: nothing mapped at %#x", pid, addr)
}

func publishedContext(at uint64, pc appctx.ProcessContext) ctxMem {
	payload := appctx.EncodeProcessContext(pc)
	h := make([]byte, appctx.ProcessContextHeaderSize)
	copy(h, "OTEL_CTX")
	binary.NativeEndian.PutUint32(h[8:], 2)
	binary.NativeEndian.PutUint32(h[12:], uint32(len(payload)))
	binary.NativeEndian.PutUint64(h[16:], 1700000000000000000)
	binary.NativeEndian.PutUint64(h[24:], at+appctx.ProcessContextHeaderSize)
	return ctxMem{map[uint64][]byte{at: append(h, payload...)}}
}

func testResolver(t *testing.T, mem appctx.MemReader) *Resolver {
	cfg := DefaultConfig()
	cfg.ProcRoot, cfg.SysRoot, cfg.Mem = "testdata/proc", "testdata/sys", mem
	return NewResolver(cfg)
}

func TestResolverKubernetesTrainer(t *testing.T) {
	r := testResolver(t, ctxMem{})
	p, err := r.Process(4242)
	if err != nil {
		t.Fatal(err)
	}
	wantAttrs := []attr.Attribute{
		attr.Int(KeyProcessPID, 4242),
		attr.String(KeyProcessExecutableName, "python3.11"),
		attr.String(KeyProcessExecutablePath, "/usr/bin/python3.11"),
		attr.String(KeyProcessLinuxCgroup, "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod"+uidU+".slice/cri-containerd-"+cid+".scope"),
		attr.String(KeyContainerID, cid),
		attr.String(KeyContainerRuntimeName, "containerd"),
		attr.String(KeyK8sPodUID, uid),
		attr.String(KeyK8sPodQoSClass, "burstable"),
	}
	if got := p.Attributes(); !reflect.DeepEqual(got, wantAttrs) {
		t.Errorf("attributes\n got %+v\nwant %+v", got, wantAttrs)
	}
	// Environment: OTEL_SERVICE_NAME + OTEL_RESOURCE_ATTRIBUTES, and the batch job's TRACEPARENT.
	wantRes := []attr.Attribute{attr.String(KeyServiceName, "resnet-trainer"),
		attr.String("deployment.environment.name", "prod"), attr.String("team", "ml platform")}
	if !reflect.DeepEqual(p.Resource, wantRes) || p.ResourceSource != FromEnv {
		t.Errorf("resource from %v\n got %+v\nwant %+v", p.ResourceSource, p.Resource, wantRes)
	}
	// The span resource: the application's resource, then what the kernel says.
	wantRes = append(append(wantRes, wantAttrs...), attr.String(KeyResourceSource, "env"))
	if got := p.ResourceAttributes(); !reflect.DeepEqual(got, wantRes) {
		t.Errorf("resource attributes\n got %+v\nwant %+v", got, wantRes)
	}
	if p.TraceParent == nil || p.TraceParent.String() != "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01" || p.TraceState != "rojo=00f067aa0ba902b7" {
		t.Errorf("trace parent %v, state %q", p.TraceParent, p.TraceState)
	}
	if p.StartTime != 123456 || p.Comm != "pt_main_thread" {
		t.Errorf("identity %d %q", p.StartTime, p.Comm)
	}
	// DRM: fds 3 and 5 share client 42, fd 6 is client 43; /dev/null, pipes, sockets and
	// the eventfd are not DRM.
	if len(p.DRMClients) != 2 || p.DRMClients[0].ClientID != 42 || p.DRMClients[0].Fd != 3 || p.DRMClients[1].ClientID != 43 {
		t.Fatalf("DRM clients %+v", p.DRMClients)
	}
	c, ok := p.DRMClient(42)
	if !ok || !reflect.DeepEqual(c.Attributes(), []attr.Attribute{attr.Int(KeyClientID, 42)}) || len(c.Engines) != 3 {
		t.Errorf("client 42: %+v", c)
	}
	d, ok := r.Device(c.PDev)
	if !ok || d.Driver != "amdgpu" || d.SRIOVVF {
		t.Errorf("device of client 42: %+v", d)
	}
}

func TestResolverDockerWithProcessContextAndMIG(t *testing.T) {
	pc := appctx.ProcessContext{
		// The SDK runs in the container's pid namespace: its process.pid is 1.
		Resource: []attr.Attribute{attr.String("service.name", "vllm-engine"), attr.Int("process.pid", 1), attr.String("service.version", "0.6.3")},
		Extra: []attr.Attribute{attr.String(appctx.ThreadLocalSchemaKey, "tlsdesc_v1_dev"),
			{Key: appctx.ThreadLocalKeyMapKey, Value: attr.Value{Kind: attr.KindArray, Array: []attr.Value{{Kind: attr.KindString, Str: "request_id"}}}}},
	}
	r := testResolver(t, publishedContext(0x7f1c2a600000, pc))
	p, err := r.Process(5151)
	if err != nil {
		t.Fatal(err)
	}
	// OTEL_CTX wins over OTEL_RESOURCE_ATTRIBUTES' service.name=from-env; the kernel's
	// process.pid (host namespace) wins over the SDK's.
	res := p.ResourceAttributes()
	if p.ResourceSource != FromProcessContext || !reflect.DeepEqual(res[0], attr.String(KeyServiceName, "vllm-engine")) ||
		!reflect.DeepEqual(res[1], attr.Int(KeyProcessPID, 5151)) || !reflect.DeepEqual(res[2], attr.String("service.version", "0.6.3")) {
		t.Errorf("resource attributes %+v", res)
	}
	if v, _ := attr.Lookup(res, KeyResourceSource); v.Str != "otel_ctx" {
		t.Errorf("resource source %q", v.Str)
	}
	if !reflect.DeepEqual(p.ThreadLocal, appctx.ThreadLocalSchema{SchemaVersion: "tlsdesc_v1_dev", KeyMap: []string{"request_id"}}) {
		t.Errorf("thread-local reference data %+v", p.ThreadLocal)
	}
	// The schema asks for TLS resolution; in the fake tree no ELF defines the symbol.
	if p.ThreadContextTLS != nil || p.ThreadContextErr == "" {
		t.Errorf("TLS %+v / %q", p.ThreadContextTLS, p.ThreadContextErr)
	}
	if p.Comm != "vllm?worker\uFFFD" || p.Exe != "vllm" || p.ExePath != "/usr/local/bin/vllm" {
		t.Errorf("identity %q %q %q", p.Comm, p.Exe, p.ExePath)
	}
	if p.Cgroup.ContainerID != cid2 || p.Cgroup.Runtime != "docker" || p.Cgroup.Line != "1:name=systemd:/docker/"+cid2 {
		t.Errorf("cgroup %+v", p.Cgroup)
	}
	if len(p.MIG) != 1 || p.MIG[0] != (MIGInstance{GPUMinor: 0, GI: 2, CI: 0, PCIAddress: "0000:41:00.0"}) {
		t.Errorf("MIG %+v", p.MIG)
	}
	if v, _ := attr.Lookup(p.Attributes(), KeyNvidiaMIGInstance); v.Str != "gpu0/gi2/ci0" {
		t.Errorf("mig attribute %q", v.Str)
	}
	if len(p.DRMClients) != 0 {
		t.Errorf("NVIDIA's proprietary nodes are not DRM: %+v", p.DRMClients)
	}
}

func TestResolverKernelThreadAndService(t *testing.T) {
	r := testResolver(t, ctxMem{})
	k, err := r.Process(777)
	if err != nil {
		t.Fatal(err)
	}
	if k.Exe != "" || k.ServiceName != "kworker/u8:2" || k.ResourceSource != FromExecutable || k.Cgroup.Line != "0::/" {
		t.Errorf("kernel thread %+v", k)
	}
	if v, _ := attr.Lookup(k.Attributes(), KeyProcessExecutableName); v.Str != "kworker/u8:2" {
		t.Errorf("kernel thread executable name %q", v.Str)
	}
	s, err := r.Process(31337)
	if err != nil {
		t.Fatal(err)
	}
	// The broken OTEL_RESOURCE_ATTRIBUTES is discarded whole; the executable names the service.
	if s.ServiceName != "ollama" || s.ResourceSource != FromExecutable || len(s.Resource) != 1 {
		t.Errorf("service resource %+v from %v", s.Resource, s.ResourceSource)
	}
	if s.Cgroup.Unit != "ollama.service" || s.Cgroup.ContainerID != "" {
		t.Errorf("service cgroup %+v", s.Cgroup)
	}
	c, ok := s.DRMClient(7)
	if !ok || !reflect.DeepEqual(c.Attributes(), []attr.Attribute{attr.Int(KeyClientID, 7), attr.String(KeyDRMClientName, "ollama-runner")}) {
		t.Errorf("xe client %+v", c)
	}
	if d, ok := r.Device(c.PDev); !ok || !d.SRIOVVF || d.Driver != "xe" {
		t.Errorf("xe VF device %+v", d)
	}
	if _, err := r.Process(99999); !errors.Is(err, ErrNoProcess) {
		t.Errorf("missing pid: %v", err)
	}
}

func TestResolverEnvironmentOff(t *testing.T) {
	cfg := DefaultConfig()
	cfg.ProcRoot, cfg.SysRoot, cfg.ReadEnv = "testdata/proc", "testdata/sys", false
	p, err := NewResolver(cfg).Process(4242)
	if err != nil || p.TraceParent != nil || p.ServiceName != "python3.11" {
		t.Errorf("with ReadEnv off: %+v, %v", p, err)
	}
}

// fakePid writes a minimal /proc/<pid> with the given start time.
func fakePid(t *testing.T, root string, pid int, start uint64, comm string) {
	t.Helper()
	dir := filepath.Join(root, fmt.Sprint(pid))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	stat := fmt.Sprintf("%d (%s) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 %d 0 0\n", pid, comm, start)
	if err := os.WriteFile(filepath.Join(dir, "stat"), []byte(stat), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "comm"), []byte(comm+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestResolverCache(t *testing.T) {
	root := t.TempDir()
	now := time.Unix(1000, 0)
	cfg := DefaultConfig()
	cfg.ProcRoot, cfg.SysRoot, cfg.MaxProcesses, cfg.Refresh = root, root, 2, 10*time.Second
	cfg.Now = func() time.Time { return now }
	r := NewResolver(cfg)
	for pid := 1; pid <= 3; pid++ {
		fakePid(t, root, pid, uint64(100*pid), fmt.Sprintf("p%d", pid))
	}

	a, _ := r.Process(1)
	if b, _ := r.Process(1); a != b {
		t.Error("second lookup within Refresh re-read procfs")
	}
	r.Process(2)
	r.Process(1) // 1 is now the most recent
	r.Process(3) // evicts 2, the least recently used
	if r.Len() != 2 {
		t.Errorf("cache holds %d processes, max 2", r.Len())
	}
	loads := r.Loads()
	r.Process(1)
	r.Process(3)
	if r.Loads() != loads {
		t.Error("1 and 3 should be cached")
	}
	r.Process(2)
	if r.Loads() != loads+1 {
		t.Error("2 should have been evicted")
	}

	// pid reuse: same pid, new start time, picked up at the next refresh.
	fakePid(t, root, 3, 999, "reused")
	if p, _ := r.Process(3); p.Comm != "p3" {
		t.Errorf("within Refresh the cached process stays: %q", p.Comm)
	}
	now = now.Add(11 * time.Second)
	if p, _ := r.Process(3); p.Comm != "reused" || p.StartTime != 999 {
		t.Errorf("after Refresh: %q %d", p.Comm, p.StartTime)
	}
	// exec/exit: Forget drops it at once.
	fakePid(t, root, 3, 999, "exec")
	r.Forget(3)
	if p, _ := r.Process(3); p.Comm != "exec" {
		t.Errorf("after Forget: %q", p.Comm)
	}
	// exit without Forget: the refresh finds no process and drops the entry.
	os.RemoveAll(filepath.Join(root, "3"))
	now = now.Add(11 * time.Second)
	if _, err := r.Process(3); !errors.Is(err, ErrNoProcess) {
		t.Errorf("exited process: %v", err)
	}
}

func TestResolverConcurrentSingleLoad(t *testing.T) {
	r := testResolver(t, ctxMem{})
	var wg sync.WaitGroup
	got := make([]*Process, 16)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i], _ = r.Process(4242)
		}()
	}
	wg.Wait()
	for _, p := range got {
		if p == nil || p.PID != 4242 {
			t.Fatalf("concurrent lookup returned %+v", p)
		}
	}
	if r.Loads() != 1 || r.Len() != 1 {
		t.Errorf("%d loads, %d cached", r.Loads(), r.Len())
	}
}
