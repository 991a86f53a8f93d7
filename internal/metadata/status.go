// Package metadata is the receiver's identity and telemetry vocabulary: component type,
// stability, instrumentation scope, attribute keys and the metric descriptors, with the
// per-metric enable/disable configuration.
//
// It is the hand-written counterpart of what mdatagen would produce from the repository's
// metadata.yaml (mdatagen is not available to this module, and its builder has no
// histograms). metadata.yaml and documentation.md describe exactly what is declared here;
// internal/emit's tests hold the three together.
package metadata

// ScopeVersion is the instrumentation scope version used when the caller supplies none
// (the receiver passes its build version).
const ScopeVersion = "0.1.0-dev"
