// End-to-end TLS resolution: build real writers with the host gcc in every TLS model and
// dialect OTEP 4947 readers must handle, run them, and check that the recipe computed from
// /proc/<pid>/maps + the ELF (+ the process's GOT and DTV) lands on the address each thread
// printed for its own otel_thread_ctx_v1 — and that the record behind it decodes.
package appctx

import (
	"bufio"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ghostdriver/ghostdriver/internal/testreq"
)

type tlsCase struct {
	name string
	// lib: flags for building otelctx.c as libotelctx.so ("" = compile it into the executable).
	lib []string
	// exe: flags for the executable.
	exe     []string
	dlopen  bool
	kind    TLSAccessKind
	via     string // expected TLSAccess.Via; "" = any
	table   string
	relocs  []TLSRelocKind // relocation kinds InspectTLS must find (in the defining module)
	anyKind bool           // the loader may choose (surplus static TLS or not)
}

var tlsCases = []tlsCase{
	{name: "exe_pie_initial_exec", exe: []string{"-fPIE", "-pie", "-ftls-model=initial-exec", "-rdynamic"},
		kind: TLSStatic, via: "executable", table: ".dynsym"},
	{name: "exe_pie_local_exec", exe: []string{"-fPIE", "-pie", "-ftls-model=local-exec", "-rdynamic"},
		kind: TLSStatic, via: "executable", table: ".dynsym"},
	{name: "exe_no_pie", exe: []string{"-fno-pie", "-no-pie", "-rdynamic"},
		kind: TLSStatic, via: "executable", table: ".dynsym"},
	{name: "exe_symtab_only", exe: []string{"-fPIE", "-pie"}, // not exported: unstripped fallback
		kind: TLSStatic, via: "executable", table: ".symtab"},
	{name: "lib_general_dynamic", lib: []string{"-ftls-model=global-dynamic", "-mtls-dialect=gnu"},
		kind: TLSDynamic, via: "R_X86_64_DTPMOD64", table: ".dynsym", relocs: []TLSRelocKind{RelocDTPMod}},
	{name: "lib_tlsdesc", lib: []string{"-mtls-dialect=gnu2"},
		kind: TLSStatic, via: "R_X86_64_TLSDESC (static)", table: ".dynsym", relocs: []TLSRelocKind{RelocTLSDesc}},
	{name: "lib_initial_exec", lib: []string{"-ftls-model=initial-exec"},
		kind: TLSStatic, via: "R_X86_64_TPOFF64", table: ".dynsym", relocs: []TLSRelocKind{RelocTPOff}},
	{name: "dlopen_general_dynamic", lib: []string{"-ftls-model=global-dynamic", "-mtls-dialect=gnu"}, dlopen: true,
		kind: TLSDynamic, via: "R_X86_64_DTPMOD64", table: ".dynsym", relocs: []TLSRelocKind{RelocDTPMod}},
	{name: "dlopen_tlsdesc_big_block", lib: []string{"-mtls-dialect=gnu2", "-DBIG_TLS"}, dlopen: true,
		kind: TLSDynamic, via: "R_X86_64_TLSDESC (dynamic)", table: ".dynsym", relocs: []TLSRelocKind{RelocTLSDesc}},
	{name: "dlopen_tlsdesc_small_block", lib: []string{"-mtls-dialect=gnu2"}, dlopen: true, anyKind: true,
		table: ".dynsym", relocs: []TLSRelocKind{RelocTLSDesc}},
}

func TestThreadContextTLSEndToEnd(t *testing.T) {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		testreq.Skip(t, testreq.LinuxAMD64, "TLS resolution is implemented for linux/amd64; this is "+runtime.GOOS+"/"+runtime.GOARCH)
	}
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		testreq.Skip(t, testreq.GCC, "gcc not installed: cannot build the OTEP 4947 test writers")
	}
	src, _ := filepath.Abs("testdata/tlsprog")
	readers := []struct {
		name string
		mem  MemReader
	}{{"process_vm_readv", ProcessVM{}}, {"proc_pid_mem", ProcMem{ProcRoot: "/proc"}}}

	for _, tc := range tlsCases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			prog, lib := buildTLSCase(t, gcc, src, dir, tc)

			// What the file says.
			defining := prog
			if lib != "" {
				defining = lib
			}
			ef, err := elf.Open(defining)
			if err != nil {
				t.Fatal(err)
			}
			mod, err := InspectTLS(ef, ThreadContextSymbol)
			ef.Close()
			if err != nil {
				t.Fatalf("InspectTLS(%s): %v", filepath.Base(defining), err)
			}
			if mod.Value == 0 {
				t.Errorf("st_value 0: the test writer should place the slot after its padding")
			}
			if mod.Table != tc.table {
				t.Errorf("symbol found in %s, want %s", mod.Table, tc.table)
			}
			if got, want := mod.Executable, lib == ""; got != want {
				t.Errorf("Executable = %v, want %v", got, want)
			}
			for _, k := range tc.relocs {
				if !hasReloc(mod.Relocs, k) {
					t.Errorf("no %v relocation found; relocs = %+v", k, mod.Relocs)
				}
			}

			// What the running process says.
			run := startTLSProg(t, prog, lib, tc.dlopen, nil)
			for _, rd := range readers {
				t.Run(rd.name, func(t *testing.T) {
					f := &TLSFinder{ProcRoot: "/proc", Mem: rd.mem}
					acc, err := f.Find(run.pid)
					if isPermission(err) {
						testreq.Skip(t, testreq.ProcMem, "cannot read process memory here: "+err.Error())
					}
					if err != nil {
						t.Fatalf("Find: %v", err)
					}
					t.Logf("%s: %+v", tc.name, acc)
					if !tc.anyKind && (acc.Kind != tc.kind || acc.Via != tc.via) {
						t.Errorf("recipe %v via %q, want %v via %q", acc.Kind, acc.Via, tc.kind, tc.via)
					}
					if acc.Module != defining {
						t.Errorf("module %q, want %q", acc.Module, defining)
					}
					for _, th := range run.threads {
						slot, err := acc.SlotAddress(rd.mem, run.pid, th.fsbase)
						if err != nil {
							t.Fatalf("tid %d: %v", th.tid, err)
						}
						if slot != th.slot {
							t.Fatalf("tid %d: computed slot %#x, the thread says %#x (fsbase %#x)", th.tid, slot, th.slot, th.fsbase)
						}
						checkRecord(t, rd.mem, run.pid, slot, th.tag)
					}
				})
			}
		})
	}
}

