//go:build linux

package probe

import (
	"bytes"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/ghostdriver/ghostdriver/internal/event"
)

func sampleBytes[T any](r *T) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(r)), unsafe.Sizeof(*r))
}

func cstr16(s string) (out [16]int8) {
	for i := 0; i < len(s) && i < 15; i++ {
		out[i] = int8(s[i])
	}
	return out
}

// A hand-built job record of a 6.17+ job decodes to the events the per-event hooks send,
// in time order: values written here by hand, not taken from the decoder's tables.
func TestJobRecordDecode(t *testing.T) {
	d := &decoder{}
	jd := newJobDecoder(d)
	names := jobsJobNamesRecord{Ts: 1, Sched: 0xffff0001, Magic: 0x6a6e616d, Ring: cstr16("vgpu-ring0"), Dev: cstr16("vgpu.0")}
	var bad []string
	onBad := func(n string, err error) { bad = append(bad, n+": "+err.Error()) }
	if out := jd.decode(sampleBytes(&names), nil, onBad); len(out) != 0 {
		t.Fatalf("names record gave events %+v", out)
	}
	r := jobsJobRecord{FenceCtx: 41, FenceSeqno: 7, Sched: 0xffff0001, Entity: 0xe0, ClientId: 5, JobPtr: 0x10, DonePtr: 0x20,
		HwEmitCtx: 90, HwEmitSeqno: 3, HwInitCtx: 90, HwInitSeqno: 3, HwSigCtx: 90, HwSigSeqno: 3,
		DoneHwCtx: 90, DoneHwSeqno: 3, Comm: cstr16("vgpu_app")}
	r.Flags = uint16(jobsJobFlagJF_DONE_HW)
	set := func(slot jobsJobSlot, ts uint64, tid uint32, cpu uint32, hook commonHook) {
		r.St[slot].Ts, r.St[slot].PidTgid, r.St[slot].Cpu, r.St[slot].Hook = ts, uint64(100)<<32|uint64(tid), cpu, uint16(hook)
		r.Slots |= 1 << slot
	}
	// deliberately out of slot order in time: HW_EMIT before HW_INIT is impossible in the
	// kernel, but the decoder must sort by time whatever the slot order
	set(jobsJobSlotJS_QUEUE, 1000, 101, 0, 14)      // drm_sched_job_queue
	set(jobsJobSlotJS_RUN, 2000, 7, 1, 15)          // drm_sched_job_run
	set(jobsJobSlotJS_HW_INIT, 2100, 7, 1, 20)      // dma_fence_init
	set(jobsJobSlotJS_HW_EMIT, 2200, 7, 1, 21)      // dma_fence_emit
	set(jobsJobSlotJS_SCHED_SIGNAL, 2300, 7, 1, 23) // dma_fence_signaled
	set(jobsJobSlotJS_HW_SIGNAL, 5000, 0, 0, 23)    // dma_fence_signaled (hard IRQ)
	set(jobsJobSlotJS_DONE, 5010, 0, 0, 16)         // drm_sched_job_done
	set(jobsJobSlotJS_FIN_SIGNAL, 5020, 0, 0, 23)   // dma_fence_signaled
	out := jd.decode(sampleBytes(&r), nil, onBad)
	if len(bad) != 0 {
		t.Fatal(bad)
	}
	fin := event.FenceKey{Context: 41, Seqno: 7}
	hw := event.FenceKey{Context: 90, Seqno: 3}
	want := []struct {
		kind  event.Kind
		name  string
		time  int64
		tid   uint32
		fence event.FenceKey
	}{
		{event.JobQueue, "drm_sched_job_queue", 1000, 101, fin},
		{event.JobRun, "drm_sched_job_run", 2000, 7, fin},
		{event.FenceInit, "dma_fence_init", 2100, 7, hw},
		{event.FenceEmit, "dma_fence_emit", 2200, 7, hw},
		{event.FenceSignaled, "dma_fence_signaled", 2300, 7, event.FenceKey{Context: 40, Seqno: 7}}, // scheduled fence
		{event.FenceSignaled, "dma_fence_signaled", 5000, 0, hw},
		{event.JobDone, "drm_sched_job_done", 5010, 0, fin},
		{event.FenceSignaled, "dma_fence_signaled", 5020, 0, fin},
	}
	if len(out) != len(want) {
		t.Fatalf("%d events, want %d: %+v", len(out), len(want), out)
	}
	for i, w := range want {
		e := out[i]
		if e.Kind != w.kind || e.Name != w.name || e.Time != w.time || e.TID != w.tid || e.PID != 100 || e.Fence != w.fence || !e.FenceWide {
			t.Errorf("event %d: got %v %s t=%d tid=%d pid=%d fence=%v wide=%v, want %v %s t=%d tid=%d fence=%v",
				i, e.Kind, e.Name, e.Time, e.TID, e.PID, e.Fence, e.FenceWide, w.kind, w.name, w.time, w.tid, w.fence)
		}
	}
	q, run, done := out[0], out[1], out[6]
	if q.Ring != "vgpu-ring0" || q.Device != "vgpu.0" || q.Comm != "vgpu_app" || q.Entity != 0xe0 || q.ClientID != 5 {
		t.Errorf("queue event %+v", q)
	}
	if run.Ring != "vgpu-ring0" || run.Comm != "" || !run.HWFence.IsZero() {
		t.Errorf("run event %+v", run)
	}
	if done.HWFence != hw || done.Ring != "" || done.FencePtr != 0 || done.ClientID != 5 {
		t.Errorf("done event %+v (6.17 done carries no fence pointer)", done)
	}
	if jd.jobs != 1 || jd.namesRecs != 1 {
		t.Errorf("counted %d jobs %d names", jd.jobs, jd.namesRecs)
	}

	// A stamp sent alone (the jobs map was full) decodes to its one event and is counted.
	alone := jobsJobRecord{FenceCtx: 41, FenceSeqno: 8, Flags: uint16(jobsJobFlagJF_NO_STATE)}
	alone.St[jobsJobSlotJS_DONE] = r.St[jobsJobSlotJS_DONE]
	alone.St[jobsJobSlotJS_DONE].Hook = 12 // drm_sched_process_job (<= 6.16): the fence pointer is its identity
	alone.DonePtr = 0x20
	alone.Slots = 1 << jobsJobSlotJS_DONE
	out = jd.decode(sampleBytes(&alone), nil, onBad)
	if len(out) != 1 || out[0].Kind != event.JobDone || out[0].Name != "drm_sched_process_job" || out[0].FencePtr != 0x20 ||
		out[0].Fence != (event.FenceKey{Context: 41, Seqno: 8}) || jd.partial != 1 {
		t.Fatalf("alone: %+v (partial %d)", out, jd.partial)
	}

	// Any other sample still goes to the per-event decoder; a short one is reported.
	out = jd.decode(make([]byte, 12), nil, onBad)
	if len(out) != 0 || len(bad) != 1 {
		t.Fatalf("short sample: %+v, bad %v", out, bad)
	}
}

