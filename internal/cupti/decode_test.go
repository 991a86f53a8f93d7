// The decoder: every field of every frame, the clock conversion to the nanosecond,
// records before the first batch, wide clock spreads, kernel names, unknown types.
package cupti

import (
	"strings"
	"testing"
)

// decodeFrames writes frames into a fresh ring and drains it into a decoder.
func decodeFrames(t *testing.T, write func(w *writer)) (*recSink, *Decoder, error) {
	t.Helper()
	mem := newChannelMem(RingMin, testPID)
	w := newWriter(mem)
	write(w)
	w.publish()
	r, err := NewRing(mem)
	if err != nil {
		t.Fatal(err)
	}
	s := &recSink{}
	d := NewDecoder(testPID, s)
	_, err = r.Drain(d.Frame)
	return s, d, err
}

// CUPTI on Linux reads CLOCK_REALTIME: a batch pairs it with two monotonic readings,
// and every record after it is moved by midpoint − cupti_at, to the nanosecond.
func TestDecodeConvertsEveryFieldWithTheBatchOffset(t *testing.T) {
	const (
		monoBefore = 5_000_000_000_000         // 5000 s of uptime
		monoAfter  = 5_000_000_000_700         // 700 ns later
		cuptiAt    = 1_760_000_000_000_000_000 // wall clock, ns
		offset     = monoBefore + 350 - cuptiAt
	)
	batch := Batch{MonoBefore: monoBefore, CuptiAt: cuptiAt, MonoAfter: monoAfter, Records: 3, DroppedCUPTI: 2}
	k := Kernel{Start: cuptiAt - 10_000, End: cuptiAt + 25_000, Correlation: 77, Device: 1, Context: 2, Stream: 13,
		Grid: [3]uint32{1024, 2, 3}, Block: [3]uint32{256, 1, 4}, Registers: 32, SharedMemory: 49152, GraphID: 5,
		GraphNodeID: 1 << 40, LaunchType: 3, Name: "_Z6vecAddPfS_S_i"}
	a := API{Start: cuptiAt - 20_000, End: cuptiAt - 9_000, Correlation: 77, CBID: 211, PID: 31, TID: 1_000_001, Domain: APIRuntime, Result: 0}
	c := Copy{Start: cuptiAt + 30_000, End: cuptiAt + 90_000, Bytes: 1 << 30, Correlation: 78, Device: 1, Context: 2, Stream: 14,
		What: CopyMemcpy, CopyKind: 1, GraphID: 0}
	st := StateChange{Mono: monoBefore - 1_000_000, State: StateOn, Reason: 0}
	dev := Device{Device: 1, SMs: 132, CCMajor: 9, CCMinor: 0}
	s, d, err := decodeFrames(t, func(w *writer) {
		w.must(t, FrameState, 0, stateBody(st))
		w.must(t, FrameDevice, 0, deviceBody(dev)) // needs no clock: it is not a timed record
		w.must(t, FrameBatch, 0, batchBody(batch))
		w.must(t, FrameAPI, 0, apiBody(&a))
		w.must(t, FrameKernel, KernelNameTruncated, kernelBody(&k, -1))
		w.must(t, FrameCopy, 0, copyBody(&c))
	})
	if err != nil {
		t.Fatal(err)
	}
	if b := s.batches; len(b) != 1 || b[0] != batch || b[0].Offset() != offset || b[0].Spread() != 700 {
		t.Fatalf("batches %+v", b)
	}
	wantK := k
	wantK.Start, wantK.End, wantK.NameTruncated = k.Start+offset, k.End+offset, true
	if len(s.kernels) != 1 || s.kernels[0] != wantK {
		t.Fatalf("kernel\n got %+v\nwant %+v", s.kernels, wantK)
	}
	if got := s.kernels[0]; got.Start != monoBefore+350-10_000 || got.End != monoBefore+350+25_000 {
		t.Fatalf("kernel times %d..%d", got.Start, got.End)
	}
	wantA := a
	wantA.Start, wantA.End = a.Start+offset, a.End+offset
	if len(s.apis) != 1 || s.apis[0] != wantA {
		t.Fatalf("api\n got %+v\nwant %+v", s.apis, wantA)
	}
	wantC := c
	wantC.Start, wantC.End = c.Start+offset, c.End+offset
	if len(s.copies) != 1 || s.copies[0] != wantC {
		t.Fatalf("copy\n got %+v\nwant %+v", s.copies, wantC)
	}
	if len(s.states) != 1 || s.states[0] != st {
		t.Fatalf("state %+v", s.states)
	}
	if len(s.devices) != 1 || s.devices[0] != dev {
		t.Fatalf("devices %+v, want %+v", s.devices, dev)
	}
	ds := d.Stats()
	if ds != (DecoderStats{Batches: 1, Kernels: 1, APIs: 1, Copies: 1, States: 1, Devices: 1, MaxClockSpread: 700, LastClockSpread: 700}) {
		t.Fatalf("stats %+v", ds)
	}
}

