// OTEP 4719 against a live publisher: the C writer maps, fills, signs and names an
// OTEL_CTX mapping like the reference implementation; we find it in /proc/<pid>/maps and
// read it with process_vm_readv.
package appctx

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"testing"

	"github.com/ghostdriver/ghostdriver/internal/procfs"
	"github.com/ghostdriver/ghostdriver/internal/testreq"
)

func TestReadProcessContextLive(t *testing.T) {
	if runtime.GOOS != "linux" {
		testreq.Skip(t, testreq.Linux, "process context is Linux only")
	}
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		testreq.Skip(t, testreq.GCC, "gcc not installed: cannot build the OTEP 4719 test writer")
	}
	src, _ := filepath.Abs("testdata/tlsprog")
	dir := t.TempDir()
	prog, _ := buildTLSCase(t, gcc, src, dir, tlsCase{exe: []string{"-rdynamic"}})
	payload := filepath.Join(dir, "payload.pb")
	if err := os.WriteFile(payload, EncodeProcessContext(samplePC), 0o600); err != nil {
		t.Fatal(err)
	}
	run := startTLSProg(t, prog, "", false, []string{"OTEL_CTX_PAYLOAD=" + payload})

	f, err := os.Open(filepath.Join("/proc", strconv.Itoa(int(run.pid)), "maps"))
	if err != nil {
		t.Fatal(err)
	}
	maps, err := procfs.ParseMaps(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	cands := ProcessContextCandidates(maps, uint64(os.Getpagesize()))
	named := false
	for _, m := range maps {
		named = named || IsProcessContextMapping(m.Path)
	}
	t.Logf("mapping named by the kernel: %v; candidates %#x; published at %#x", named, cands, run.otelCtx)
	found := false
	for _, c := range cands {
		found = found || c == run.otelCtx
	}
	if !found {
		t.Fatalf("published mapping %#x not among candidates %#x", run.otelCtx, cands)
	}
	pc, err := ReadProcessContext(ProcessVM{}, run.pid, run.otelCtx)
	if isPermission(err) {
		testreq.Skip(t, testreq.ProcMem, "cannot read process memory here: "+err.Error())
	}
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(pc, samplePC) {
		t.Fatalf("read %+v\nwant %+v", pc, samplePC)
	}
}