// The reader hands held events over in time order across batches: a job record decoded
// after the ioctl exit that follows its queue event must not reach the sink in a later
// batch than that exit (the assembler releases a batch's past after each batch).
func TestJobsHandOverInTimeOrder(t *testing.T) {
	r := &jobsReader{}
	r.held.holdEvents([]event.Event{{Kind: event.IoctlExit, Time: 3000}})
	for i := 0; i < maxBatch+10; i++ { // other threads' events, in between
		r.held.holdEvents([]event.Event{{Kind: event.IoctlEnter, Time: int64(4000 + i)}})
	}
	r.held.holdEvents([]event.Event{{Kind: event.JobQueue, Time: 2000}}) // from the job record
	r.held.holdEvents([]event.Event{{Kind: event.JobDone, Time: 9_000_000}})
	var got []event.Event
	batches := 0
	r.handOver(1_000_000, nil, func(b []event.Event) {
		if len(b) > maxBatch {
			t.Errorf("batch of %d", len(b))
		}
		batches++
		got = append(got, b...)
	})
	if len(got) != maxBatch+12 || batches != 2 {
		t.Fatalf("handed %d events in %d batches", len(got), batches)
	}
	for i := 1; i < len(got); i++ {
		if got[i].Time < got[i-1].Time {
			t.Fatalf("event %d (%v at %d) handed after %v at %d", i, got[i].Kind, got[i].Time, got[i-1].Kind, got[i-1].Time)
		}
	}
	if r.held.items() != 1 || len(r.held.evs) != 1 || r.held.evs[0].Kind != event.JobDone {
		t.Fatalf("kept %+v, want the event after the bound", r.held.evs)
	}
}

