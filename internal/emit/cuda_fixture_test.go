//go:build linux && (386 || amd64)

// CUDA fixtures for the metadata checks: internal/cuda (and so cudaspans) builds where its
// BPF objects do. Each submission exercises attributes the others do not.
package emit

import (
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/ghostdriver/ghostdriver/internal/ctxtier"
	"github.com/ghostdriver/ghostdriver/internal/cuda"
	"github.com/ghostdriver/ghostdriver/internal/emit/cudaspans"
	"github.com/ghostdriver/ghostdriver/internal/metadata"
	"github.com/ghostdriver/ghostdriver/internal/sample"
)

func init() { cudaOutputs = cudaFixtureOutputs }

// cudaCall is a call of the named API (row looked up in cuda.APIs()).
func cudaCall(name string, pid, tid uint32, start, end int64) cuda.Call {
	for i, a := range cuda.APIs() {
		if a.Name == name {
			return cuda.Call{API: i, PID: pid, TID: tid, Start: start, End: end, Comm: "python3"}
		}
	}
	panic("no CUDA API " + name)
}

func cudaOp(c cuda.Call, f func(*cuda.Op)) cuda.Op {
	op := cuda.Op{Call: c}
	if f != nil {
		f(&op)
	}
	return op
}

func cudaSubmissions() []*cuda.Submission {
	const pid = 4242
	launch := cudaOp(cudaCall("cudaLaunchKernel", pid, pid, 1000, 3000), func(o *cuda.Op) {
		o.Stream, o.Handle = 0x5000, 0xf000
		inner := cudaCall("cuLaunchKernel", pid, pid, 1500, 2500)
		inner.EntryPoint, inner.Depth, inner.Stream = true, 1, 0x5000
		o.Inner = []cuda.Call{inner}
	})
	memcpy := cudaOp(cudaCall("cudaMemcpyAsync", pid, pid, 3100, 3500), func(o *cuda.Op) {
		o.Stream, o.Bytes, o.Handle = 0x5000, 4096, 1
	})
	memset := cudaOp(cudaCall("cudaMemsetAsync", pid, pid, 3600, 3700), func(o *cuda.Op) { o.Stream, o.Bytes = 0x5000, 512 })
	record := cudaOp(cudaCall("cudaEventRecord", pid, pid, 3800, 3900), func(o *cuda.Op) { o.Stream, o.Handle = 0x5000, 0xe000 })
	alloc := cudaOp(cudaCall("cudaMalloc", pid, pid, 4000, 4100), func(o *cuda.Op) { o.Bytes = 1 << 20; o.Ret = 2 })
	free := cudaOp(cudaCall("cudaFree", pid, pid, 4200, 4300), func(o *cuda.Op) { o.Handle = 0x7f0000000000 })
	driverLaunch := cudaOp(cudaCall("cuLaunchKernel", pid, pid+1, 4400, 4500), func(o *cuda.Op) {
		o.Stream, o.Handle, o.EntryPoint = 0x5000, 0xabc, true
	})
	// A blocking sync: woken at 8000, 400 ns after the nvidia interrupt, 1 µs before it returned.
	streamSync := cudaOp(cudaCall("cudaStreamSynchronize", pid, pid, 5000, 9000), func(o *cuda.Op) {
		o.Stream, o.WakeTraced, o.Wake, o.IRQ = 0x5000, true, 8000, 7600
	})
	eventSync := cudaOp(cudaCall("cudaEventSynchronize", pid, pid+1, 12000, 15000), func(o *cuda.Op) { o.Stream = 0xe000 })
	devSync := cudaOp(cudaCall("cudaDeviceSynchronize", pid, pid, 20000, 26000), func(o *cuda.Op) { o.Ret = 700 })
	later := cudaOp(cudaCall("cudaLaunchKernel", pid, pid+1, 10000, 11000), func(o *cuda.Op) { o.Stream, o.Handle = 0x5001, 0xf001 })
	// Every class once more, with what any call can carry: a nested traced call, an error
	// return, a driver entry point.
	var flagged []cuda.Op
	for i, name := range []string{"cudaLaunchKernel", "cudaMemcpyAsync", "cudaMemsetAsync", "cudaEventRecord",
		"cudaMallocAsync", "cudaFreeAsync"} {
		t := int64(30000 + 1000*i)
		flagged = append(flagged, cudaOp(cudaCall(name, pid, pid, t, t+500), func(o *cuda.Op) {
			o.Stream, o.Bytes, o.Handle, o.Ret, o.EntryPoint = 0x5003, 64, 0x10, 1, true
			o.Inner = []cuda.Call{cudaCall("cuMemcpyAsync", pid, pid, t+100, t+400)}
		}))
	}
	flaggedSync := cudaOp(cudaCall("cudaStreamSynchronize", pid, pid, 40000, 41000), func(o *cuda.Op) {
		o.Stream, o.EntryPoint = 0x5003, true
		o.Inner = []cuda.Call{cudaCall("cuStreamSynchronize", pid, pid, 40100, 40900)}
	})
	return []*cuda.Submission{
		{PID: pid, Comm: "python3", Stream: 0x5003, Scope: cuda.ScopeStream, Outcome: cuda.Synced,
			Ops: flagged, Launches: 1, Sync: &flaggedSync, Start: 30000, End: 41000},
		{PID: pid, Comm: "python3", Stream: 0x5000, Scope: cuda.ScopeStream, Outcome: cuda.Synced,
			Ops: []cuda.Op{launch, memcpy, memset, record, alloc, free, driverLaunch}, Dropped: 2, Launches: 3,
			Sync: &streamSync, Start: 1000, End: 9000,
			Xids: []cuda.Xid{{Time: 8000, Device: "0000:00:06.0", Code: 31, Msg: "MMU Fault: ENGINE GRAPHICS"}}},
		{PID: pid, Comm: "pt_worker", Stream: 0x5001, Scope: cuda.ScopeEvent, Outcome: cuda.Synced,
			Ops: []cuda.Op{later}, Launches: 1, Sync: &eventSync, Start: 10000, End: 15000},
		{PID: pid, Comm: "python3", Scope: cuda.ScopeContext, Outcome: cuda.Synced, Sync: &devSync, Start: 20000, End: 26000},
		{PID: pid, Comm: "pt_worker", Stream: 0x5002, Scope: cuda.ScopeStream, Outcome: cuda.Unsynced,
			Ops: []cuda.Op{later}, Launches: 1, Start: 10000, End: 11000},
		// With the GPU timeline: two kernels of one launch (a graph), an unmatched launch,
		// a clock rule violation counted.
		{PID: pid, Comm: "python3", Stream: 0x5004, Scope: cuda.ScopeStream, Outcome: cuda.Synced,
			Ops: []cuda.Op{launch}, Launches: 1, Sync: &streamSync, Start: 1000, End: 9000,
			GPU: &cuda.GPUWork{KernelCount: 2, FirstStart: 2500, LastEnd: 7000, Busy: 4000, QueueFrom: 1500,
				SMWeightedBusy: 2500, SMKnown: true,
				Matched: 1, Unmatched: 1, ClockRuleViolations: 1, Devices: []uint32{0},
				Kernels: []cuda.GPUKernel{
					{PID: pid, Start: 2500, End: 4500, Name: "gemm", Grid: [3]uint32{264, 1, 1}, SMs: 132},
					{PID: pid, Start: 5000, End: 7000, Name: "softmax", Grid: [3]uint32{33, 1, 1}, SMs: 132}},
				Top: []cuda.KernelTime{{Name: "gemm", Count: 1, Time: 2000}, {Name: "softmax", Count: 1, Time: 2000}}}},
	}
}

func cudaFixtureOutputs() (ptrace.Traces, pmetric.Metrics) {
	b := cudaspans.NewBuilder(testClock, cudaspans.WithHostName("gpu-node-7"))
	cfg := metadata.DefaultMetricsConfig()
	cfg.Dimensions = metadata.AllowedDimensions
	r := cudaspans.NewRecorder(cfg, t0, cudaspans.WithHostName("gpu-node-7"),
		cudaspans.WithLossFunc(func() cuda.Losses {
			return cuda.Losses{RingBuffer: 3, MissedReturn: 1, NoFrame: 2, EntryPointsDropped: 4}
		}))
	for _, s := range cudaSubmissions() {
		b.Append(s)
		r.Record(s)
		for _, x := range s.Xids {
			r.RecordXid(x)
		}
	}
	// one the sampler kept under an unsampled application span: detached, linked to it
	s := cudaSubmissions()[0]
	s.TraceID, s.SpanID, s.CtxTier = appTrace, appSpan, ctxtier.Traceparent
	b.AppendSampled(s, sample.Sampled{TraceState: "ot=th:0", Detach: true})
	return b.Take(), r.Collect(t1)
}
