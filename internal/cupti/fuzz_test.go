// FuzzRingDrain: the mapping is the application's memory, any bytes at all. Draining
// arbitrary header and ring bytes must never panic, never loop, always end with tail =
// the head it loaded, and never hand on more frames than the pending bytes can hold.
package cupti

import (
	"testing"
)

// fuzzSink counts, and reads every field so that a bad slice bound would show.
type fuzzSink struct{ n int }

func (s *fuzzSink) Kernel(_ uint32, k *Kernel) { s.n += len(k.Name) + 1 }
func (s *fuzzSink) API(uint32, *API)           { s.n++ }
func (s *fuzzSink) Copy(uint32, *Copy)         { s.n++ }
func (s *fuzzSink) State(uint32, StateChange)  { s.n++ }
func (s *fuzzSink) Batch(uint32, Batch)        { s.n++ }
func (s *fuzzSink) Device(uint32, Device)      { s.n++ }

// FuzzRingDrain's input: hdr over the header from offset 24 (past the fields NewRing
// validates, unless raw: then from 0), ring written at tail's ring offset (wrapping),
// head = tail + len(ring) + 8·delta.
func FuzzRingDrain(f *testing.F) {
	for _, seed := range fuzzSeeds() {
		f.Add(seed.hdr, seed.ring, seed.tail, seed.delta, false)
	}
	f.Add([]byte(Magic), []byte{}, uint64(0), int16(0), true)
	f.Fuzz(func(t *testing.T, hdr, ring []byte, tail uint64, delta int16, raw bool) {
		mem := newChannelMem(RingMin, testPID)
		at := 24
		if raw {
			at = 0
		}
		copy(mem[at:HeaderSize], hdr)
		r, err := NewRing(mem)
		if err != nil {
			return // the header's checks are the test: they did not panic
		}
		size := r.Size()
		ringBytes := mem[HeaderSize : HeaderSize+size]
		for i, b := range ring[:min(uint64(len(ring)), size)] {
			ringBytes[(tail+uint64(i))&(size-1)] = b
		}
		head := tail + uint64(len(ring)) + uint64(int64(delta)*8)
		le.PutUint64(mem[hdrHead:], head)
		le.PutUint64(mem[hdrTail:], tail)
		_, _, _, _ = r.StateMsg(), r.CUPTIPath(), r.Counters(), r.LibState().String()

		var s fuzzSink
		d := NewDecoder(testPID, &s)
		n, _ := r.Drain(d.Frame)
		if r.Tail() != head {
			t.Fatalf("tail %d after the drain, head %d", r.Tail(), head)
		}
		if pending := head - tail; pending <= size && uint64(n) > pending/SizeofFrame {
			t.Fatalf("%d frames from %d bytes", n, pending)
		}
		if n, err := r.Drain(d.Frame); n != 0 || err != nil {
			t.Fatalf("a second drain: %d frames, %v", n, err)
		}
	})
}

type fuzzSeed struct {
	hdr, ring []byte
	tail      uint64
	delta     int16
}

// fuzzSeeds are valid rings the writer made: every frame type, a PAD and a wrap.
func fuzzSeeds() []fuzzSeed {
	var seeds []fuzzSeed
	build := func(start uint64, write func(w *writer)) {
		mem := newChannelMem(RingMin, testPID)
		le.PutUint64(mem[hdrHead:], start)
		le.PutUint64(mem[hdrTail:], start)
		w := newWriter(mem)
		write(w)
		ring := make([]byte, w.head-start)
		for i := range ring {
			ring[i] = mem[HeaderSize+(start+uint64(i))&(RingMin-1)]
		}
		seeds = append(seeds, fuzzSeed{hdr: nil, ring: ring, tail: start})
	}
	all := func(w *writer) {
		w.frame(FrameState, 0, stateBody(StateChange{Mono: 1, State: StateOn}))
		w.frame(FrameBatch, 0, batchBody(Batch{MonoBefore: 100, CuptiAt: 1000, MonoAfter: 110, Records: 3}))
		w.frame(FrameKernel, KernelNameTruncated, kernelBody(&Kernel{Start: 1001, End: 1002, Grid: [3]uint32{1, 2, 3}, Name: "kernel"}, -1))
		w.frame(FrameAPI, 0, apiBody(&API{Start: 1003, End: 1004, CBID: 13}))
		w.frame(FrameCopy, 0, copyBody(&Copy{Start: 1005, End: 1006, Bytes: 4096, What: CopyMemcpy}))
		w.frame(FrameType(7), 0, []byte("future"))
	}
	build(0, all)
	build(RingMin-64, all)                 // a PAD at the end, the rest from 0
	build(3*RingMin+128, func(w *writer) { // a later lap
		w.frame(FrameBatch, 0, batchBody(Batch{}))
		w.frame(FrameKernel, 0, kernelBody(&Kernel{Name: "n"}, 1024))
	})
	return seeds
}
