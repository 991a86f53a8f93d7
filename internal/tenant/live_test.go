// The Resolver against a live process on this host: the OTEP 4947/4719 test writer (built
// with the host gcc from appctx's testdata) publishes a process context announcing a
// thread-context schema, carries a TRACEPARENT, and defines otel_thread_ctx_v1 in a
// TLSDESC shared library. Real /proc, real process_vm_readv.
package tenant

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"testing"
	"time"

	"github.com/ghostdriver/ghostdriver/internal/attr"
	"github.com/ghostdriver/ghostdriver/internal/tenant/appctx"
	"github.com/ghostdriver/ghostdriver/internal/testreq"
)

func TestResolverLiveProcess(t *testing.T) {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		testreq.Skip(t, testreq.LinuxAMD64, "live resolution is tested on linux/amd64; this is "+runtime.GOOS+"/"+runtime.GOARCH)
	}
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		testreq.Skip(t, testreq.GCC, "gcc not installed: cannot build the test writer")
	}
	src, _ := filepath.Abs("appctx/testdata/tlsprog")
	dir := t.TempDir()
	lib, prog := filepath.Join(dir, "libotelctx.so"), filepath.Join(dir, "trainer")
	for _, args := range [][]string{
		{"-O1", "-shared", "-fPIC", "-mtls-dialect=gnu2", "-o", lib, filepath.Join(src, "otelctx.c")},
		{"-O1", "-o", prog, filepath.Join(src, "main.c"), "-L" + dir, "-lotelctx", "-Wl,-rpath," + dir, "-lpthread", "-ldl"},
	} {
		if out, err := exec.Command(gcc, args...).CombinedOutput(); err != nil {
			t.Fatalf("gcc %v: %v\n%s", args, err, out)
		}
	}
	pc := appctx.ProcessContext{
		Resource: []attr.Attribute{attr.String("service.name", "live-trainer"), attr.String("service.instance.id", "i-1")},
		Extra: []attr.Attribute{attr.String(appctx.ThreadLocalSchemaKey, "tlsdesc_v1_dev"),
			{Key: appctx.ThreadLocalKeyMapKey, Value: attr.Value{Kind: attr.KindArray, Array: []attr.Value{{Kind: attr.KindString, Str: "http.request.method"}}}}},
	}
	payload := filepath.Join(dir, "ctx.pb")
	if err := os.WriteFile(payload, appctx.EncodeProcessContext(pc), 0o600); err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command(prog)
	cmd.Env = []string{"OTEL_CTX_PAYLOAD=" + payload, "TRACEPARENT=00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "SECRET=hunter2"}
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); cmd.Wait() }()
	type thread struct{ fsbase, slot uint64 }
	var threads []thread
	lines := bufio.NewScanner(stdout)
	deadline := time.AfterFunc(20*time.Second, func() { cmd.Process.Kill() })
	defer deadline.Stop()
	for lines.Scan() && lines.Text() != "ready" {
		var th thread
		var tid, tag int
		if _, err := fmt.Sscanf(lines.Text(), "ctx %d %v %v %d", &tid, &th.fsbase, &th.slot, &tag); err == nil {
			threads = append(threads, th)
		}
	}
	if len(threads) != 2 {
		t.Fatalf("writer reported %d threads", len(threads))
	}

	r := NewResolver(DefaultConfig())
	p, err := r.Process(uint32(cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	if p.ResourceSource != FromProcessContext || p.ServiceName != "live-trainer" {
		t.Errorf("resource %+v from %v", p.Resource, p.ResourceSource)
	}
	if p.TraceParent == nil || p.TraceParent.String() != "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" {
		t.Errorf("TRACEPARENT %v", p.TraceParent)
	}
	if p.Exe != "trainer" || p.Cgroup.Line == "" {
		t.Errorf("identity %q, cgroup %q", p.Exe, p.Cgroup.Line)
	}
	if p.ThreadContextTLS == nil {
		t.Fatalf("thread context not resolved: %s", p.ThreadContextErr)
	}
	t.Logf("recipe for the BPF side: %+v", *p.ThreadContextTLS)
	for _, th := range threads {
		slot, err := p.ThreadContextTLS.SlotAddress(appctx.ProcessVM{}, p.PID, th.fsbase)
		if err != nil || slot != th.slot {
			t.Fatalf("slot %#x (%v), thread says %#x", slot, err, th.slot)
		}
		var ptr [8]byte
		rec := make([]byte, appctx.ThreadContextHeaderSize+8)
		if err := (appctx.ProcessVM{}).ReadMemory(p.PID, slot, ptr[:]); err != nil {
			t.Fatal(err)
		}
		if err := (appctx.ProcessVM{}).ReadMemory(p.PID, binary.NativeEndian.Uint64(ptr[:]), rec); err != nil {
			t.Fatal(err)
		}
		c, err := appctx.ParseThreadContext(rec)
		if err != nil || !c.Valid {
			t.Fatalf("record %+v, %v", c, err)
		}
		if named := c.Named(p.ThreadLocal.KeyMap); !reflect.DeepEqual(named, []attr.Attribute{attr.String("http.request.method", "GET")}) {
			t.Errorf("record attributes %+v", named)
		}
	}
}
