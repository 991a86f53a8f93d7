// The GPU timeline's spans and metrics from hand-built GPU work (times written out).
package cudaspans

import (
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/ghostdriver/ghostdriver/internal/cuda"
	"github.com/ghostdriver/ghostdriver/internal/metadata"
)

func gpuSubmission(pid uint32, start, end int64, ks ...cuda.GPUKernel) *cuda.Submission {
	w := &cuda.GPUWork{Kernels: ks, KernelCount: len(ks), QueueFrom: start + 1, FirstStart: ks[0].Start, LastEnd: ks[len(ks)-1].End}
	sync := cuda.Op{Call: cuda.Call{Start: end - 1, End: end}}
	return &cuda.Submission{PID: pid, Outcome: cuda.Synced, Start: start, End: end, Sync: &sync, GPU: w}
}

func TestGPUBusyTimeCountsOverlapsOnce(t *testing.T) {
	r := NewRecorder(metadata.DefaultMetricsConfig(), time.Unix(0, 0))
	// Device 0: [100,200] and [150,300] in one submission, [250,400] in the next: union
	// 100..400 = 300 ns. Device 1: [100,110] = 10 ns. Another process on device 0:
	// [100,200] = 100 ns, the same series (no process label): 400 ns in all.
	r.Record(gpuSubmission(1, 50, 500, cuda.GPUKernel{Device: 0, Start: 100, End: 200}, cuda.GPUKernel{Device: 0, Start: 150, End: 300},
		cuda.GPUKernel{Device: 1, Start: 100, End: 110}))
	r.Record(gpuSubmission(1, 240, 600, cuda.GPUKernel{Device: 0, Start: 250, End: 400}))
	r.Record(gpuSubmission(2, 50, 500, cuda.GPUKernel{Device: 0, Start: 100, End: 200}))
	got := map[int64]float64{}
	queue, completion := uint64(0), uint64(0)
	md := r.Collect(time.Unix(1, 0))
	ms := md.ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics()
	for i := 0; i < ms.Len(); i++ {
		m := ms.At(i)
		switch m.Name() {
		case metadata.MetricCUDAGPUBusyTime:
			for j := 0; j < m.Sum().DataPoints().Len(); j++ {
				dp := m.Sum().DataPoints().At(j)
				dev, _ := dp.Attributes().Get(metadata.AttrCUDAGPUDevice)
				got[dev.Int()] += dp.DoubleValue()
			}
		case metadata.MetricCUDAGPUQueue:
			queue = sumCounts(m.Histogram().DataPoints())
		case metadata.MetricCUDAGPUCompletion:
			completion = sumCounts(m.Histogram().DataPoints())
		}
	}
	if got[0] != 400e-9 || got[1] != 10e-9 {
		t.Errorf("busy time by device %v, want 0: 400 ns, 1: 10 ns", got)
	}
	if queue != 3 || completion != 3 {
		t.Errorf("queue %d, completion %d observations; want 3 each", queue, completion)
	}
}

func sumCounts(dps pmetric.HistogramDataPointSlice) uint64 {
	var n uint64
	for i := 0; i < dps.Len(); i++ {
		n += dps.At(i).Count()
	}
	return n
}

// The blocking-sync split of cuda.gpu_completion: kernel end 1000, interrupt 1200, wake-up
// 1500, return 1800 give three children with those bounds; without an interrupt in
// [kernel end, wake-up] the wakeup child starts at the kernel's end; a sync woken before
// the kernel ended, or never woken (spin), gives none.
func TestGPUCompletionSplit(t *testing.T) {
	syncAPI := -1
	for i, a := range cuda.APIs() {
		if a.Name == "cudaStreamSynchronize" {
			syncAPI = i
		}
	}
	type child struct {
		name       string
		start, end int64
	}
	cases := []struct {
		name      string
		wake, irq int64
		traced    bool
		want      []child
		wantSlept any // nil: attribute absent
	}{
		{"interrupt, wake-up, return", 1500, 1200, true, []child{
			{metadata.SpanCUDAGPUCompletionInterrupt, 1000, 1200},
			{metadata.SpanCUDAGPUCompletionWakeup, 1200, 1500},
			{metadata.SpanCUDAGPUCompletionReturn, 1500, 1800}}, true},
		{"no interrupt after the kernel", 1500, 900, true, []child{
			{metadata.SpanCUDAGPUCompletionWakeup, 1000, 1500},
			{metadata.SpanCUDAGPUCompletionReturn, 1500, 1800}}, true},
		{"woken before the kernel ended", 950, 0, true, nil, true},
		{"spin: never woken", 0, 0, true, nil, false},
		{"not traced", 0, 0, false, nil, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := gpuSubmission(1, 100, 1800, cuda.GPUKernel{Start: 500, End: 1000})
			s.Sync = &cuda.Op{Call: cuda.Call{API: syncAPI, Start: 800, End: 1800, WakeTraced: c.traced, Wake: c.wake, IRQ: c.irq}}
			b := NewBuilder(clock)
			b.Append(s)
			spans := b.Take().ResourceSpans().At(0).ScopeSpans().At(0).Spans()
			var completion, syncSpan string
			var got []child
			parents := map[string]string{}
			for i := 0; i < spans.Len(); i++ {
				sp := spans.At(i)
				parents[sp.SpanID().String()] = sp.ParentSpanID().String()
				switch sp.Name() {
				case metadata.SpanCUDAGPUCompletion:
					completion = sp.SpanID().String()
				case metadata.SpanCUDASync:
					syncSpan = sp.SpanID().String()
					v, ok := sp.Attributes().Get(metadata.AttrCUDASyncSlept)
					if (c.wantSlept == nil) == ok || (ok && v.Bool() != c.wantSlept.(bool)) {
						t.Errorf("slept attribute %v (present %v), want %v", v.AsRaw(), ok, c.wantSlept)
					}
				case metadata.SpanCUDAGPUCompletionInterrupt, metadata.SpanCUDAGPUCompletionWakeup, metadata.SpanCUDAGPUCompletionReturn:
					got = append(got, child{sp.Name(), int64(sp.StartTimestamp()) - clock.Offset, int64(sp.EndTimestamp()) - clock.Offset})
				}
			}
			if completion == "" || syncSpan == "" {
				t.Fatalf("no completion or sync span")
			}
			if len(got) != len(c.want) {
				t.Fatalf("children %+v, want %+v", got, c.want)
			}
			for i := range got {
				if got[i] != c.want[i] {
					t.Errorf("child %d: %+v, want %+v", i, got[i], c.want[i])
				}
			}
			for i := 0; i < spans.Len(); i++ {
				sp := spans.At(i)
				if n := sp.Name(); len(n) > len(metadata.SpanCUDAGPUCompletion) && n[:len(metadata.SpanCUDAGPUCompletion)+1] == metadata.SpanCUDAGPUCompletion+"." &&
					sp.ParentSpanID().String() != completion {
					t.Errorf("%s is not a child of cuda.gpu_completion", n)
				}
			}
		})
	}
}