// The reader holds ring samples as they came (jobs_held.go) and decodes them when they are
// handed over: a job record whose stamps lie on both sides of the bound hands over the
// earlier ones and keeps the later ones (as events); a record after the bound stays a raw
// sample; a names record is read at once, so the job record decoded later has its ring.
// Every event comes out once, in time order, decoded as the decoder decodes it.
func TestJobsHeldSamples(t *testing.T) {
	r := &jobsReader{dec: newJobDecoder(&decoder{})}
	var bad []string
	r.bad = func(n string, err error) { bad = append(bad, n+": "+err.Error()) }
	names := jobsJobNamesRecord{Ts: 1, Sched: 0xffff0001, Magic: 0x6a6e616d, Ring: cstr16("vgpu-ring0")}
	exit := commonIoctlExitRecord{Ts: 1500, PidTgid: 100<<32 | 101, Hook: uint16(commonHookHOOK_DRM_IOCTL_EXIT)}
	job := jobsJobRecord{FenceCtx: 41, FenceSeqno: 7, Sched: 0xffff0001}
	for slot, ts := range map[jobsJobSlot]uint64{jobsJobSlotJS_QUEUE: 1000, jobsJobSlotJS_RUN: 2000, jobsJobSlotJS_DONE: 5010} {
		hook := map[jobsJobSlot]commonHook{jobsJobSlotJS_QUEUE: 14, jobsJobSlotJS_RUN: 15, jobsJobSlotJS_DONE: 16}[slot]
		job.St[slot].Ts, job.St[slot].Hook = ts, uint16(hook)
		job.Slots |= 1 << slot
	}
	sig := commonFenceRecord{Ts: 4000, FenceCtx: 90, FenceSeqno: 3, Hook: uint16(commonHookHOOK_DMA_FENCE_SIGNALED),
		Flags: uint8(commonRecordFlagRF_HAS_FENCE | commonRecordFlagRF_FENCE_WIDE)}
	samples := [][]byte{sampleBytes(&names), sampleBytes(&exit), sampleBytes(&job), sampleBytes(&sig)}
	for _, b := range samples {
		r.hold(b)
		clear(b) // the ring's bytes are reused once read: the store must have copied them
	}
	// Packed without their zero words, counted here by hand: the exit record has 3 nonzero
	// words of 5 (ts, pid_tgid, cpu+hook: a bitmap word more is 32 bytes), the job record 10
	// of 45 (key, sched, three stamps' ts and cpu+hook words, slots: 88 bytes); the fence
	// record has 4 of 6 (ts, key, cpu+hook+flags), which packed would be 40 of 48 bytes...
	// 40 < 48, so packed too. Each an item entry more.
	if want := (1+3)*8 + (1+10)*8 + (1+4)*8 + 3*heldRefSize; r.held.items() != 3 || r.held.bytes() != want {
		t.Fatalf("held %d items in %d bytes, want 3 packed samples in %d", r.held.items(), r.held.bytes(), want)
	}
	var got []event.Event
	deliver := func(b []event.Event) { got = append(got, b...) }
	r.handOver(3000, nil, deliver)
	if len(got) != 3 || got[0].Time != 1000 || got[1].Time != 1500 || got[2].Time != 2000 ||
		got[0].Kind != event.JobQueue || got[1].Kind != event.IoctlExit || got[2].Kind != event.JobRun || got[2].Ring != "vgpu-ring0" {
		t.Fatalf("before the bound: %+v", got)
	}
	// kept: the job record's done stamp (an event now) and the fence record (raw)
	if r.held.items() != 2 || len(r.held.evs) != 1 || len(r.held.arena) != (1+4)*8 {
		t.Fatalf("kept %d items (%d events, %d sample bytes)", r.held.items(), len(r.held.evs), len(r.held.arena))
	}
	got = got[:0]
	r.handOver(1<<63-1, nil, deliver)
	if len(got) != 2 || got[0].Time != 4000 || got[0].Kind != event.FenceSignaled || got[0].Fence != (event.FenceKey{Context: 90, Seqno: 3}) ||
		got[1].Time != 5010 || got[1].Kind != event.JobDone {
		t.Fatalf("after the bound: %+v", got)
	}
	if r.held.items() != 0 || r.held.bytes() != 0 || len(bad) != 0 || r.dec.jobs != 1 {
		t.Fatalf("left %d items, %d bytes; bad %v; job records %d", r.held.items(), r.held.bytes(), bad, r.dec.jobs)
	}
}

// Packing drops zero words and unpacking gives the sample back, byte for byte, for samples
// of every shape: word-aligned or not, longer than the bitmap covers, all zero, all set.
func TestHeldPackRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 5000; i++ {
		n := 1 + rng.IntN(700)
		if i%3 == 0 {
			n = 8 * (1 + rng.IntN(70)) // word-aligned, some beyond 64 words
		}
		b := make([]byte, n)
		zeroes := rng.IntN(3) // 0: all set, 1: random zero words, 2: all zero
		for w := 0; w < n; w += 8 {
			if zeroes == 2 || zeroes == 1 && rng.IntN(2) == 0 {
				continue
			}
			for k := w; k < min(w+8, n); k++ {
				b[k] = byte(1 + rng.IntN(255))
			}
		}
		p := pack(nil, b)
		if got := unpack(nil, p, n); !bytes.Equal(got, b) {
			t.Fatalf("sample %d (%d bytes): unpacked %x, want %x", i, n, got, b)
		}
		if n%8 == 0 && n/8 <= maxPackedWords && n > 8 && zeroes == 2 && len(p) != 8 {
			t.Fatalf("all-zero %d-byte sample packed into %d bytes", n, len(p))
		}
		if len(p) > n {
			t.Fatalf("%d-byte sample packed into %d bytes", n, len(p))
		}
	}
}