// Records before the channel's first batch have no offset: dropped and counted; a
// state change carries its own monotonic time and is handed on. Each later batch sets
// the offset for what follows it.
func TestDecodeNoClockBeforeTheFirstBatchAndEachBatchItsOffset(t *testing.T) {
	s, d, err := decodeFrames(t, func(w *writer) {
		w.must(t, FrameKernel, 0, kernelBody(&Kernel{Start: 1, End: 2, Name: "early"}, -1))
		w.must(t, FrameAPI, 0, apiBody(&API{Start: 1}))
		w.must(t, FrameCopy, 0, copyBody(&Copy{Start: 1}))
		w.must(t, FrameState, 0, stateBody(StateChange{Mono: 5, State: StateOn}))
		w.must(t, FrameBatch, 0, batchBody(Batch{MonoBefore: 1000, CuptiAt: 100, MonoAfter: 1000}))
		w.must(t, FrameKernel, 0, kernelBody(&Kernel{Start: 150, End: 160, Name: "a"}, -1))
		w.must(t, FrameBatch, 0, batchBody(Batch{MonoBefore: 2000, CuptiAt: 5000, MonoAfter: 2010}))
		w.must(t, FrameKernel, 0, kernelBody(&Kernel{Start: 5100, End: 0, Name: "b"}, -1))
	})
	if err != nil {
		t.Fatal(err)
	}
	ds := d.Stats()
	if ds.NoClock != 3 || ds.Kernels != 2 || ds.States != 1 || len(s.kernels) != 2 {
		t.Fatalf("stats %+v, %d kernels", ds, len(s.kernels))
	}
	// offset 900, then 2005 − 5000; End 0 (not recorded) stays 0.
	if k := s.kernels[0]; k.Start != 1050 || k.End != 1060 || k.Name != "a" {
		t.Fatalf("first %+v", k)
	}
	if k := s.kernels[1]; k.Start != 2105 || k.End != 0 || k.Name != "b" {
		t.Fatalf("second %+v", k)
	}
}

// A batch whose readings went backwards or are more than 1 ms apart is still used,
// and counted; its spread is kept.
func TestDecodeClockSpreadWide(t *testing.T) {
	s, d, err := decodeFrames(t, func(w *writer) {
		w.must(t, FrameBatch, 0, batchBody(Batch{MonoBefore: 10_000_000, CuptiAt: 0, MonoAfter: 11_000_000})) // exactly 1 ms: fine
		w.must(t, FrameBatch, 0, batchBody(Batch{MonoBefore: 10_000_000, CuptiAt: 0, MonoAfter: 13_000_002})) // 3 ms
		w.must(t, FrameKernel, 0, kernelBody(&Kernel{Start: 1, Name: "k"}, -1))
		w.must(t, FrameBatch, 0, batchBody(Batch{MonoBefore: 10_000_000, CuptiAt: 1_000, MonoAfter: 9_000_000})) // backwards
		w.must(t, FrameAPI, 0, apiBody(&API{Start: 1_001}))
	})
	if err != nil {
		t.Fatal(err)
	}
	ds := d.Stats()
	if ds.ClockSpreadWide != 2 || ds.MaxClockSpread != 3_000_002 || ds.LastClockSpread != -1_000_000 || ds.Batches != 3 {
		t.Fatalf("stats %+v", ds)
	}
	if k := s.kernels[0]; k.Start != 1+11_500_001 {
		t.Fatalf("kernel start %d", k.Start)
	}
	if a := s.apis[0]; a.Start != 1+9_500_000 {
		t.Fatalf("api start %d", a.Start)
	}
}

