// Per-metric enable/disable configuration, shaped like mdatagen's MetricsConfig so the
// receiver's Config embeds it under the `metrics:` key:
//
//	metrics:
//	  ghostdriver.ring.busy_ratio:
//	    enabled: false
//	  dimensions: [process.executable.name]

package metadata

import (
	"errors"
	"fmt"
	"slices"
)

// MetricConfig is the configuration of one metric.
type MetricConfig struct {
	Enabled bool `mapstructure:"enabled"`
}

// MetricsConfig enables or disables each metric and chooses optional dimensions.
type MetricsConfig struct {
	GhostdriverStageDuration        MetricConfig `mapstructure:"ghostdriver.stage.duration"`
	GhostdriverJobDuration          MetricConfig `mapstructure:"ghostdriver.job.duration"`
	GhostdriverJobs                 MetricConfig `mapstructure:"ghostdriver.jobs"`
	GhostdriverRingBusyRatio        MetricConfig `mapstructure:"ghostdriver.ring.busy_ratio"`
	GhostdriverRingBusyTime         MetricConfig `mapstructure:"ghostdriver.ring.busy_time"`
	GhostdriverDecoderEvents        MetricConfig `mapstructure:"ghostdriver.decoder.events"`
	GhostdriverDecoderUnknownEvents MetricConfig `mapstructure:"ghostdriver.decoder.unknown_events"`
	GhostdriverDecoderMalformed     MetricConfig `mapstructure:"ghostdriver.decoder.malformed"`
	GhostdriverDecoderTruncated     MetricConfig `mapstructure:"ghostdriver.decoder.truncated_lines"`
	GhostdriverSourceLostEvents     MetricConfig `mapstructure:"ghostdriver.source.lost_events"`
	GhostdriverSourceKernelDrops    MetricConfig `mapstructure:"ghostdriver.source.kernel_drops"`
	GhostdriverJobEvictions         MetricConfig `mapstructure:"ghostdriver.job.evictions"`
	GhostdriverJobPending           MetricConfig `mapstructure:"ghostdriver.job.pending"`
	GhostdriverJobSpansDropped      MetricConfig `mapstructure:"ghostdriver.job.spans_dropped"`
	GhostdriverSourceHooks          MetricConfig `mapstructure:"ghostdriver.source.hooks"`
	GhostdriverAssemblerAnomalies   MetricConfig `mapstructure:"ghostdriver.assembler.anomalies"`
	GhostdriverAssemblerUnmatched   MetricConfig `mapstructure:"ghostdriver.assembler.unmatched_events"`

	// The sampler (sampling on).
	GhostdriverSamplingSpans       MetricConfig `mapstructure:"ghostdriver.sampling.spans"`
	GhostdriverSamplingProbability MetricConfig `mapstructure:"ghostdriver.sampling.probability"`

	// The enrich stage (live source).
	GhostdriverContextHeldJobs      MetricConfig `mapstructure:"ghostdriver.context.held_jobs"`
	GhostdriverContextRediscoveries MetricConfig `mapstructure:"ghostdriver.context.rediscoveries"`

	// The CUDA path (live.cuda).
	GhostdriverCUDASubmissionDuration MetricConfig `mapstructure:"ghostdriver.cuda.submission.duration"`
	GhostdriverCUDASyncWait           MetricConfig `mapstructure:"ghostdriver.cuda.sync.wait"`
	GhostdriverCUDALaunches           MetricConfig `mapstructure:"ghostdriver.cuda.launches"`
	GhostdriverNvidiaXid              MetricConfig `mapstructure:"ghostdriver.nvidia.xid"`
	GhostdriverCUDALostCalls          MetricConfig `mapstructure:"ghostdriver.cuda.lost_calls"`
	GhostdriverCUDAEntryPointsDropped MetricConfig `mapstructure:"ghostdriver.cuda.entry_points.dropped"`
	GhostdriverCUDAGPUBusyTime        MetricConfig `mapstructure:"ghostdriver.cuda.gpu.busy_time"`
	GhostdriverCUDAGPUSMWeighted      MetricConfig `mapstructure:"ghostdriver.cuda.gpu.sm_weighted_busy_time"`
	GhostdriverCUDAGPUQueue           MetricConfig `mapstructure:"ghostdriver.cuda.gpu.queue"`
	GhostdriverCUDAGPUCompletion      MetricConfig `mapstructure:"ghostdriver.cuda.gpu.completion"`

	// Dimensions adds tenant attributes to the job metrics (those whose descriptor has
	// Dimensions set). Each must be in AllowedDimensions: the list is reviewed one key at
	// a time, because each multiplies the number of series. Default: DefaultDimensions.
	Dimensions []string `mapstructure:"dimensions"`
}

// AllowedDimensions are the keys MetricsConfig.Dimensions may name. Never process.pid or
// thread.id: one series per process (or thread) of every GPU job would grow without bound.
var AllowedDimensions = []string{
	AttrServiceName, AttrProcessExecutableName, AttrContainerID, AttrK8sPodUID, AttrDRMClientName,
}

// DefaultDimensions: service.name only. It is what dashboards group by, is stable across
// restarts and bounded by the number of distinct workloads on the node; container.id and
// k8s.pod.uid change on every restart (series churn in Prometheus), so they are opt-in.
var DefaultDimensions = []string{AttrServiceName}

