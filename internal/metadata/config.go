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
	GhostdriverSourceLostEvents     MetricConfig `mapstructure:"ghostdriver.source.lost_events"`
	GhostdriverJobEvictions         MetricConfig `mapstructure:"ghostdriver.job.evictions"`
	GhostdriverJobPending           MetricConfig `mapstructure:"ghostdriver.job.pending"`
	GhostdriverJobSpansDropped      MetricConfig `mapstructure:"ghostdriver.job.spans_dropped"`

	// Dimensions adds attributes beyond the low-cardinality defaults to the job metrics
	// (those whose descriptor has Dimensions set). Each must be in AllowedDimensions:
	// the list is the place where tenant dimensions (container, pod) join, one reviewed
	// key at a time, because each multiplies the number of series. Default: none.
	Dimensions []string `mapstructure:"dimensions"`
}

// AllowedDimensions are the keys MetricsConfig.Dimensions may name.
var AllowedDimensions = []string{AttrProcessExecutableName}

// DefaultMetricsConfig enables every metric and no optional dimension.
func DefaultMetricsConfig() MetricsConfig {
	on := MetricConfig{Enabled: true}
	return MetricsConfig{
		GhostdriverStageDuration:        on,
		GhostdriverJobDuration:          on,
		GhostdriverJobs:                 on,
		GhostdriverRingBusyRatio:        on,
		GhostdriverRingBusyTime:         on,
		GhostdriverDecoderEvents:        on,
		GhostdriverDecoderUnknownEvents: on,
		GhostdriverDecoderMalformed:     on,
		GhostdriverSourceLostEvents:     on,
		GhostdriverJobEvictions:         on,
		GhostdriverJobPending:           on,
		GhostdriverJobSpansDropped:      on,
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
	case MetricSourceLostEvents:
		return &c.GhostdriverSourceLostEvents
	case MetricJobEvictions:
		return &c.GhostdriverJobEvictions
	case MetricJobPending:
		return &c.GhostdriverJobPending
	case MetricJobSpansDropped:
		return &c.GhostdriverJobSpansDropped
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
