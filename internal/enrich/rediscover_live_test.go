// Re-discovery against a live process on this host: a test program (built with the host
// gcc from appctx's testdata) starts without any OTEP 4947 publisher, is read (the
// thread-context search misses), then dlopen()s a library defining otel_thread_ctx_v1 and
// publishes a record. Its next submits must bring the recipe into the kernel table within
// seconds, not at the 30 s refresh. The oracle is the program itself: the slot address it
// prints (its own &otel_thread_ctx_v1) and the record it wrote there.
package enrich

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/ghostdriver/ghostdriver/internal/event"
	"github.com/ghostdriver/ghostdriver/internal/tenant"
	"github.com/ghostdriver/ghostdriver/internal/tenant/appctx"
	"github.com/ghostdriver/ghostdriver/internal/testreq"
)

func TestRediscoverPublisherLoadedLate(t *testing.T) {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		testreq.Skip(t, testreq.LinuxAMD64, "live thread-context resolution is tested on linux/amd64; this is "+runtime.GOOS+"/"+runtime.GOARCH)
	}
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		testreq.Skip(t, testreq.GCC, "gcc not installed: cannot build the test program")
	}
	src, _ := filepath.Abs("../tenant/appctx/testdata/tlsprog")
	dir := t.TempDir()
	lib, prog := filepath.Join(dir, "libotelctx.so"), filepath.Join(dir, "late")
	for _, args := range [][]string{
		{"-O1", "-shared", "-fPIC", "-mtls-dialect=gnu2", "-o", lib, filepath.Join(src, "otelctx.c")},
		{"-O1", "-o", prog, filepath.Join(src, "late.c"), "-ldl"},
	} {
		if out, err := exec.Command(gcc, args...).CombinedOutput(); err != nil {
			t.Fatalf("gcc %v: %v\n%s", args, err, out)
		}
	}
	cmd := exec.Command(prog)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); cmd.Wait() }()
	kill := time.AfterFunc(30*time.Second, func() { cmd.Process.Kill() })
	defer kill.Stop()
	lines := bufio.NewScanner(stdout)
	if !lines.Scan() || lines.Text() != "started" {
		t.Fatalf("program said %q", lines.Text())
	}
	pid := uint32(cmd.Process.Pid)

	k := &fakeKernel{}
	e := New(Config{}, tenant.NewResolver(tenant.DefaultConfig()), k, nil) // Refresh: the default 30 s
	t.Cleanup(e.Close)
	firstSight(e, pid)
	waitLoaded(t, e, pid)
	if r, ok := k.row(pid); !ok || r != nil {
		t.Fatalf("first read: kernel row %v (present %v), want a row without a recipe", r, ok)
	}

	// The publisher arrives.
	if _, err := io.WriteString(stdin, "load "+lib+"\n"); err != nil {
		t.Fatal(err)
	}
	var tid int
	var fsbase, slot uint64
	var tag uint8
	if !lines.Scan() {
		t.Fatal("program exited")
	}
	if _, err := fmt.Sscanf(lines.Text(), "ctx %d %v %v %d", &tid, &fsbase, &slot, &tag); err != nil {
		t.Fatalf("program said %q: %v", lines.Text(), err)
	}
	if !lines.Scan() || lines.Text() != "ready" {
		t.Fatalf("program said %q", lines.Text())
	}

	// It keeps submitting (one ioctl every 20 ms).
	loaded := time.Now()
	var recipe *appctx.TLSAccess
	for time.Since(loaded) < 10*time.Second {
		e.Observe([]event.Event{{Kind: event.IoctlEnter, PID: pid, TID: uint32(tid)}})
		if r, _ := k.row(pid); r != nil {
			recipe = r
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	took := time.Since(loaded)
	if recipe == nil {
		t.Fatalf("no recipe %v after the publisher was loaded (stats %+v)", took, e.Stats())
	}
	t.Logf("recipe in the kernel %v after the publisher was loaded: %+v", took.Round(time.Millisecond), *recipe)
	if took > 5*time.Second {
		t.Errorf("re-discovery took %v", took)
	}
	got, err := recipe.SlotAddress(appctx.ProcessVM{}, pid, fsbase)
	if err != nil || got != slot {
		t.Fatalf("recipe's slot %#x (%v), the program's &otel_thread_ctx_v1 is %#x", got, err, slot)
	}
	var ptr [8]byte
	rec := make([]byte, appctx.ThreadContextHeaderSize)
	if err := (appctx.ProcessVM{}).ReadMemory(pid, slot, ptr[:]); err != nil {
		t.Fatal(err)
	}
	if err := (appctx.ProcessVM{}).ReadMemory(pid, binary.NativeEndian.Uint64(ptr[:]), rec); err != nil {
		t.Fatal(err)
	}
	if rec[0] != tag || rec[15] != tag || rec[24] != 1 {
		t.Errorf("record through the recipe: % x, want trace id bytes %#x and valid 1", rec, tag)
	}
	if tp, _ := e.Lookup(pid); tp == nil || tp.ThreadContextTLS == nil || *tp.ThreadContextTLS != *recipe {
		t.Errorf("the process's snapshot does not carry the recipe")
	}
	st := e.Stats()
	if st.Rediscovery[RediscoveryFound] != 1 || st.Recipes != 1 {
		t.Errorf("re-discoveries %v, recipes %d; want 1 found, 1 recipe", st.Rediscovery, st.Recipes)
	}
	if st.Rediscovery[RediscoveryRateLimited] == 0 {
		t.Errorf("submits every 20 ms with a 1 s interval: none rate limited (%v)", st.Rediscovery)
	}
	t.Logf("re-discoveries by outcome (found, not_found, rate_limited): %v", st.Rediscovery)
}
