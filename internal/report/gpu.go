// The utilization paradox on NVIDIA, per process and device: from the GPU timeline's
// spans, the kernel coverage (union of kernel time ÷ the process's GPU window) and the
// SM-weighted coverage (each kernel weighted by min(1, blocks ÷ SMs)), beside nvidia-smi's
// utilization.gpu averaged over the same window when its samples are given.

package report

import (
	"sort"

	"github.com/ghostdriver/ghostdriver/internal/timeline"
)

// GPURow is one process's GPU timeline on one device (set of devices).
type GPURow struct {
	Process, Devices string
	Submissions      int
	Kernels          int64
	// Window: the first kernel start to the last kernel end of the process's submissions.
	Start, End, Window int64
	// Busy is Σ of the submissions' kernel unions, capped by the union of their execution
	// windows (exact when a process's submissions do not overlap on the GPU, an upper
	// bound otherwise); SMWeighted likewise, SMKnown when every submission had it.
	Busy, SMWeighted int64
	SMKnown          bool
	// Queue and completion durations (the cuda.gpu_queue and cuda.gpu_completion spans).
	QueueP50, QueueP99, CompletionP50, CompletionP99 int64
	Queues, Completions                              int
	// SMI: nvidia-smi's utilization.gpu over the window (mean of its samples, 0..1) and
	// the number of samples; SMISamples 0 when none was given or none fell in the window.
	SMI        float64
	SMISamples int
}

// Coverage is Busy ÷ Window.
func (r GPURow) Coverage() float64 { return ratio(r.Busy, r.Window) }

// SMCoverage is SMWeighted ÷ Window.
func (r GPURow) SMCoverage() float64 { return ratio(r.SMWeighted, r.Window) }

func ratio(a, b int64) float64 {
	if b <= 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// gpuRows groups the GPU timeline by process and devices, in first-seen order.
func gpuRows(works []timeline.GPUWork, smi []SMISample) []GPURow {
	type acc struct {
		row        GPURow
		windows    []interval
		queue, fin []int64
	}
	by := map[[2]string]*acc{}
	var order [][2]string
	for i := range works {
		w := &works[i]
		k := [2]string{w.Process(), w.Devices}
		a := by[k]
		if a == nil {
			a = &acc{row: GPURow{Process: k[0], Devices: k[1], Start: w.Start, End: w.End, SMKnown: true}}
			by[k] = a
			order = append(order, k)
		}
		r := &a.row
		r.Submissions++
		r.Kernels += w.Kernels
		r.Start, r.End = min(r.Start, w.Start), max(r.End, w.End)
		r.Busy += w.Busy
		r.SMWeighted += w.SMWeighted
		r.SMKnown = r.SMKnown && w.SMKnown
		a.windows = append(a.windows, interval{w.Start, w.End})
		if w.Queue >= 0 {
			a.queue = append(a.queue, w.Queue)
		}
		if w.Completion >= 0 {
			a.fin = append(a.fin, w.Completion)
		}
	}
	rows := make([]GPURow, 0, len(order))
	for _, k := range order {
		a := by[k]
		r := a.row
		r.Window = r.End - r.Start
		u := unionOf(a.windows)
		r.Busy, r.SMWeighted = min(r.Busy, u), min(r.SMWeighted, u)
		if !r.SMKnown {
			r.SMWeighted = 0
		}
		sort.Slice(a.queue, func(i, j int) bool { return a.queue[i] < a.queue[j] })
		sort.Slice(a.fin, func(i, j int) bool { return a.fin[i] < a.fin[j] })
		r.Queues, r.Completions = len(a.queue), len(a.fin)
		r.QueueP50, r.QueueP99 = quantile(a.queue, 0.5), quantile(a.queue, 0.99)
		r.CompletionP50, r.CompletionP99 = quantile(a.fin, 0.5), quantile(a.fin, 0.99)
		r.SMI, r.SMISamples = smiMean(smi, r.Devices, r.Start, r.End)
		rows = append(rows, r)
	}
	return rows
}

// unionOf is the length of the union of the intervals.
func unionOf(iv []interval) int64 {
	sort.Slice(iv, func(i, j int) bool { return iv[i].start < iv[j].start })
	var total, s, e int64
	for i, v := range iv {
		if i == 0 || v.start > e {
			total += e - s
			s, e = v.start, v.end
		} else if v.end > e {
			e = v.end
		}
	}
	if len(iv) > 0 {
		total += e - s
	}
	return total
}
