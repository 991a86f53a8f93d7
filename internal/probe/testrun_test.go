//go:build linux

package probe

import (
	"bytes"
	"encoding/binary"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/btf"
	"github.com/cilium/ebpf/ringbuf"
	"go.uber.org/zap"

	"github.com/ghostdriver/ghostdriver/internal/event"
	"github.com/ghostdriver/ghostdriver/internal/testreq"
)

// BPF_PROG_TEST_RUN tests of the raw_tp twins of the hook bodies: the data path
// (CO-RE reads, record layout, ring buffer) with fake tracepoint arguments. tp_btf
// programs cannot be test-run; they share the body.
//
// Fake kernel objects are written into an array map's value, which lives in kernel
// memory, so the program's bpf_probe_read_kernel reads them like the real thing. Its
// address comes from a tiny program that stores the map value pointer into the value
// (pointer leaks are allowed with CAP_PERFMON).

const scratchSize = 1024
const addrSlot = scratchSize - 8

type scratch struct {
	m    *ebpf.Map
	addr uint64
	buf  []byte
}

func newScratch(t *testing.T) *scratch {
	t.Helper()
	m, err := ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.Array, KeySize: 4, ValueSize: scratchSize, MaxEntries: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	leak, err := ebpf.NewProgram(&ebpf.ProgramSpec{
		Type:    ebpf.SocketFilter,
		License: "GPL",
		Instructions: asm.Instructions{
			asm.StoreImm(asm.RFP, -4, 0, asm.Word),
			asm.Mov.Reg(asm.R2, asm.RFP),
			asm.Add.Imm(asm.R2, -4),
			asm.LoadMapPtr(asm.R1, m.FD()),
			asm.FnMapLookupElem.Call(),
			asm.JEq.Imm(asm.R0, 0, "out"),
			asm.StoreMem(asm.R0, addrSlot, asm.R0, asm.DWord),
			asm.Mov.Imm(asm.R0, 0).WithSymbol("out"),
			asm.Return(),
		},
	})
	if err != nil {
		t.Fatalf("address helper: %v", err)
	}
	defer leak.Close()
	if _, err := leak.Run(&ebpf.RunOptions{Data: make([]byte, 14)}); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, scratchSize)
	if err := m.Lookup(uint32(0), &buf); err != nil {
		t.Fatal(err)
	}
	addr := binary.LittleEndian.Uint64(buf[addrSlot:])
	if addr < 0xffff000000000000 {
		t.Fatalf("map value address %#x is not a kernel address", addr)
	}
	return &scratch{m: m, addr: addr, buf: buf}
}

func (s *scratch) put64(off int, v uint64)  { binary.LittleEndian.PutUint64(s.buf[off:], v) }
func (s *scratch) putStr(off int, v string) { copy(s.buf[off:], v+"\x00") }
func (s *scratch) flush(t *testing.T) {
	if err := s.m.Update(uint32(0), s.buf, ebpf.UpdateExist); err != nil {
		t.Fatal(err)
	}
}

func memberOffset(t *testing.T, s *btf.Struct, name string) int {
	for _, m := range s.Members {
		if m.Name == name {
			return int(m.Offset.Bytes())
		}
	}
	t.Fatalf("struct %s has no member %s", s.Name, name)
	return 0
}

