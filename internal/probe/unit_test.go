//go:build linux

package probe

import (
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/ghostdriver/ghostdriver/internal/ctxtier"
	"github.com/ghostdriver/ghostdriver/internal/event"
	"github.com/ghostdriver/ghostdriver/internal/procfs"
)

// The live source converts with the offset it holds (kclock measures it; kclock's tests
// check the measurement against time.Now).
func TestLiveClockAddsItsOffset(t *testing.T) {
	c := liveClock{&Live{}}
	c.l.offset.Store(1_700_000_000_000_000_500)
	if got := c.WallNanos(10100); got != 1_700_000_000_000_010_600 {
		t.Fatalf("WallNanos(10100) = %d", got)
	}
}

func TestGPUIRQsFromProcInterrupts(t *testing.T) {
	const procInterrupts = `           CPU0       CPU1       CPU2       CPU3
  0:         46          0          0          0   IO-APIC   2-edge      timer
 26:          0         12          0          0   IO-APIC   4-edge      ttyS0
 45:    1234567          0          0          0   PCI-MSI 524288-edge      amdgpu
 46:         12          0          0          0   PCI-MSI 1048576-edge      nvidia
 47:          3          0          0          0   PCI-MSI 32768-edge      i915
 48:          3          0          0          0   PCI-MSI 32769-edge      xhci_hcd
 49:          3          0          0          0   GICv3 200 Level     panfrost-job, panfrost-gpu
 50:          3          0          0          0   PCI-MSI 2-edge      xenbus
NMI:          0          0          0          0   Non-maskable interrupts
LOC:     123456     123456     123456     123456   Local timer interrupts
`
	got := procfs.DeviceIRQs(procInterrupts, GPUIRQNames)
	want := map[int32]string{45: "amdgpu", 46: "nvidia", 47: "i915", 49: "panfrost-gpu"}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for irq, name := range want {
		if got[irq] != name {
			t.Errorf("irq %d: got %q, want %q", irq, got[irq], name)
		}
	}
}

func TestPrivilegeError(t *testing.T) {
	if err := privilegeError(1<<capSysAdmin, "2"); err != nil {
		t.Errorf("CAP_SYS_ADMIN: %v", err)
	}
	if err := privilegeError(1<<capBPF|1<<capPerfmon, "2"); err != nil {
		t.Errorf("CAP_BPF+CAP_PERFMON: %v", err)
	}
	err := privilegeError(1<<capBPF, "2")
	if err == nil || !strings.Contains(err.Error(), "CAP_PERFMON") || strings.Contains(err.Error(), "CAP_BPF+") ||
		!strings.Contains(err.Error(), "unprivileged_bpf_disabled=2") {
		t.Errorf("CAP_BPF only: %v", err)
	}
	if err := privilegeError(0, "0"); err == nil || !strings.Contains(err.Error(), "CAP_BPF+CAP_PERFMON") {
		t.Errorf("none: %v", err)
	}
}

