// The ring's framing on Go slices: header validation, order, PAD and wrap-around,
// windows of a large ring, every corrupt input counted and resynchronized, the header's
// fields and the collector's writes.
package cupti

import (
	"errors"
	"strings"
	"testing"
)

const testPID = 4242

// Each header check names the field and the value it found.
func TestNewRingValidatesTheHeader(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(mem []byte) []byte
		want string
	}{
		{"magic", func(m []byte) []byte { copy(m, "GDCUPTI2"); return m }, `magic is "GDCUPTI2"`},
		{"version", func(m []byte) []byte { le.PutUint32(m[hdrVersion:], 2); return m }, "version is 2"},
		{"header_size", func(m []byte) []byte { le.PutUint32(m[hdrHeaderSize:], 8192); return m }, "header_size is 8192"},
		{"small ring", func(m []byte) []byte { le.PutUint64(m[hdrRingSize:], 32<<10); return m }, "ring_size is 32768, outside"},
		{"large ring", func(m []byte) []byte { le.PutUint64(m[hdrRingSize:], 512<<20); return m }, "ring_size is 536870912, outside"},
		{"not a power of two", func(m []byte) []byte { le.PutUint64(m[hdrRingSize:], 96<<10); return m }, "ring_size is 98304, not a power of two"},
		{"short mapping", func(m []byte) []byte { return m[:HeaderSize+RingMin-8] }, "the mapping is 69624 bytes, less than header_size 4096 + ring_size 65536"},
		{"no header page", func(m []byte) []byte { return m[:100] }, "the mapping is 100 bytes, shorter than the 4096-byte header page"},
		{"misaligned", func(m []byte) []byte { return m[4:] }, "not 8-byte aligned"},
	} {
		t.Run(c.name, func(t *testing.T) {
			mem := c.edit(newChannelMem(RingMin, testPID))
			r, err := NewRing(mem)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("NewRing = %v, %v; want an error with %q", r, err, c.want)
			}
		})
	}
	if _, err := NewRing(newChannelMem(RingMax, testPID)); err != nil {
		t.Fatalf("the largest ring: %v", err)
	}
}

// drainAll drains r into a fresh decoder of testPID, failing on an error.
func drainAll(t *testing.T, r *Ring, d *Decoder) int {
	t.Helper()
	n, err := r.Drain(d.Frame)
	if err != nil {
		t.Fatalf("Drain: %v", err)
	}
	return n
}

func TestDrainHandsFramesOnInOrder(t *testing.T) {
	mem := newChannelMem(RingMin, testPID)
	w := newWriter(mem)
	w.must(t, FrameState, 0, stateBody(StateChange{Mono: 7, State: StateOn}))
	w.must(t, FrameBatch, 0, batchBody(Batch{MonoBefore: 100, CuptiAt: 1000, MonoAfter: 100}))
	w.must(t, FrameKernel, 0, kernelBody(&Kernel{Start: 1001, End: 1002, Name: "k"}, -1))
	w.must(t, FrameAPI, 0, apiBody(&API{Start: 1003, End: 1004}))
	w.must(t, FrameCopy, 0, copyBody(&Copy{Start: 1005, End: 1006}))
	r, err := NewRing(mem)
	if err != nil {
		t.Fatal(err)
	}
	var s recSink
	d := NewDecoder(testPID, &s)
	if n := drainAll(t, r, d); n != 0 {
		t.Fatalf("before head was published: %d frames", n)
	}
	w.publish()
	if n := drainAll(t, r, d); n != 5 {
		t.Fatalf("drained %d frames, want 5", n)
	}
	want := []FrameType{FrameState, FrameBatch, FrameKernel, FrameAPI, FrameCopy}
	if !equal(s.order, want) {
		t.Fatalf("order %v, want %v", s.order, want)
	}
	if r.Tail() != w.head || r.Head() != w.head {
		t.Fatalf("tail %d head %d, want both %d", r.Tail(), r.Head(), w.head)
	}
	if n := drainAll(t, r, d); n != 0 {
		t.Fatalf("a second drain: %d frames", n)
	}
	if st := r.Stats(); st.Frames != 5 || st.Bytes != w.head || st.Corrupt != 0 || st.Pads != 0 {
		t.Fatalf("stats %+v", st)
	}
	for _, p := range s.pids {
		if p != testPID {
			t.Fatalf("sink pid %d", p)
		}
	}
}

