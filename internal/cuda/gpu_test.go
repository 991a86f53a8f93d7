// The fuser's join and release rules on hand-built timelines whose expected GPU work is
// written out by hand (µs arithmetic in the comments), not computed by the fuser's code.
package cuda

import (
	"testing"
)

const us = int64(1000)

// launchOp is a top-level cudaLaunchKernel call of pid 7 on stream 0x10.
func launchOp(start, end int64) Op {
	id := -1
	for i, a := range apis {
		if a.Name == "cudaLaunchKernel" {
			id = i
		}
	}
	return Op{Call: Call{API: id, PID: 7, TID: 70, Start: start, End: end, Stream: 0x10}}
}

func fuserWith(t *testing.T) (*Fuser, *[]*Submission) {
	t.Helper()
	var out []*Submission
	f := NewFuser(FuserConfig{}, func(s *Submission) { out = append(out, s) })
	return f, &out
}

func TestFuserJoinsKernelsByCorrelationAndWindow(t *testing.T) {
	f, out := fuserWith(t)
	f.State(GPUState{PID: 7, Mono: 1 * us, On: true})
	// Two launches 10 µs apart; their API records sit inside each op's window.
	s := &Submission{PID: 7, Stream: 0x10, Outcome: Synced, Start: 100 * us, End: 400 * us,
		Ops: []Op{launchOp(100*us, 105*us), launchOp(110*us, 115*us)}}
	f.API(GPUAPI{PID: 7, Start: 111 * us, End: 114 * us, Correlation: 21}) // out of order on purpose
	f.API(GPUAPI{PID: 7, Start: 101 * us, End: 104 * us, Correlation: 20})
	f.Kernel(GPUKernel{PID: 7, Correlation: 20, Start: 150 * us, End: 200 * us, Name: "gemm"})
	f.Kernel(GPUKernel{PID: 7, Correlation: 21, Start: 190 * us, End: 260 * us, Name: "softmax"})
	f.Submission(s)
	if len(*out) != 0 {
		t.Fatalf("released before its records' flush mark: %d", len(*out))
	}
	f.Mark(7, 399*us)
	if len(*out) != 0 {
		t.Fatalf("released by a mark before the sync's return")
	}
	f.Mark(7, 401*us)
	if len(*out) != 1 {
		t.Fatalf("not released by the mark after the sync's return")
	}
	w := (*out)[0].GPU
	if w == nil {
		t.Fatal("no GPU work")
	}
	// Kernels [150,200] and [190,260]: union 110 µs, window 150..260.
	if w.KernelCount != 2 || w.FirstStart != 150*us || w.LastEnd != 260*us || w.Busy != 110*us {
		t.Errorf("kernels %d first %d last %d busy %d, want 2, 150 µs, 260 µs, 110 µs", w.KernelCount, w.FirstStart, w.LastEnd, w.Busy)
	}
	// The first kernel is op 1's: the queue runs from its return (105 µs).
	if w.QueueFrom != 105*us || w.Matched != 2 || w.Unmatched != 0 || !w.Complete || w.ClockRuleViolations != 0 {
		t.Errorf("queue from %d matched %d unmatched %d complete %v violations %d", w.QueueFrom, w.Matched, w.Unmatched, w.Complete, w.ClockRuleViolations)
	}
	// softmax 70 µs > gemm 50 µs.
	if len(w.Top) != 2 || w.Top[0].Name != "softmax" || w.Top[0].Time != 70*us || w.Top[1].Name != "gemm" {
		t.Errorf("top kernels %+v", w.Top)
	}
}

func TestFuserGraphLaunchTakesEveryKernelOfItsCorrelation(t *testing.T) {
	f, out := fuserWith(t)
	f.State(GPUState{PID: 7, Mono: 0, On: true})
	f.API(GPUAPI{PID: 7, Start: 11 * us, End: 12 * us, Correlation: 5})
	for i, st := range []int64{20, 30, 45} { // 3 kernels of 5 µs: busy 15 µs
		f.Kernel(GPUKernel{PID: 7, Correlation: 5, Start: st * us, End: (st + 5) * us, GraphID: 1, Name: "node" + string(rune('a'+i))})
	}
	f.Kernel(GPUKernel{PID: 7, Correlation: 6, Start: 60 * us, End: 61 * us, Name: "other"}) // another launch's
	f.Submission(&Submission{PID: 7, Outcome: Synced, Start: 10 * us, End: 100 * us, Ops: []Op{launchOp(10*us, 13*us)}})
	f.Mark(7, 200*us)
	w := (*out)[0].GPU
	if w.KernelCount != 3 || w.Busy != 15*us || w.FirstStart != 20*us || w.LastEnd != 50*us {
		t.Errorf("graph: kernels %d busy %d window %d..%d, want 3, 15 µs, 20..50 µs", w.KernelCount, w.Busy, w.FirstStart, w.LastEnd)
	}
}