// DefaultMetricsConfig enables every metric with the default dimensions.
func DefaultMetricsConfig() MetricsConfig {
	on := MetricConfig{Enabled: true}
	return MetricsConfig{
		Dimensions:                      append([]string(nil), DefaultDimensions...),
		GhostdriverStageDuration:        on,
		GhostdriverJobDuration:          on,
		GhostdriverJobs:                 on,
		GhostdriverRingBusyRatio:        on,
		GhostdriverRingBusyTime:         on,
		GhostdriverDecoderEvents:        on,
		GhostdriverDecoderUnknownEvents: on,
		GhostdriverDecoderMalformed:     on,
		GhostdriverDecoderTruncated:     on,
		GhostdriverSourceLostEvents:     on,
		GhostdriverSourceKernelDrops:    on,
		GhostdriverJobEvictions:         on,
		GhostdriverJobPending:           on,
		GhostdriverJobSpansDropped:      on,
		GhostdriverSourceHooks:          on,
		GhostdriverAssemblerAnomalies:   on,
		GhostdriverAssemblerUnmatched:   on,

		GhostdriverSamplingSpans:       on,
		GhostdriverSamplingProbability: on,

		GhostdriverContextHeldJobs:      on,
		GhostdriverContextRediscoveries: on,

		GhostdriverCUDASubmissionDuration: on,
		GhostdriverCUDASyncWait:           on,
		GhostdriverCUDALaunches:           on,
		GhostdriverNvidiaXid:              on,
		GhostdriverCUDALostCalls:          on,
		GhostdriverCUDAEntryPointsDropped: on,
		GhostdriverCUDAGPUBusyTime:        on,
		GhostdriverCUDAGPUSMWeighted:      on,
		GhostdriverCUDAGPUQueue:           on,
		GhostdriverCUDAGPUCompletion:      on,
	}
}

// Metric returns the configuration of the named metric, nil for an unknown name.
func (c *MetricsConfig) Metric(name string) *MetricConfig {
	switch name {
	case MetricStageDuration:
		return &c.GhostdriverStageDuration
	case MetricJobDuration:
		return &c.GhostdriverJobDuration
	case MetricJobs:
		return &c.GhostdriverJobs
	case MetricRingBusyRatio:
		return &c.GhostdriverRingBusyRatio
	case MetricRingBusyTime:
		return &c.GhostdriverRingBusyTime
	case MetricDecoderEvents:
		return &c.GhostdriverDecoderEvents
	case MetricDecoderUnknownEvents:
		return &c.GhostdriverDecoderUnknownEvents
	case MetricDecoderMalformed:
		return &c.GhostdriverDecoderMalformed
	case MetricDecoderTruncated:
		return &c.GhostdriverDecoderTruncated
	case MetricSourceLostEvents:
		return &c.GhostdriverSourceLostEvents
	case MetricSourceKernelDrops:
		return &c.GhostdriverSourceKernelDrops
	case MetricJobEvictions:
		return &c.GhostdriverJobEvictions
	case MetricJobPending:
		return &c.GhostdriverJobPending
	case MetricJobSpansDropped:
		return &c.GhostdriverJobSpansDropped
	case MetricSourceHooks:
		return &c.GhostdriverSourceHooks
	case MetricAssemblerAnomalies:
		return &c.GhostdriverAssemblerAnomalies
	case MetricAssemblerUnmatched:
		return &c.GhostdriverAssemblerUnmatched
	case MetricSamplingSpans:
		return &c.GhostdriverSamplingSpans
	case MetricSamplingProbability:
		return &c.GhostdriverSamplingProbability
	case MetricContextHeldJobs:
		return &c.GhostdriverContextHeldJobs
	case MetricContextRediscoveries:
		return &c.GhostdriverContextRediscoveries
	case MetricCUDASubmissionDuration:
		return &c.GhostdriverCUDASubmissionDuration
	case MetricCUDASyncWait:
		return &c.GhostdriverCUDASyncWait
	case MetricCUDALaunches:
		return &c.GhostdriverCUDALaunches
	case MetricNvidiaXid:
		return &c.GhostdriverNvidiaXid
	case MetricCUDALostCalls:
		return &c.GhostdriverCUDALostCalls
	case MetricCUDAEntryPointsDropped:
		return &c.GhostdriverCUDAEntryPointsDropped
	case MetricCUDAGPUBusyTime:
		return &c.GhostdriverCUDAGPUBusyTime
	case MetricCUDAGPUSMWeighted:
		return &c.GhostdriverCUDAGPUSMWeighted
	case MetricCUDAGPUQueue:
		return &c.GhostdriverCUDAGPUQueue
	case MetricCUDAGPUCompletion:
		return &c.GhostdriverCUDAGPUCompletion
	}
	return nil
}

// Enabled reports whether the named metric is enabled (false for an unknown name).
func (c *MetricsConfig) Enabled(name string) bool {
	mc := c.Metric(name)
	return mc != nil && mc.Enabled
}

// Validate implements confmap.Validator.
func (c *MetricsConfig) Validate() error {
	var errs []error
	for i, d := range c.Dimensions {
		if !slices.Contains(AllowedDimensions, d) {
			errs = append(errs, fmt.Errorf("metrics.dimensions: %q is not an allowed dimension (allowed: %v)", d, AllowedDimensions))
		}
		if slices.Contains(c.Dimensions[:i], d) {
			errs = append(errs, fmt.Errorf("metrics.dimensions: %q is listed twice", d))
		}
	}
	return errors.Join(errs...)
}