func buildTLSCase(t *testing.T, gcc, src, dir string, tc tlsCase) (prog, lib string) {
	t.Helper()
	cc := func(args ...string) {
		t.Helper()
		out, err := exec.Command(gcc, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("gcc %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	prog = filepath.Join(dir, "prog")
	if tc.lib == nil {
		cc(append(append([]string{"-O1", "-o", prog}, tc.exe...), filepath.Join(src, "main.c"), filepath.Join(src, "otelctx.c"), "-lpthread", "-ldl")...)
		return prog, ""
	}
	lib = filepath.Join(dir, "libotelctx.so")
	cc(append(append([]string{"-O1", "-shared", "-fPIC", "-o", lib}, tc.lib...), filepath.Join(src, "otelctx.c"))...)
	if tc.dlopen {
		cc("-O1", "-DUSE_DLOPEN", "-o", prog, filepath.Join(src, "main.c"), "-lpthread", "-ldl")
	} else {
		cc("-O1", "-o", prog, filepath.Join(src, "main.c"), "-L"+dir, "-lotelctx", "-Wl,-rpath,"+dir, "-lpthread", "-ldl")
	}
	return prog, lib
}

type tlsThread struct {
	tid          int
	fsbase, slot uint64
	tag          byte
}

type tlsRun struct {
	pid     uint32
	threads []tlsThread
	otelCtx uint64 // address of the published OTEL_CTX mapping, if any
}

// startTLSProg runs the writer until it says "ready"; t.Cleanup closes its stdin.
func startTLSProg(t *testing.T, prog, lib string, dlopen bool, env []string) tlsRun {
	t.Helper()
	var args []string
	if dlopen {
		args = []string{lib}
	}
	cmd := exec.Command(prog, args...)
	cmd.Env = append(os.Environ(), env...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	run := tlsRun{pid: uint32(cmd.Process.Pid)}
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	timeout := time.After(20 * time.Second)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("writer exited before it was ready")
			}
			if l == "ready" {
				if len(run.threads) != 2 {
					t.Fatalf("writer reported %d threads", len(run.threads))
				}
				return run
			}
			if _, err := fmt.Sscanf(l, "otel_ctx %v", &run.otelCtx); err == nil {
				continue
			}
			var th tlsThread
			if _, err := fmt.Sscanf(l, "ctx %d %v %v %d", &th.tid, &th.fsbase, &th.slot, &th.tag); err != nil {
				t.Fatalf("writer line %q: %v", l, err)
			}
			run.threads = append(run.threads, th)
		case <-timeout:
			t.Fatal("writer did not get ready in time")
		}
	}
}

// checkRecord follows the slot to the record, as the BPF side will, and decodes it.
func checkRecord(t *testing.T, mem MemReader, pid uint32, slot uint64, tag byte) {
	t.Helper()
	var p [8]byte
	if err := mem.ReadMemory(pid, slot, p[:]); err != nil {
		t.Fatal(err)
	}
	rec := make([]byte, ThreadContextHeaderSize+16)
	if err := mem.ReadMemory(pid, binary.NativeEndian.Uint64(p[:]), rec); err != nil {
		t.Fatal(err)
	}
	c, err := ParseThreadContext(rec)
	if err != nil {
		t.Fatal(err)
	}
	want := ThreadContext{Valid: true, Flags: 1, Attrs: []ThreadAttr{{Key: 0, Value: "GET"}}}
	for i := range want.TraceID {
		want.TraceID[i] = tag
	}
	for i := range want.SpanID {
		want.SpanID[i] = tag + 0x10
	}
	if fmt.Sprint(c) != fmt.Sprint(want) {
		t.Errorf("record of thread %d = %+v, want %+v", tag, c, want)
	}
}

func hasReloc(rs []TLSReloc, k TLSRelocKind) bool {
	for _, r := range rs {
		if r.Kind == k {
			return true
		}
	}
	return false
}

func isPermission(err error) bool {
	return errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EACCES)
}