func TestFuserPassesUncoveredAtOnce(t *testing.T) {
	f, out := fuserWith(t)
	f.Submission(&Submission{PID: 8, Start: 1, End: 2}) // no channel at all
	f.State(GPUState{PID: 7, Mono: 500 * us, On: true})
	f.Submission(&Submission{PID: 7, Start: 100 * us, End: 200 * us}) // before the timeline came on
	f.State(GPUState{PID: 7, Mono: 600 * us, On: false})
	f.Submission(&Submission{PID: 7, Start: 700 * us, End: 800 * us}) // after it went off
	if len(*out) != 3 {
		t.Fatalf("%d of 3 uncovered submissions passed at once", len(*out))
	}
	for _, s := range *out {
		if s.GPU != nil {
			t.Errorf("uncovered submission at %d has GPU work", s.Start)
		}
	}
	if f.Stats.Uncovered != 3 {
		t.Errorf("Uncovered = %d, want 3", f.Stats.Uncovered)
	}
}

func TestFuserTimesOutIncompleteAndCountsClockRule(t *testing.T) {
	f, out := fuserWith(t)
	f.State(GPUState{PID: 7, Mono: 0, On: true})
	f.API(GPUAPI{PID: 7, Start: 11 * us, End: 12 * us, Correlation: 9})
	// Starts 2 µs before its launch entered (10 µs): a clock rule violation.
	f.Kernel(GPUKernel{PID: 7, Correlation: 9, Start: 8 * us, End: 30 * us})
	f.Submission(&Submission{PID: 7, Outcome: Synced, Start: 10 * us, End: 40 * us, Ops: []Op{launchOp(10*us, 13*us), launchOp(14*us, 15*us)}})
	f.Watermark(40*us + 1e9)
	if len(*out) != 0 {
		t.Fatal("released before MaxWait")
	}
	f.Watermark(40*us + 2e9 + 1)
	if len(*out) != 1 {
		t.Fatal("not released after MaxWait")
	}
	w := (*out)[0].GPU
	if w.Complete || w.ClockRuleViolations != 1 || w.Matched != 1 || w.Unmatched != 1 {
		t.Errorf("complete %v violations %d matched %d unmatched %d, want false 1 1 1", w.Complete, w.ClockRuleViolations, w.Matched, w.Unmatched)
	}
	if f.Stats.Incomplete != 1 || f.Stats.ClockRuleViolations != 1 {
		t.Errorf("stats %+v", f.Stats)
	}
}

func TestFuserAPIRecordOutsideEveryWindowIsNotTaken(t *testing.T) {
	f, out := fuserWith(t)
	f.State(GPUState{PID: 7, Mono: 0, On: true})
	// 100 µs after the op returned: farther than the tolerance, another call's.
	f.API(GPUAPI{PID: 7, Start: 113 * us, End: 114 * us, Correlation: 3})
	f.Kernel(GPUKernel{PID: 7, Correlation: 3, Start: 120 * us, End: 130 * us})
	f.Submission(&Submission{PID: 7, Outcome: Synced, Start: 10 * us, End: 200 * us, Ops: []Op{launchOp(10*us, 13*us)}})
	f.Gone(7)
	w := (*out)[0].GPU
	f.Watermark(200*us + 3e9) // forgotten MaxWait after it went: its kernel counted as no one's
	if w.Matched != 0 || w.KernelCount != 0 || !w.Complete {
		t.Errorf("matched %d kernels %d complete %v, want 0 0 true", w.Matched, w.KernelCount, w.Complete)
	}
	if f.Stats.KernelsUnattributed != 1 {
		t.Errorf("KernelsUnattributed = %d, want 1", f.Stats.KernelsUnattributed)
	}
}

