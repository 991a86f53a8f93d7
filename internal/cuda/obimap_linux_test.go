// The default OBI pin path ends in the map the CUDA object reads OBI's contexts from, and a
// context read from it arrives taken as sampled.
package cuda

import (
	"os"
	"path"
	"path/filepath"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"github.com/ghostdriver/ghostdriver/internal/ctxtier"
	"github.com/ghostdriver/ghostdriver/internal/cuda/cudatest"
	"github.com/ghostdriver/ghostdriver/internal/testreq"
)

func TestOBIMapPathNamesTheMap(t *testing.T) {
	if base := path.Base(ctxtier.OBIMapPath); base != obiMapName {
		t.Errorf("default OBI pin %s, the object's map %s", ctxtier.OBIMapPath, obiMapName)
	}
}

// OBI's map holds trace id and span id, no trace flags: what OBI publishes there is the
// context of a span it records, so a call whose thread has an entry carries it with flags
// 0x01 (sampled). The workload publishes no thread context; only its main thread has an
// entry in a traces_ctx_v1 of OBI's shape pinned on a bpffs of the test's own: the device
// synchronize that main thread ends with closes a submission linked to that span, sampled,
// while the workers' submissions carry no context.
func TestStubOBIContextIsTakenAsSampled(t *testing.T) {
	needRootAndGCC(t)
	app := buildStubs(t, t.TempDir())
	dir := t.TempDir()
	if err := unix.Mount("bpf", dir, "bpf", 0, ""); err != nil {
		testreq.Skip(t, testreq.BPFFS, "mounting a bpffs: "+err.Error())
	}
	t.Cleanup(func() { unix.Unmount(dir, 0) })
	pin := filepath.Join(dir, obiMapName)
	obi, err := ebpf.NewMap(&ebpf.MapSpec{Name: obiMapName, Type: ebpf.LRUHash, KeySize: 8, ValueSize: 24, MaxEntries: 16384})
	if err != nil {
		t.Fatal(err)
	}
	defer obi.Close()
	if err := obi.Pin(pin); err != nil {
		t.Fatal(err)
	}

	src, rep, err := Open(Config{RescanInterval: 20 * time.Millisecond, OBIMapPath: pin}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if !rep.StageAttached(stageAppContext) {
		t.Fatalf("OBI's map not used: %s", rep.Summary())
	}
	var subs []*Submission
	asm := NewAssembler(AssemblerConfig{FlushAfter: int64(10 * time.Minute)}, func(s *Submission) { subs = append(subs, s) })
	sink := &goneSink{Assembler: asm, gone: map[uint32]bool{}}
	stop := runSource(t, src, sink)

	w := cudatest.Start(t, app, 3, append(os.Environ(), "STUB_NO_THREAD_CTX=1"))
	sink.pid.Store(w.PID)
	var ids [24]byte
	for i := range ids {
		ids[i] = byte(0x40 + i)
	}
	if err := obi.Update(uint64(w.PID)<<32|uint64(w.PID), ids, ebpf.UpdateAny); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "both stub libraries hooked", func() bool { return src.Stats().Libraries >= 2 })
	w.Init(t)
	w.Work(t)
	waitFor(t, "the workload's device synchronize read", func() bool { return sink.calls("cudaDeviceSynchronize") >= 1 })
	stop()
	asm.Flush()

	var device, workers int
	for _, s := range subs {
		switch {
		case s.Scope == ScopeContext:
			device++
			if s.CtxTier != ctxtier.OBI || string(s.TraceID[:]) != string(ids[:16]) || string(s.SpanID[:]) != string(ids[16:]) ||
				s.TraceFlags != 0x01 {
				t.Errorf("device submission: context tier %d trace %x span %x flags %02x, want OBI's (tier %d) %x, flags 01",
					s.CtxTier, s.TraceID, s.SpanID, s.TraceFlags, ctxtier.OBI, ids)
			}
		case s.CtxTier != 0:
			t.Errorf("%v submission of stream %#x: context tier %d, want none (the workers have no entry)", s.Scope, s.Stream, s.CtxTier)
		default:
			workers++
		}
	}
	if device != 1 || workers == 0 {
		t.Errorf("%d device submissions and %d of the workers, want 1 and some", device, workers)
	}
}
