// The GPU's own timeline as children of cuda.submission (cuda.GPUWork, internal/cuda/gpu.go):
// cuda.gpu_queue, cuda.gpu_execution (with one cuda.kernel event per top kernel name) and
// cuda.gpu_completion, each with ghostdriver.stage.source = measured: the host bounds come
// from the uprobes, the GPU bounds from CUPTI's kernel records.

package cudaspans

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/ghostdriver/ghostdriver/internal/cuda"
	"github.com/ghostdriver/ghostdriver/internal/emit/ids"
	"github.com/ghostdriver/ghostdriver/internal/metadata"
)

// Rules of the GPU stage spans' bounds (ghostdriver.stage.rule): "a→b" names the start
// and the end, as the DRM stages do.
const (
	ruleGPUQueue      = "launch_return→kernel_start"
	ruleGPUExecution  = "kernel_start→kernel_end"
	ruleGPUCompletion = "kernel_end→sync_return"
)

func (b *Builder) appendGPU(spans ptrace.SpanSlice, traceID pcommon.TraceID, parent pcommon.SpanID, s *cuda.Submission) {
	w := s.GPU
	if w.KernelCount == 0 {
		return // the timeline was on, the launches ran no kernel it saw: the submission's attributes say so
	}
	stage := func(i int, name, rule string, start, end int64) ptrace.Span {
		c := spans.AppendEmpty()
		c.SetTraceID(traceID)
		c.SetSpanID(childID(parent, ids.TagGPU, i))
		c.SetParentSpanID(parent)
		c.SetName(name)
		c.SetKind(ptrace.SpanKindInternal)
		st, en := b.interval(start, end)
		c.SetStartTimestamp(st)
		c.SetEndTimestamp(en)
		c.Attributes().PutStr(metadata.AttrStageSource, "measured")
		c.Attributes().PutStr(metadata.AttrStageRule, rule)
		return c
	}
	if w.QueueFrom != 0 && w.QueueFrom <= w.FirstStart {
		stage(0, metadata.SpanCUDAGPUQueue, ruleGPUQueue, w.QueueFrom, w.FirstStart)
	}
	ex := stage(1, metadata.SpanCUDAGPUExecution, ruleGPUExecution, w.FirstStart, w.LastEnd)
	a := ex.Attributes()
	a.PutInt(metadata.AttrCUDAGPUKernelCount, int64(w.KernelCount))
	a.PutInt(metadata.AttrCUDAGPUBusyNs, w.Busy)
	a.PutInt(metadata.AttrCUDAGPUIdleNs, w.LastEnd-w.FirstStart-w.Busy)
	if w.SMKnown {
		a.PutInt(metadata.AttrCUDAGPUSMWeightedNs, w.SMWeightedBusy)
	}
	devs := a.PutEmptySlice(metadata.AttrCUDAGPUDevices)
	for _, d := range w.Devices {
		devs.AppendEmpty().SetInt(int64(d))
	}
	for _, k := range w.Top {
		ev := ex.Events().AppendEmpty()
		ev.SetName(metadata.EventCUDAKernel)
		ev.SetTimestamp(pcommon.Timestamp(max(0, b.clock.WallNanos(w.FirstStart))))
		ea := ev.Attributes()
		ea.PutStr(metadata.AttrCUDAKernelName, k.Name)
		ea.PutInt(metadata.AttrCUDAKernelCount, int64(k.Count))
		ea.PutInt(metadata.AttrCUDAKernelGPUTimeNs, k.Time)
	}
	if s.Outcome == cuda.Synced && s.Sync != nil && w.LastEnd <= s.Sync.End {
		c := stage(2, metadata.SpanCUDAGPUCompletion, ruleGPUCompletion, w.LastEnd, s.Sync.End)
		b.appendCompletionSplit(spans, traceID, c.SpanID(), w.LastEnd, s.Sync)
	}
}

// Rules of the blocking-sync split's spans.
const (
	ruleCompletionInterrupt = "kernel_end→irq_handler_entry"
	ruleCompletionWakeupIRQ = "irq_handler_entry→sched_waking"
	ruleCompletionWakeup    = "kernel_end→sched_waking"
	ruleCompletionReturn    = "sched_waking→sync_return"
)

// appendCompletionSplit splits cuda.gpu_completion where the syncing thread slept and was
// woken after the last kernel ended (a blocking sync; live.cuda.sync_wakeups): to the
// nvidia interrupt, to the wake-up, to the return. A sync that never slept (spin or yield)
// has no kernel path: no children, and its cuda.sync span says ghostdriver.cuda.sync.slept
// = false.
func (b *Builder) appendCompletionSplit(spans ptrace.SpanSlice, traceID pcommon.TraceID, parent pcommon.SpanID, gpuEnd int64, sync *cuda.Op) {
	if !sync.WakeTraced || sync.Wake == 0 || sync.Wake < gpuEnd || sync.Wake > sync.End {
		return
	}
	n := 0
	child := func(name, rule string, start, end int64) {
		c := spans.AppendEmpty()
		c.SetTraceID(traceID)
		c.SetSpanID(childID(parent, ids.TagGPU, n))
		n++
		c.SetParentSpanID(parent)
		c.SetName(name)
		c.SetKind(ptrace.SpanKindInternal)
		st, en := b.interval(start, end)
		c.SetStartTimestamp(st)
		c.SetEndTimestamp(en)
		c.Attributes().PutStr(metadata.AttrStageSource, "measured")
		c.Attributes().PutStr(metadata.AttrStageRule, rule)
	}
	if sync.IRQ >= gpuEnd && sync.IRQ <= sync.Wake {
		child(metadata.SpanCUDAGPUCompletionInterrupt, ruleCompletionInterrupt, gpuEnd, sync.IRQ)
		child(metadata.SpanCUDAGPUCompletionWakeup, ruleCompletionWakeupIRQ, sync.IRQ, sync.Wake)
	} else {
		child(metadata.SpanCUDAGPUCompletionWakeup, ruleCompletionWakeup, gpuEnd, sync.Wake)
	}
	child(metadata.SpanCUDAGPUCompletionReturn, ruleCompletionReturn, sync.Wake, sync.End)
}

// putWakeAttributes says how a sync call waited, where the source followed wake-ups.
func putWakeAttributes(a pcommon.Map, op *cuda.Op) {
	if !op.WakeTraced {
		return
	}
	a.PutBool(metadata.AttrCUDASyncSlept, op.Wake != 0)
	if op.Wake == 0 || op.Wake > op.End {
		return
	}
	a.PutInt(metadata.AttrCUDASyncWakeupToReturnNs, op.End-op.Wake)
	if op.IRQ >= op.Start && op.IRQ <= op.Wake {
		a.PutInt(metadata.AttrCUDASyncIRQToWakeupNs, op.Wake-op.IRQ)
	}
}

// putGPUAttributes adds the timeline's summary to the cuda.submission span.
func putGPUAttributes(a pcommon.Map, w *cuda.GPUWork) {
	if w == nil {
		return
	}
	a.PutStr(metadata.AttrCUDAGPUTimeline, "on")
	a.PutInt(metadata.AttrCUDAGPUKernelCount, int64(w.KernelCount))
	a.PutBool(metadata.AttrCUDAGPUComplete, w.Complete)
	if w.Unmatched > 0 {
		a.PutInt(metadata.AttrCUDAGPUUnmatched, int64(w.Unmatched))
	}
	if w.ClockRuleViolations > 0 {
		a.PutInt(metadata.AttrCUDAGPUClockRule, int64(w.ClockRuleViolations))
	}
}