func kernelStruct(t *testing.T, name string) *btf.Struct {
	spec, err := btf.LoadKernelSpec()
	if err != nil {
		testreq.Skip(t, testreq.BTF, "no kernel BTF: "+err.Error())
	}
	var s *btf.Struct
	if err := spec.TypeByName(name, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// testRunOne loads one program alone (as the loader does) and runs it with args.
func testRunOne(t *testing.T, family, prog string, opts ebpf.ProgramOptions, args ...uint64) event.Event {
	t.Helper()
	cfg, _ := DefaultConfig().withDefaults()
	ld := newLoader(cfg, zap.NewNop())
	ld.progOpts = opts
	if err := ld.loadCommon(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ld.objs.close() })
	f, err := ld.family(family)
	if err != nil {
		t.Fatal(err)
	}
	p, err := ld.loadProgram(f, prog, rung{})
	if err != nil {
		t.Fatalf("load %s: %v", prog, err)
	}
	defer p.Close()
	rd, err := ringbuf.NewReader(ld.objs.eventsMap())
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	if _, err := p.Run(&ebpf.RunOptions{Context: args}); err != nil {
		t.Fatalf("test run: %v", err)
	}
	rd.SetDeadline(time.Now().Add(time.Second))
	rec, err := rd.Read()
	if err != nil {
		t.Fatalf("no record: %v", err)
	}
	var ev event.Event
	d := decoder{}
	if err := d.decode(rec.RawSample, &ev); err != nil {
		t.Fatal(err)
	}
	return ev
}

func TestTestRunDMAFence(t *testing.T) {
	requireRoot(t)
	df := kernelStruct(t, "dma_fence")
	s := newScratch(t)
	const ctx, seq = 0x1_0000_0007, 0x2_0000_0009 // both halves beyond 32 bits
	s.put64(memberOffset(t, df, "context"), ctx)
	s.put64(memberOffset(t, df, "seqno"), seq)
	s.flush(t)

	ev := testRunOne(t, famFence, "rawtp_dma_fence_signaled", ebpf.ProgramOptions{}, s.addr)
	want := event.FenceKey{Context: ctx, Seqno: seq}
	if ev.Kind != event.FenceSignaled || ev.Name != "dma_fence_signaled" || ev.Fence != want || !ev.FenceWide ||
		ev.FencePtr != s.addr || ev.Time == 0 {
		t.Fatalf("got %+v, want fence %v at %#x", ev, want, s.addr)
	}
}

// drmSchedTypes builds BTF for the scheduler types of one kernel generation, to stand
// in for gpu-sched.ko's module BTF on a host without DRM. dma_fence is the kernel's own
// type, so relocations against it stay unambiguous.
type schedLayout struct {
	name                           string
	jobSched, jobSFence, jobEntity int
	jobID                          int // -1: no id member (6.17+)
	fenceFinished, fenceParent     int
	fenceClientID                  int // -1: no drm_client_id (<= 6.16)
	schedName, schedDev            int // schedDev -1: no dev member
	jobSize, fenceSize, schedSize  int
}

// fakeLayout61 is the <= 6.16 layout of the fake scheduler objects (job->id, no client id)
// around this kernel's dma_fence size.
func fakeLayout61(dfSize int) schedLayout {
	return schedLayout{name: "6.1", jobSched: 8, jobSFence: 16, jobEntity: 24, jobID: 40, jobSize: 96,
		fenceFinished: dfSize, fenceParent: 2*dfSize + 8, fenceClientID: -1, fenceSize: 2*dfSize + 64,
		schedName: 16, schedDev: -1, schedSize: 64}
}

// fakeLayout73 is the 6.17+ layout (no job id, s_fence->drm_client_id); schedDev is the
// offset of sched->dev, -1 for none.
func fakeLayout73(dfSize, schedDev int) schedLayout {
	return schedLayout{name: "7.3", jobSched: 8, jobSFence: 16, jobEntity: 24, jobID: -1, jobSize: 96,
		fenceFinished: dfSize, fenceParent: 2*dfSize + 8, fenceClientID: 2*dfSize + 40, fenceSize: 2*dfSize + 48,
		schedName: 24, schedDev: schedDev, schedSize: 64}
}

func drmSchedTypes(t *testing.T, l schedLayout) *btf.Spec {
	df := kernelStruct(t, "dma_fence")
	dev := kernelStruct(t, "device")
	u64 := &btf.Int{Name: "long long unsigned int", Size: 8}
	char := &btf.Int{Name: "char", Size: 1, Encoding: btf.Char}
	void := &btf.Void{}
	m := func(name string, typ btf.Type, off int) btf.Member {
		return btf.Member{Name: name, Type: typ, Offset: btf.Bits(off * 8)}
	}
	sched := &btf.Struct{Name: "drm_gpu_scheduler", Size: uint32(l.schedSize)}
	sched.Members = append(sched.Members, m("name", &btf.Pointer{Target: &btf.Const{Type: char}}, l.schedName))
	if l.schedDev >= 0 {
		sched.Members = append(sched.Members, m("dev", &btf.Pointer{Target: dev}, l.schedDev))
	}
	fence := &btf.Struct{Name: "drm_sched_fence", Size: uint32(l.fenceSize)}
	fence.Members = append(fence.Members,
		m("scheduled", df, 0), m("finished", df, l.fenceFinished), m("parent", &btf.Pointer{Target: df}, l.fenceParent))
	if l.fenceClientID >= 0 {
		fence.Members = append(fence.Members, m("drm_client_id", u64, l.fenceClientID))
	}
	job := &btf.Struct{Name: "drm_sched_job", Size: uint32(l.jobSize)}
	job.Members = append(job.Members,
		m("sched", &btf.Pointer{Target: sched}, l.jobSched),
		m("s_fence", &btf.Pointer{Target: fence}, l.jobSFence),
		m("entity", &btf.Pointer{Target: void}, l.jobEntity))
	if l.jobID >= 0 {
		job.Members = append(job.Members, m("id", u64, l.jobID))
	}
	b, err := btf.NewBuilder([]btf.Type{job}, nil)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := b.Marshal(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := btf.LoadSpecFromReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	return spec
}

// Old (<= 6.16: job->id, no client id) and new (6.17+: no id, s_fence->drm_client_id,
// sched->dev) layouts both yield the finished fence key through the same program.
func TestTestRunSchedJobBothGenerations(t *testing.T) {
	requireRoot(t)
	dfSize := int(kernelStruct(t, "dma_fence").Size)
	devInitName := memberOffset(t, kernelStruct(t, "device"), "init_name")
	layouts := []schedLayout{
		fakeLayout61(dfSize),
		fakeLayout73(dfSize, 32),
	}
	df := kernelStruct(t, "dma_fence")
	ctxOff, seqOff := memberOffset(t, df, "context"), memberOffset(t, df, "seqno")
	for _, l := range layouts {
		t.Run(l.name, func(t *testing.T) {
			s := newScratch(t)
			const (
				jobAt, fenceAt, hwAt, schedAt, ringAt, devNameAt, devNamePtrAt = 0, 96, 400, 500, 580, 620, 610
			)
			a := func(off int) uint64 { return s.addr + uint64(off) }
			s.put64(jobAt+l.jobSched, a(schedAt))
			s.put64(jobAt+l.jobSFence, a(fenceAt))
			s.put64(jobAt+l.jobEntity, 0xffff888000001000)
			if l.jobID >= 0 {
				s.put64(jobAt+l.jobID, 4242)
			}
			s.put64(fenceAt+l.fenceFinished+ctxOff, 1<<33|5)
			s.put64(fenceAt+l.fenceFinished+seqOff, 1<<34|17)
			s.put64(fenceAt+l.fenceParent, a(hwAt))
			if l.fenceClientID >= 0 {
				s.put64(fenceAt+l.fenceClientID, 99)
			}
			s.put64(hwAt+ctxOff, 600)
			s.put64(hwAt+seqOff, 17)
			s.put64(schedAt+l.schedName, a(ringAt))
			s.putStr(ringAt, "gfx_0.0.0")
			if l.schedDev >= 0 {
				// dev points so that dev->init_name lands on devNamePtrAt.
				s.put64(schedAt+l.schedDev, a(devNamePtrAt-devInitName))
				s.put64(devNamePtrAt, a(devNameAt))
				s.putStr(devNameAt, "0000:03:00.0")
			}
			s.flush(t)

			opts := ebpf.ProgramOptions{ExtraRelocationTargets: []*btf.Spec{drmSchedTypes(t, l)}}
			ev := testRunOne(t, famSched, "rawtp_drm_sched_job_run", opts, a(jobAt), 0xffff888000002000)

			if ev.Kind != event.JobRun || ev.Fence != (event.FenceKey{Context: 1<<33 | 5, Seqno: 1<<34 | 17}) || !ev.FenceWide ||
				ev.HWFence != (event.FenceKey{Context: 600, Seqno: 17}) || ev.Ring != "gfx_0.0.0" ||
				ev.Entity != 0xffff888000002000 {
				t.Fatalf("got %+v", ev)
			}
			if l.jobID >= 0 && ev.JobID != 4242 || l.jobID < 0 && ev.JobID != 0 {
				t.Errorf("job id %d", ev.JobID)
			}
			if l.fenceClientID >= 0 && ev.ClientID != 99 || l.fenceClientID < 0 && ev.ClientID != 0 {
				t.Errorf("client id %d", ev.ClientID)
			}
			if l.schedDev >= 0 && ev.Device != "0000:03:00.0" || l.schedDev < 0 && ev.Device != "" {
				t.Errorf("device %q", ev.Device)
			}
		})
	}
}

// The IRQ bodies: a GPU interrupt (its number in gpu_irqs, filled from /proc/interrupts at
// Start) gives a record with the number and, on exit, the handler's result; any other
// interrupt gives nothing. No GPU IRQ line exists on the CI host or in the rig's guests, so
// this is where the data path runs in CI.
func TestTestRunIRQ(t *testing.T) {
	requireRoot(t)
	cfg, _ := DefaultConfig().withDefaults()
	ld := newLoader(cfg, zap.NewNop())
	if err := ld.loadCommon(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ld.objs.close() })
	fam, err := ld.family(famIRQ)
	if err != nil {
		t.Fatal(err)
	}
	const gpuIRQ, otherIRQ = 7, 8
	if err := fam.maps["gpu_irqs"].Update(int32(gpuIRQ), uint32(0), ebpf.UpdateAny); err != nil {
		t.Fatal(err)
	}
	rd, err := ringbuf.NewReader(ld.objs.eventsMap())
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	run := func(prog string, args ...uint64) (event.Event, bool) {
		t.Helper()
		p, err := ld.loadProgram(fam, prog, rung{})
		if err != nil {
			t.Fatalf("load %s: %v", prog, err)
		}
		defer p.Close()
		if _, err := p.Run(&ebpf.RunOptions{Context: args}); err != nil {
			t.Fatalf("test run %s: %v", prog, err)
		}
		rd.SetDeadline(time.Now().Add(200 * time.Millisecond))
		rec, err := rd.Read()
		if err != nil {
			return event.Event{}, false
		}
		var ev event.Event
		if err := (&decoder{}).decode(rec.RawSample, &ev); err != nil {
			t.Fatal(err)
		}
		return ev, true
	}
	if ev, ok := run("rawtp_irq_handler_entry", gpuIRQ, 0); !ok || ev.Kind != event.IRQEntry || ev.IRQ != gpuIRQ || ev.Time == 0 {
		t.Fatalf("GPU irq entry: got %+v (record: %v)", ev, ok)
	}
	if ev, ok := run("rawtp_irq_handler_exit", gpuIRQ, 0, 1); !ok || ev.Kind != event.IRQExit || ev.IRQ != gpuIRQ || ev.Ret != 1 {
		t.Fatalf("GPU irq exit: got %+v (record: %v)", ev, ok)
	}
	if ev, ok := run("rawtp_irq_handler_entry", otherIRQ, 0); ok {
		t.Fatalf("a non-GPU interrupt made a record: %+v", ev)
	}
}