func TestDecodeKernelNames(t *testing.T) {
	long := strings.Repeat("x", NameMax)
	s, d, err := decodeFrames(t, func(w *writer) {
		w.must(t, FrameBatch, 0, batchBody(Batch{}))
		w.must(t, FrameKernel, 0, kernelBody(&Kernel{Name: ""}, -1))
		w.must(t, FrameKernel, KernelNameTruncated, kernelBody(&Kernel{Name: long}, -1))
		w.must(t, FrameKernel, 0, kernelBody(&Kernel{Name: "cut\xe2\x82"}, -1)) // a character cut in two
		w.must(t, FrameKernel, 0, kernelBody(&Kernel{Name: long}, -1))
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.kernels) != 4 || s.kernels[0].Name != "" || s.kernels[1].Name != long || !s.kernels[1].NameTruncated ||
		s.kernels[2].Name != "cut\uFFFD" || s.kernels[3].NameTruncated || d.Stats().Corrupt != 0 {
		t.Fatalf("kernels %d, stats %+v", len(s.kernels), d.Stats())
	}
	if len(d.names) != 3 {
		t.Fatalf("%d names interned", len(d.names))
	}
	// The cache is bounded: a process making up names resets it.
	for i := 0; i < maxNames+10; i++ {
		d.name([]byte(strings.Repeat("y", i%50) + string(rune('a'+i%26)) + strings.Repeat("z", i/26)))
	}
	if len(d.names) > maxNames {
		t.Fatalf("%d names interned", len(d.names))
	}
}

// A frame type this collector does not know (a newer library) is skipped and counted,
// not corrupt: the frames after it are read.
func TestDecodeSkipsUnknownFrameTypes(t *testing.T) {
	s, d, err := decodeFrames(t, func(w *writer) {
		w.must(t, FrameBatch, 0, batchBody(Batch{}))
		w.must(t, FrameType(7), 0, make([]byte, 40))
		w.must(t, FrameType(0xffff), 3, nil)
		w.must(t, FrameAPI, 0, apiBody(&API{CBID: 9}))
	})
	if err != nil {
		t.Fatal(err)
	}
	if ds := d.Stats(); ds.UnknownFrameType != 2 || ds.Corrupt != 0 || len(s.apis) != 1 || s.apis[0].CBID != 9 {
		t.Fatalf("stats %+v", ds)
	}
}

// Bodies longer than their struct (a kernel frame's padding; fields a later version
// appends) are read, not refused.
func TestDecodeLongerBodies(t *testing.T) {
	s, d, err := decodeFrames(t, func(w *writer) {
		w.must(t, FrameBatch, 0, append(batchBody(Batch{MonoBefore: 8, MonoAfter: 8}), make([]byte, 16)...))
		w.must(t, FrameCopy, 0, append(copyBody(&Copy{Start: 2, Bytes: 9}), 1, 2, 3, 4, 5, 6, 7, 8))
	})
	if err != nil || d.Stats().Corrupt != 0 || len(s.copies) != 1 || s.copies[0].Start != 10 || s.copies[0].Bytes != 9 {
		t.Fatalf("%v %+v %+v", err, d.Stats(), s.copies)
	}
}