// SM-weighted busy time: each kernel weighted by min(1, blocks ÷ the device's SMs), over the
// part of the union it extended. Device 0 has 100 SMs; device 1 never reported its count.
func TestFuserWeighsKernelsBySMs(t *testing.T) {
	f, out := fuserWith(t)
	f.State(GPUState{PID: 7, Mono: 0, On: true})
	f.Device(GPUDevice{PID: 7, Device: 0, SMs: 100})
	f.API(GPUAPI{PID: 7, Start: 11 * us, End: 12 * us, Correlation: 5})
	f.API(GPUAPI{PID: 7, Start: 14 * us, End: 15 * us, Correlation: 6})
	// [20,40] 50 blocks: 20 µs × 0.5 = 10 µs; [30,60] 400 blocks (8×50): weight 1 past 40 µs
	// only = 20 µs; [70,80] 1 block: 10 µs × 0.01 = 0.1 µs. Total 30.1 µs; busy 50 µs.
	f.Kernel(GPUKernel{PID: 7, Correlation: 5, Start: 20 * us, End: 40 * us, Grid: [3]uint32{50, 1, 1}, Name: "half"})
	f.Kernel(GPUKernel{PID: 7, Correlation: 5, Start: 30 * us, End: 60 * us, Grid: [3]uint32{8, 50, 1}, Name: "full"})
	f.Kernel(GPUKernel{PID: 7, Correlation: 6, Start: 70 * us, End: 80 * us, Grid: [3]uint32{1, 1, 1}, Name: "one"})
	f.Submission(&Submission{PID: 7, Outcome: Synced, Start: 10 * us, End: 100 * us,
		Ops: []Op{launchOp(10*us, 13*us), launchOp(13500, 16*us)}})
	f.Mark(7, 200*us)
	w := (*out)[0].GPU
	if w.Busy != 50*us || !w.SMKnown || w.SMWeightedBusy != 30_100 {
		t.Errorf("busy %d, SM-weighted %d (known %v); want 50000, 30100, true", w.Busy, w.SMWeightedBusy, w.SMKnown)
	}
	for _, k := range w.Kernels {
		if k.SMs != 100 {
			t.Errorf("kernel %s: SMs %d, want the device's 100", k.Name, k.SMs)
		}
	}

	// A kernel on a device that reported nothing: the submission's weighted time is unknown.
	f.API(GPUAPI{PID: 7, Start: 301 * us, End: 302 * us, Correlation: 9})
	f.Kernel(GPUKernel{PID: 7, Correlation: 9, Device: 1, Start: 310 * us, End: 320 * us, Grid: [3]uint32{500, 1, 1}, Name: "dev1"})
	f.Submission(&Submission{PID: 7, Outcome: Synced, Start: 300 * us, End: 400 * us, Ops: []Op{launchOp(300*us, 303*us)}})
	f.Mark(7, 500*us)
	if w := (*out)[1].GPU; w.KernelCount != 1 || w.SMKnown || w.SMWeightedBusy != 0 {
		t.Errorf("device without an SM count: kernels %d, SM-weighted %d known %v; want 1, 0, false", w.KernelCount, w.SMWeightedBusy, w.SMKnown)
	}
}

// A device frame that comes after a kernel's record (the library writes it once the
// driver answers device queries, which it does only after cuInit returned) still weighs
// that kernel: the SM count is the one known when the submission is fused.
func TestFuserWeighsKernelsByALateDeviceFrame(t *testing.T) {
	f, out := fuserWith(t)
	f.State(GPUState{PID: 7, Mono: 0, On: true})
	f.API(GPUAPI{PID: 7, Start: 11 * us, End: 12 * us, Correlation: 5})
	// [20,40] 66 blocks on 132 SMs: 20 µs × 0.5 = 10 µs.
	f.Kernel(GPUKernel{PID: 7, Correlation: 5, Start: 20 * us, End: 40 * us, Grid: [3]uint32{66, 1, 1}, Name: "half"})
	f.Device(GPUDevice{PID: 7, Device: 0, SMs: 132})
	f.Submission(&Submission{PID: 7, Outcome: Synced, Start: 10 * us, End: 100 * us, Ops: []Op{launchOp(10*us, 13*us)}})
	f.Mark(7, 200*us)
	w := (*out)[0].GPU
	if !w.SMKnown || w.SMWeightedBusy != 10*us || w.Kernels[0].SMs != 132 {
		t.Errorf("SM-weighted %d (known %v), kernel SMs %d; want 10000, true, 132", w.SMWeightedBusy, w.SMKnown, w.Kernels[0].SMs)
	}
}
