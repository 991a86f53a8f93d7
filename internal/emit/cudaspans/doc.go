// Package cudaspans renders the CUDA source's submissions (internal/cuda) as OpenTelemetry
// data: a Builder turns each *cuda.Submission into a `cuda.submission` span with one child
// per top-level API call (`cuda.launch`, `cuda.memcpy`, `cuda.memset`, `cuda.event_record`,
// `cuda.alloc`, `cuda.free`) and one for the synchronize call that closed it (`cuda.sync`);
// a Recorder keeps the CUDA histograms and counters. The span model is internal/cuda's
// (doc.go); names come from internal/metadata and are documented in telemetry-extra.yaml and
// documentation.md, which internal/emit's tests hold to what this package emits.
//
// It is a sibling of internal/emit rather than part of it because internal/cuda carries
// the uprobe loader (cilium/ebpf, x86-64 objects): emit stays portable and free of any
// source, and only the Linux wiring (receiver, CLI, pipeline) imports this package.
//
// What the spans measure is the host side: each child is the uprobe/uretprobe pair of one
// call (the CPU time the thread spent enqueueing), cuda.sync is the time the thread
// blocked. GPU execution time is not measured; the sync's end is an upper bound of the
// GPU's completion of the submission's work.
package cudaspans