func equal[T comparable](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Frames fill the ring to near its end; the next does not fit before it: the producer
// pads and wraps, and the consumer skips the PAD and reads on from offset 0, several
// times round.
func TestDrainWrapsAround(t *testing.T) {
	mem := newChannelMem(RingMin, testPID)
	w := newWriter(mem)
	r, err := NewRing(mem)
	if err != nil {
		t.Fatal(err)
	}
	var s recSink
	d := NewDecoder(testPID, &s)
	w.must(t, FrameBatch, 0, batchBody(Batch{MonoBefore: 10, CuptiAt: 10, MonoAfter: 10}))
	want := 0
	name := strings.Repeat("n", 300) // 8+88+300 → 400-byte frames: 65536 is no multiple
	for round := 0; round < 5; round++ {
		for w.frame(FrameKernel, 0, kernelBody(&Kernel{Start: int64(want + 1), Name: name}, -1)) {
			want++
		}
		w.publish()
		drainAll(t, r, d)
	}
	if len(s.kernels) != want || want < 5*RingMin/400-5 {
		t.Fatalf("%d kernels read, %d written", len(s.kernels), want)
	}
	for i, k := range s.kernels {
		if k.Start != int64(i+1) || k.Name != name {
			t.Fatalf("kernel %d: start %d name %q", i, k.Start, k.Name[:min(10, len(k.Name))])
		}
	}
	if st := r.Stats(); st.Pads < 4 || st.Corrupt != 0 || r.Tail() != w.head || w.head <= 4*RingMin {
		t.Fatalf("stats %+v, tail %d, head %d", st, r.Tail(), w.head)
	}
}

// A ring larger than a drain window is read in windows; a frame larger than a window
// (an unknown type of a later library) is copied alone and skipped, a PAD larger than
// one is skipped without being copied.
func TestDrainWindowsOfALargeRing(t *testing.T) {
	const size = 4 * drainChunk
	mem := newChannelMem(size, testPID)
	w := newWriter(mem)
	r, err := NewRing(mem)
	if err != nil {
		t.Fatal(err)
	}
	var s recSink
	d := NewDecoder(testPID, &s)
	w.must(t, FrameBatch, 0, batchBody(Batch{MonoBefore: 10, CuptiAt: 10, MonoAfter: 10}))
	kernels := 0
	for w.head < drainChunk-200 {
		w.must(t, FrameKernel, 0, kernelBody(&Kernel{Start: int64(kernels + 1), Name: "a"}, -1))
		kernels++
	}
	// Straddles the first window's end.
	if !w.raw(FrameType(99), 0, drainChunk+drainChunk/2, nil) {
		t.Fatal("no room")
	}
	w.must(t, FrameKernel, 0, kernelBody(&Kernel{Start: -1, Name: "after"}, -1))
	w.publish()
	drainAll(t, r, d)
	// A PAD from inside the third window to the ring's end, then frames from 0.
	w.must(t, FrameKernel, 0, kernelBody(&Kernel{Start: -2, Name: "before pad"}, -1))
	// Does not fit before the end: a PAD of more than a window first, then the frame at 0.
	if !w.raw(FrameType(98), 0, uint32(size-w.head&(size-1)+8), nil) || w.head&(size-1) == 0 {
		t.Fatal("no wrap")
	}
	for w.frame(FrameKernel, 0, kernelBody(&Kernel{Start: -3, Name: "wrapped"}, -1)) {
		if w.head&(size-1) > drainChunk {
			break
		}
	}
	w.publish()
	drainAll(t, r, d)
	st, ds := r.Stats(), d.Stats()
	if st.Corrupt != 0 || ds.Corrupt != 0 || ds.UnknownFrameType != 2 || st.Pads != 1 || r.Tail() != w.head {
		t.Fatalf("ring %+v decoder %+v tail %d head %d", st, ds, r.Tail(), w.head)
	}
	if len(s.kernels) < kernels+3 || s.kernels[kernels].Name != "after" || s.kernels[kernels+1].Name != "before pad" || s.kernels[kernels+2].Name != "wrapped" {
		t.Fatalf("%d kernels, %d before the big frame", len(s.kernels), kernels)
	}
	if cap(r.buf) > drainChunk {
		t.Fatalf("copy buffer of %d bytes kept", cap(r.buf))
	}
}

// Every framing error is counted once, drops what is pending from the bad frame to
// head (the frames before it are handed on), never panics, and the ring reads again
// from the new tail.
func TestDrainCorruptFramesDropTheRest(t *testing.T) {
	good := func(w *writer) { w.frame(FrameState, 0, stateBody(StateChange{Mono: 1})) }
	for _, c := range []struct {
		name        string
		write       func(w *writer) // after one good frame
		ringCorrupt uint64          // the ring's count (the decoder's otherwise)
		handed      int             // frames handed on
	}{
		{"len 0", func(w *writer) { w.raw(FrameState, 0, 24, nil); le.PutUint32(w.ring(w.head-24), 0) }, 1, 1},
		{"len 4", func(w *writer) { w.raw(FrameState, 0, 24, nil); le.PutUint32(w.ring(w.head-24), 4) }, 1, 1},
		{"len not a multiple of 8", func(w *writer) { w.raw(FrameState, 0, 24, nil); le.PutUint32(w.ring(w.head-24), 20) }, 1, 1},
		{"past head", func(w *writer) { w.raw(FrameState, 0, 24, nil); le.PutUint32(w.ring(w.head-24), 4096) }, 1, 1},
		{"crossing the end", func(w *writer) { // at the ring's last 8 bytes, claiming 24
			putFrameHead(w.ring(w.head), 24, FrameState, 0)
			w.head += 24
		}, 1, 1},
		{"kernel name_len past the frame", func(w *writer) {
			w.frame(FrameKernel, 0, kernelBody(&Kernel{Name: "abc"}, 100))
		}, 0, 2},
		{"kernel name_len over NameMax", func(w *writer) {
			k := &Kernel{Name: strings.Repeat("x", NameMax+8)}
			w.frame(FrameKernel, 0, kernelBody(k, NameMax+1))
		}, 0, 2},
		{"kernel body short", func(w *writer) { w.frame(FrameKernel, 0, make([]byte, SizeofKernel-8)) }, 0, 2},
		{"batch body short", func(w *writer) { w.frame(FrameBatch, 0, make([]byte, 8)) }, 0, 2},
		{"api body short", func(w *writer) { w.frame(FrameAPI, 0, make([]byte, SizeofAPI-8)) }, 0, 2},
		{"copy body short", func(w *writer) { w.frame(FrameCopy, 0, make([]byte, SizeofCopy-8)) }, 0, 2},
		{"state body short", func(w *writer) { w.frame(FrameState, 0, make([]byte, 8)) }, 0, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			mem := newChannelMem(RingMin, testPID)
			if c.name == "crossing the end" { // a lap done: the good frame ends 8 bytes before the end
				le.PutUint64(mem[hdrHead:], RingMin-32)
				le.PutUint64(mem[hdrTail:], RingMin-32)
			}
			w := newWriter(mem)
			r, err := NewRing(mem)
			if err != nil {
				t.Fatal(err)
			}
			var s recSink
			d := NewDecoder(testPID, &s)
			good(w)
			c.write(w)
			good(w) // after the bad frame: dropped
			w.publish()
			n, err := r.Drain(d.Frame)
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("Drain error %v, want ErrCorrupt", err)
			}
			st, ds := r.Stats(), d.Stats()
			if n != c.handed || st.Corrupt != c.ringCorrupt || ds.Corrupt != 1-c.ringCorrupt || r.Tail() != w.head || st.DroppedBytes == 0 {
				t.Fatalf("%v: handed %d, ring %+v, decoder corrupt %d, tail %d head %d", err, n, st, ds.Corrupt, r.Tail(), w.head)
			}
			// Resynchronized: what is written next is read.
			good(w)
			w.publish()
			if n := drainAll(t, r, d); n != 1 {
				t.Fatalf("after the corrupt frame: %d frames", n)
			}
		})
	}
}

