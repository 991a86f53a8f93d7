// Tests of the metric configuration: defaults, lookup by name and dimension validation.
package metadata

import (
	"reflect"
	"strings"
	"testing"
)

func TestDefaultMetricsConfigEnablesEveryDescribedMetric(t *testing.T) {
	cfg := DefaultMetricsConfig()
	for _, d := range Metrics {
		if cfg.Metric(d.Name) == nil {
			t.Errorf("%s: described but has no MetricsConfig field", d.Name)
			continue
		}
		if !cfg.Enabled(d.Name) {
			t.Errorf("%s: disabled by default", d.Name)
		}
	}
	if cfg.Enabled("ghostdriver.nonexistent") {
		t.Error("unknown metric reported enabled")
	}
	if len(cfg.Dimensions) != 1 || cfg.Dimensions[0] != AttrServiceName {
		t.Errorf("default dimensions = %v, want [service.name]", cfg.Dimensions)
	}
}

// Every MetricConfig field's mapstructure key must be a described metric and resolve to
// that very field, so the config and the descriptor table cannot drift apart.
func TestMetricsConfigFieldsMatchDescriptors(t *testing.T) {
	var cfg MetricsConfig
	v := reflect.ValueOf(&cfg).Elem()
	ty := v.Type()
	fields := 0
	for i := 0; i < ty.NumField(); i++ {
		f := ty.Field(i)
		if f.Type != reflect.TypeOf(MetricConfig{}) {
			continue
		}
		fields++
		key := f.Tag.Get("mapstructure")
		if _, ok := Desc(key); !ok {
			t.Errorf("field %s: key %q is not a described metric", f.Name, key)
		}
		if got := cfg.Metric(key); got != v.Field(i).Addr().Interface().(*MetricConfig) {
			t.Errorf("Metric(%q) does not return field %s", key, f.Name)
		}
	}
	if fields != len(Metrics) {
		t.Errorf("%d MetricConfig fields, %d described metrics", fields, len(Metrics))
	}
}

func TestMetricsConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		dims    []string
		wantErr string
	}{
		{nil, ""},
		{[]string{AttrProcessExecutableName}, ""},
		{[]string{AttrK8sPodUID, AttrContainerID, AttrServiceName}, ""},
		{[]string{"process.pid"}, `"process.pid" is not an allowed dimension`},
		{[]string{"thread.id"}, `"thread.id" is not an allowed dimension`},
		{[]string{AttrProcessExecutableName, AttrProcessExecutableName}, "listed twice"},
	} {
		cfg := DefaultMetricsConfig()
		cfg.Dimensions = tc.dims
		err := cfg.Validate()
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("%v: unexpected error %v", tc.dims, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%v: error %v, want it to contain %q", tc.dims, err, tc.wantErr)
		}
	}
}

func TestDurationBoundsAscending(t *testing.T) {
	for i := 1; i < len(DurationBounds); i++ {
		if DurationBounds[i] <= DurationBounds[i-1] {
			t.Fatalf("bounds not strictly ascending at %d: %v", i, DurationBounds)
		}
	}
}
