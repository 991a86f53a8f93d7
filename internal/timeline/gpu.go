// The NVIDIA GPU timeline read back from spans: one GPUWork per cuda.submission that has
// GPU-side children (cuda.gpu_execution, and cuda.gpu_queue / cuda.gpu_completion where
// measured), with the submitting process from the resource. The report's coverage table
// (kernel, SM-weighted, against nvidia-smi) is drawn from these.

package timeline

import (
	"encoding/hex"
	"sort"
	"strconv"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/ghostdriver/ghostdriver/internal/metadata"
)

// GPUWork is one submission's GPU-side stages. Times are unix ns as in the spans; Queue and
// Completion are -1 where the span is absent.
type GPUWork struct {
	PID                 int64
	Service, Executable string
	Devices             string // the device ordinals the kernels ran on, "0" or "0,1"
	Start, End          int64  // the execution window (first kernel start → last kernel end)
	Kernels             int64
	Busy                int64 // union of the kernels' intervals
	SMWeighted          int64 // Busy with each kernel weighted by min(1, blocks ÷ SMs)
	SMKnown             bool  // SMWeighted is present (every device reported its SM count)
	Queue, Completion   int64
}

// Process names the submitting process as the DRM tables name a tenant.
func (w *GPUWork) Process() string {
	j := Job{PID: w.PID, Service: w.Service, Executable: w.Executable}
	return j.Tenant()
}

// gpuBuilder collects the cuda.gpu_* spans by their parent (the cuda.submission).
type gpuBuilder struct {
	byParent map[string]*GPUWork
	order    []string
}

func (g *gpuBuilder) add(sp ptrace.Span, service, exe string, resPID int64) bool {
	name := sp.Name()
	if name != metadata.SpanCUDAGPUExecution && name != metadata.SpanCUDAGPUQueue && name != metadata.SpanCUDAGPUCompletion {
		return false
	}
	if g.byParent == nil {
		g.byParent = map[string]*GPUWork{}
	}
	key := hexID(sp.TraceID()) + hex.EncodeToString(sliceOf(sp.ParentSpanID()))
	w := g.byParent[key]
	if w == nil {
		w = &GPUWork{PID: resPID, Service: service, Executable: exe, Queue: -1, Completion: -1}
		g.byParent[key] = w
		g.order = append(g.order, key)
	}
	d := int64(sp.EndTimestamp()) - int64(sp.StartTimestamp())
	switch name {
	case metadata.SpanCUDAGPUQueue:
		w.Queue = d
	case metadata.SpanCUDAGPUCompletion:
		w.Completion = d
	case metadata.SpanCUDAGPUExecution:
		a := sp.Attributes()
		w.Start, w.End = int64(sp.StartTimestamp()), int64(sp.EndTimestamp())
		w.Kernels = intAttr(a, metadata.AttrCUDAGPUKernelCount)
		w.Busy = intAttr(a, metadata.AttrCUDAGPUBusyNs)
		if _, ok := a.Get(metadata.AttrCUDAGPUSMWeightedNs); ok {
			w.SMWeighted, w.SMKnown = intAttr(a, metadata.AttrCUDAGPUSMWeightedNs), true
		}
		w.Devices = devices(a)
	}
	return true
}

// finish returns the submissions that have an execution span, in input order.
func (g *gpuBuilder) finish() []GPUWork {
	var out []GPUWork
	for _, k := range g.order {
		if w := g.byParent[k]; w.End > 0 {
			out = append(out, *w)
		}
	}
	return out
}

func devices(a pcommon.Map) string {
	v, ok := a.Get(metadata.AttrCUDAGPUDevices)
	if !ok || v.Type() != pcommon.ValueTypeSlice {
		return "?"
	}
	var ds []int64
	for i := 0; i < v.Slice().Len(); i++ {
		ds = append(ds, v.Slice().At(i).Int())
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	s := make([]string, len(ds))
	for i, d := range ds {
		s[i] = strconv.FormatInt(d, 10)
	}
	return strings.Join(s, ",")
}
