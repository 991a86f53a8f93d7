// Package ghostdriverreceiver is the OpenTelemetry Collector receiver `ghostdriver`: GPU
// driver jobs as spans (one per job, a child per driver stage, under the application span
// that submitted it) and metrics, from the kernel's GPU driver events through eBPF, from
// the CUDA API through uprobes, or from a replayed ftrace capture. The package is an
// adapter: configuration and its validation, configuration → graph.Spec
// (internal/graph builds the pipeline), and the collector lifecycle, where Create is cheap
// and unprivileged and Start does the privileged work.
package ghostdriverreceiver
