// Package appctx reads the trace context and resource an application publishes about itself,
// for the docs/design.md "Linking to application traces" ladder:
//
//   - OTEP 4947 thread context: the TLS symbol otel_thread_ctx_v1 holds a pointer to a
//     packed record {trace-id, span-id, valid, flags, attrs}. ParseThreadContext decodes the
//     record; InspectTLS and ResolveTLS say where the TLS slot lives so the BPF side can read
//     it at the submitting ioctl (see TLSAccess for the exact recipe per TLS model).
//   - OTEP 4719 process context: a mapping named OTEL_CTX with a 32-byte header and a
//     protobuf ProcessContext payload. ParseProcessContextHeader, DecodeProcessContext and
//     ReadProcessContext (header → payload → header re-check, over a MemReader).
//   - W3C traceparent from the process environment: ParseTraceParent.
//
// Everything here is bounded (fixed maximum sizes, depth limits) and never panics on
// hostile input: the bytes come from other tenants' memory. Nothing in this package is on
// the per-event hot path; the tenant package caches the results per process.
//
// Layouts follow the OTEP texts as merged (summarised in docs/design.md):
// all multi-byte integers are host-endian because writer and reader share the host.
package appctx