func (w *writer) ring(at uint64) []byte { return w.mem[HeaderSize+at&(w.size-1):] }

// head and tail out of range, either way, or misaligned: counted, tail = head.
func TestDrainCorruptHeadTail(t *testing.T) {
	for _, c := range []struct {
		name       string
		head, tail uint64
	}{
		{"head-tail > ring_size", RingMin + 8, 0},
		{"head < tail", 64, 128},
		{"head misaligned", 68, 0},
		{"tail misaligned", 64, 4},
		{"huge", 1 << 63, 8},
	} {
		t.Run(c.name, func(t *testing.T) {
			mem := newChannelMem(RingMin, testPID)
			le.PutUint64(mem[hdrHead:], c.head)
			le.PutUint64(mem[hdrTail:], c.tail)
			r, err := NewRing(mem)
			if err != nil {
				t.Fatal(err)
			}
			n, err := r.Drain(func(Frame) error { t.Fatal("a frame"); return nil })
			if n != 0 || !errors.Is(err, ErrCorrupt) || r.Stats().Corrupt != 1 || r.Tail() != c.head {
				t.Fatalf("n %d err %v stats %+v tail %d", n, err, r.Stats(), r.Tail())
			}
		})
	}
	// Exactly ring_size pending is a full ring, not a corrupt one.
	mem := newChannelMem(RingMin, testPID)
	w := newWriter(mem)
	for w.raw(FrameState, 0, 32, stateBody(StateChange{})) {
	}
	w.publish()
	r, _ := NewRing(mem)
	if r.Head()-r.Tail() != RingMin {
		t.Fatalf("pending %d", r.Head()-r.Tail())
	}
	if n, err := r.Drain(func(Frame) error { return nil }); err != nil || n != RingMin/32 {
		t.Fatalf("full ring: %d frames, %v", n, err)
	}
}

