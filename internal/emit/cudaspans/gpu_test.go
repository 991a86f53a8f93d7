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
