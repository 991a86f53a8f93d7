// Package emit renders assembled GPU jobs as OpenTelemetry data: a SpanBuilder turns each
// assemble.Job into a `gpu.job` span with one child span per stage, and a MetricsRecorder
// keeps the stage/job histograms, job counters and ring utilization that a collection
// turns into pmetric data. For files, a JobEncoder writes the spans the SpanBuilder would
// build straight to OTLP bytes (JSON or protobuf, pdata's marshallers' bytes) without
// building them; AppendTracesJSON and AppendTracesProto encode pdata spans the same way.
//
// emit imports pdata and the job model, never cilium or a source: everything it knows
// about the kernel arrives in the Job. Names of spans, metrics and attributes come from
// internal/metadata, whose descriptions (metadata.yaml, documentation.md) the tests hold
// to what this package actually emits.
package emit