// The header's library fields read back; the collector's writes land where the
// library reads them.
func TestHeaderFields(t *testing.T) {
	mem := newChannelMem(RingMin, testPID)
	le.PutUint32(mem[hdrLibState:], uint32(StateBackedOff))
	le.PutUint32(mem[hdrCuptiVersion:], 130001)
	le.PutUint32(mem[hdrKernelRecordSize:], 208)
	for i, o := range []int{hdrRecordsWritten, hdrDroppedRingFull, hdrDroppedCupti, hdrRefusedLayout, hdrBatches,
		hdrEnables, hdrDisables, hdrBackoffs, hdrBuffersRefused, hdrNamesTruncated, hdrAPIFiltered} {
		le.PutUint64(mem[o:], uint64(i+1)*11)
	}
	copy(mem[hdrCuptiPath:], "/usr/local/cuda/lib64/libcupti.so.13\x00junk")
	copy(mem[hdrStateMsg:], strings.Repeat("m", hdrTextLen)) // no NUL: bounded by the field
	mem[hdrStateMsg+10] = 0xff                               // not UTF-8
	r, err := NewRing(mem)
	if err != nil {
		t.Fatal(err)
	}
	want := Counters{11, 22, 33, 44, 55, 66, 77, 88, 99, 110, 121}
	if r.PID() != testPID || r.LibState() != StateBackedOff || r.CUPTIVersion() != 130001 || r.KernelRecordSize() != 208 || r.Counters() != want {
		t.Fatalf("pid %d state %v version %d record %d counters %+v", r.PID(), r.LibState(), r.CUPTIVersion(), r.KernelRecordSize(), r.Counters())
	}
	if p := r.CUPTIPath(); p != "/usr/local/cuda/lib64/libcupti.so.13" {
		t.Fatalf("cupti path %q", p)
	}
	if m := r.StateMsg(); m != strings.Repeat("m", 10)+"\uFFFD"+strings.Repeat("m", hdrTextLen-11) {
		t.Fatalf("state msg %q", m)
	}
	if r.Control() || r.ControlSeq() != 0 || !r.Acked() {
		t.Fatal("a new header asks for nothing")
	}
	r.SetControl(true)
	r.SetControl(false)
	r.SetControl(true)
	if le.Uint32(mem[hdrControl:]) != ControlOn || le.Uint32(mem[hdrControlSeq:]) != 3 || !r.Control() || r.Acked() {
		t.Fatalf("control %d seq %d", le.Uint32(mem[hdrControl:]), le.Uint32(mem[hdrControlSeq:]))
	}
	le.PutUint32(mem[hdrLibSeenSeq:], 3)
	if !r.Acked() || r.LibSeenSeq() != 3 {
		t.Fatal("the library acted on seq 3")
	}
	r.Beat(123456789)
	if le.Uint64(mem[hdrCollectorBeat:]) != 123456789 || r.CollectorBeat() != 123456789 {
		t.Fatal("beat")
	}
	// ring_size is read once: the process changing it later moves nothing.
	le.PutUint64(mem[hdrRingSize:], 1<<40)
	if r.Size() != RingMin {
		t.Fatal("ring size re-read")
	}
}

func TestStateAndFrameNames(t *testing.T) {
	names := map[State]string{StateDormant: "dormant", StateOn: "on", StateBackedOff: "backed_off", StateUnsupported: "unsupported",
		StateNoCUPTI: "no_cupti", StateError: "error", StateOff: "off", 7: "state(7)"}
	for s, n := range names {
		if s.String() != n {
			t.Errorf("%d: %q, want %q", uint32(s), s.String(), n)
		}
	}
	if FrameKernel.String() != "kernel" || FrameType(9).String() != "frame(9)" {
		t.Error("frame names")
	}
}