func TestConfigDefaultsAndValidation(t *testing.T) {
	c, err := Config{}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if c.RingBufferBytes != 8<<20 || c.PollInterval != 10*time.Millisecond || c.DRMMajors[0] != 226 {
		t.Fatalf("defaults: %+v", c)
	}
	for _, bad := range []Config{
		{RingBufferBytes: 3 << 20},
		{RingBufferBytes: 1024},
		{DRMMajors: make([]uint32, MaxDRMMajors+1)},
	} {
		if _, err := bad.withDefaults(); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
	// An explicitly empty function list disables the hooks (nil takes the defaults).
	c, _ = Config{BOValidationFuncs: []string{}}.withDefaults()
	if len(c.BOValidationFuncs) != 0 || len(c.RunJobFuncs) == 0 {
		t.Fatalf("function lists: %+v", c)
	}
}

func TestDecodeRecord(t *testing.T) {
	d := decoder{boFuncs: []string{"ttm_bo_validate"}, runFuncs: []string{"amdgpu_job_run"}, irqNames: map[int32]string{45: "amdgpu"}}

	r := commonRecord{Ts: 123, PidTgid: 7<<32 | 9, Cpu: 1, Hook: uint16(commonHookHOOK_DRM_SCHED_JOB_RUN),
		FenceCtx: 1 << 40, FenceSeqno: 5, HwCtx: 77, HwSeqno: 3, ClientId: 42, Entity: 0xffff1234, JobId: 0,
		Flags: uint8(commonRecordFlagRF_HAS_FENCE | commonRecordFlagRF_FENCE_WIDE | commonRecordFlagRF_HW_FENCE)}
	setCString(r.Comm[:], "kworker/u8:1")
	setCString(r.Ring[:], "gfx_0.0.0")
	setCString(r.Dev[:], "0000:03:00.0")
	var ev event.Event
	if err := d.decode(rawRecord(r), &ev); err != nil {
		t.Fatal(err)
	}
	want := event.Event{Kind: event.JobRun, Name: "drm_sched_job_run", Time: 123, CPU: 1, PID: 7, TID: 9,
		Comm: "kworker/u8:1", Ring: "gfx_0.0.0", Device: "0000:03:00.0",
		Fence: event.FenceKey{Context: 1 << 40, Seqno: 5}, FenceWide: true, HWFence: event.FenceKey{Context: 77, Seqno: 3},
		ClientID: 42, Entity: 0xffff1234}
	if ev != want {
		t.Fatalf("got  %+v\nwant %+v", ev, want)
	}

	// The ioctl hooks have records of their own (ioctl_enter_record, ioctl_exit_record):
	// a full record of one is nothing a program writes.
	for _, h := range []commonHook{commonHookHOOK_SYS_ENTER_IOCTL, commonHookHOOK_SYS_EXIT_IOCTL, commonHookHOOK_DRM_IOCTL_ENTER, commonHookHOOK_DRM_IOCTL_EXIT} {
		r = commonRecord{Hook: uint16(h), Fd: 3, Cmd: 0xc0186444, Arg: 0x7ffd0000, Ret: -4}
		if err := d.decode(rawRecord(r), &ev); !errors.Is(err, errUnknownHook) {
			t.Errorf("full record of ioctl hook %d: %+v %v, want errUnknownHook", h, ev, err)
		}
	}
	r = commonRecord{Hook: uint16(commonHookHOOK_BO_VALIDATE_EXIT), Func: 0, Ret: -12}
	if err := d.decode(rawRecord(r), &ev); err != nil || ev.Func != "ttm_bo_validate" || ev.Ret != -12 {
		t.Fatalf("bo exit: %+v %v", ev, err)
	}
	r = commonRecord{Hook: uint16(commonHookHOOK_IRQ_HANDLER_ENTRY), Irq: 45}
	if err := d.decode(rawRecord(r), &ev); err != nil || ev.IRQName != "amdgpu" || ev.Kind != event.IRQEntry {
		t.Fatalf("irq: %+v %v", ev, err)
	}
	r = commonRecord{Hook: 999}
	if err := d.decode(rawRecord(r), &ev); !errors.Is(err, errUnknownHook) || ev.Name != "hook(999)" {
		t.Fatalf("unknown hook: %+v %v", ev, err)
	}
	if err := d.decode(make([]byte, recordSize-1), &ev); !errors.Is(err, errShortRecord) {
		t.Fatalf("short: %v", err)
	}
}

func TestHookTableCoversEveryProgram(t *testing.T) {
	// Every kind the table produces is a real kind, and every hook name is unique per kind.
	for h, info := range hookTable {
		if info.kind == event.KindUnknown || info.name == "" {
			t.Errorf("hook %d: %+v", h, info)
		}
	}
	// Every program named in the ladder exists in its family's object.
	for _, def := range hookDefs(DefaultConfig()) {
		for _, r := range def.rungs {
			spec, err := familySpecs[r.family]()
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range r.progs {
				if spec.Programs[p] == nil {
					t.Errorf("%s: no program %s in %s", def.event, p, r.family)
				}
			}
		}
	}
}

func FuzzDecodeRecord(f *testing.F) {
	f.Add(ioctlEnterSample(commonIoctlEnterRecord{Hook: uint8(commonHookHOOK_SYS_ENTER_IOCTL), Fd: 3}))
	f.Add(rawRecord(commonRecord{Hook: uint16(commonHookHOOK_RUN_JOB_EXIT), Func: 9999}))
	f.Add(rawRecord(commonRecord{Hook: uint16(commonHookHOOK_MSM_GPU_SUBMIT), Arg: 2}))
	f.Add([]byte{1, 2, 3})
	f.Add(fenceSample(commonFenceRecord{Hook: uint16(commonHookHOOK_DMA_FENCE_SIGNALED), Flags: uint8(commonRecordFlagRF_HAS_FENCE)}))
	f.Add(ioctlExitSample(commonIoctlExitRecord{Hook: uint16(commonHookHOOK_SYS_EXIT_IOCTL), Fd: 3, Ret: -25}))
	d := decoder{boFuncs: []string{"a"}, runFuncs: []string{"b"}, irqNames: map[int32]string{}}
	f.Fuzz(func(t *testing.T, b []byte) {
		var ev event.Event
		err := d.decode(b, &ev)
		if err == nil {
			if ev.Kind == event.KindUnknown || ev.Name == "" {
				t.Fatalf("decoded without a kind: %+v", ev)
			}
			if len(b) < recordSize && len(b) != fenceRecordSize && len(b) != ioctlExitRecordSize && len(b) != ioctlEnterRecordSize {
				t.Fatalf("decoded a short record (%d bytes)", len(b))
			}
			// Strings reach OTLP attributes: never invalid UTF-8, whatever a comm holds.
			for _, str := range []string{ev.Comm, ev.Ring, ev.Device, ev.Func} {
				if !utf8.ValidString(str) {
					t.Fatalf("invalid UTF-8 %q in the event", str)
				}
			}
		}
	})
}

// ioctlExitSample is an ioctl_exit_record ring buffer sample.
func ioctlExitSample(r commonIoctlExitRecord) []byte {
	return append([]byte(nil), unsafe.Slice((*byte)(unsafe.Pointer(&r)), ioctlExitRecordSize)...)
}

// The ioctl exit's record gives the exit event (without comm), and only for the two exit
// hooks: an exit-sized sample of another hook is unknown.
func TestDecodeIoctlExitRecord(t *testing.T) {
	d := decoder{}
	var compact event.Event
	if err := d.decode(ioctlExitSample(commonIoctlExitRecord{Hook: uint16(commonHookHOOK_SYS_EXIT_IOCTL), Ts: 77, PidTgid: 5<<32 | 6, Cpu: 1,
		Fd: 3, Cmd: 0xc0186444, Ret: -4}), &compact); err != nil {
		t.Fatal(err)
	}
	want := event.Event{Kind: event.IoctlExit, Name: "sys_exit_ioctl", Time: 77, CPU: 1, PID: 5, TID: 6, Fd: 3, Cmd: 0xc0186444, Ret: -4}
	if compact != want {
		t.Fatalf("got  %+v\nwant %+v", compact, want)
	}
	if err := d.decode(ioctlExitSample(commonIoctlExitRecord{Hook: uint16(commonHookHOOK_DRM_IOCTL_EXIT), Ts: 78, Fd: -1, Cmd: 0xc0186444, Ret: 0}), &compact); err != nil ||
		compact.Kind != event.IoctlExit || compact.Name != "drm_ioctl" || compact.Fd != -1 || compact.Cmd != 0xc0186444 || compact.Time != 78 {
		t.Fatalf("fexit drm_ioctl: %+v %v", compact, err)
	}
	for _, h := range []commonHook{commonHookHOOK_SYS_ENTER_IOCTL, commonHookHOOK_DRM_IOCTL_ENTER, commonHookHOOK_DMA_FENCE_SIGNALED, 999} {
		if err := d.decode(ioctlExitSample(commonIoctlExitRecord{Hook: uint16(h)}), &compact); !errors.Is(err, errUnknownHook) {
			t.Errorf("hook %d in an exit-sized sample: %v, want errUnknownHook", h, err)
		}
	}
}

// ioctlEnterSample is an ioctl_enter_record ring buffer sample.
func ioctlEnterSample(r commonIoctlEnterRecord) []byte {
	return append([]byte(nil), unsafe.Slice((*byte)(unsafe.Pointer(&r)), ioctlEnterRecordSize)...)
}

// The ioctl entry's record gives the entry event: the syscall rungs' with the fd, fentry
// drm_ioctl's with the DRM driver's name and client id, each with comm and the trace context
// (ids and trace flags, sampled or not) only when a tier was read; an entry-sized sample of
// another hook is unknown, not misread.
func TestDecodeIoctlEnterRecord(t *testing.T) {
	var d decoder
	var ev event.Event
	for _, flags := range []uint8{0x01, 0x00} {
		r := commonIoctlEnterRecord{Ts: 50, PidTgid: 5<<32 | 6, Cpu: 2, Hook: uint8(commonHookHOOK_SYS_ENTER_IOCTL),
			Fd: 3, Cmd: 0xc0186444, Arg: 0x7ffd0000, CtxTier: uint8(commonCtxTierCTX_TIER_OTEP4947), TraceFlags: flags,
			TraceId: [16]uint8{1, 2, 3}, SpanId: [8]uint8{4, 5}}
		setCString(r.Comm[:], "app")
		if err := d.decode(ioctlEnterSample(r), &ev); err != nil {
			t.Fatal(err)
		}
		want := event.Event{Kind: event.IoctlEnter, Name: "sys_enter_ioctl", Time: 50, CPU: 2, PID: 5, TID: 6, Comm: "app",
			Fd: 3, Cmd: 0xc0186444, Arg: 0x7ffd0000, CtxTier: uint8(commonCtxTierCTX_TIER_OTEP4947), TraceFlags: flags,
			TraceID: [16]byte{1, 2, 3}, SpanID: [8]byte{4, 5}}
		if ev != want {
			t.Fatalf("syscall entry, trace flags %#02x:\ngot  %+v\nwant %+v", flags, ev, want)
		}
	}
	r := commonIoctlEnterRecord{Ts: 51, PidTgid: 5<<32 | 6, Hook: uint8(commonHookHOOK_DRM_IOCTL_ENTER), Fd: -1, Cmd: 0xc0186444,
		TraceId: [16]uint8{9}, SpanId: [8]uint8{9}, TraceFlags: 1, ClientId: 42} // no tier: the context is not read
	setCString(r.Driver[:], "amdgpu")
	if err := d.decode(ioctlEnterSample(r), &ev); err != nil {
		t.Fatal(err)
	}
	want := event.Event{Kind: event.IoctlEnter, Name: "drm_ioctl", Time: 51, PID: 5, TID: 6, Fd: -1, Cmd: 0xc0186444, Driver: "amdgpu", ClientID: 42}
	if ev != want {
		t.Fatalf("fentry entry:\ngot  %+v\nwant %+v", ev, want)
	}
	for _, h := range []commonHook{commonHookHOOK_SYS_EXIT_IOCTL, commonHookHOOK_DRM_IOCTL_EXIT, commonHookHOOK_DRM_SCHED_JOB_QUEUE, 255} {
		if err := d.decode(ioctlEnterSample(commonIoctlEnterRecord{Hook: uint8(h)}), &ev); !errors.Is(err, errUnknownHook) {
			t.Errorf("hook %d in an entry-sized sample: %v, want errUnknownHook", h, err)
		}
	}
}

// The dma_fence hooks' compact record decodes to the same event a full record gave
// (without comm), and only for fence hooks: a fence-sized sample of another hook is
// unknown, not misread.
func TestDecodeFenceRecord(t *testing.T) {
	var d decoder
	var ev event.Event
	b := fenceSample(commonFenceRecord{Ts: 123, PidTgid: 7<<32 | 9, FenceCtx: 1 << 40, FenceSeqno: 5, Ptr: 0xffff8881000a0000,
		Cpu: 3, Hook: uint16(commonHookHOOK_DMA_FENCE_SIGNALED), Flags: uint8(commonRecordFlagRF_HAS_FENCE | commonRecordFlagRF_FENCE_WIDE)})
	if err := d.decode(b, &ev); err != nil {
		t.Fatal(err)
	}
	want := event.Event{Kind: event.FenceSignaled, Name: "dma_fence_signaled", Time: 123, CPU: 3, PID: 7, TID: 9,
		Fence: event.FenceKey{Context: 1 << 40, Seqno: 5}, FenceWide: true, FencePtr: 0xffff8881000a0000}
	if ev != want {
		t.Fatalf("got %+v\nwant %+v", ev, want)
	}
	b = fenceSample(commonFenceRecord{Hook: uint16(commonHookHOOK_SYS_ENTER_IOCTL)})
	if err := d.decode(b, &ev); !errors.Is(err, errUnknownHook) {
		t.Fatalf("a fence-sized ioctl record: err %v, event %+v", err, ev)
	}
}

// Without OBI's map pinned the OBI tier is dropped from the in-kernel order, the others
// keep their order.
func TestWithoutTier(t *testing.T) {
	const none, otep, obi = ctxtier.None, ctxtier.OTEP4947, ctxtier.OBI
	for _, c := range []struct{ in, want [maxCtxTiers]uint8 }{
		{[maxCtxTiers]uint8{otep, obi}, [maxCtxTiers]uint8{otep, none}},
		{[maxCtxTiers]uint8{obi, otep}, [maxCtxTiers]uint8{otep, none}},
		{[maxCtxTiers]uint8{obi, none}, [maxCtxTiers]uint8{none, none}},
		{[maxCtxTiers]uint8{otep, none}, [maxCtxTiers]uint8{otep, none}},
	} {
		if got := withoutTier(c.in, obi); got != c.want {
			t.Errorf("withoutTier(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}
