// Config loading and validation, table-driven over testdata/*.yaml.
package ghostdriverreceiver

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"

	"github.com/ghostdriver/ghostdriver/internal/metadata"
	"github.com/ghostdriver/ghostdriver/internal/sample"
)

func loadConfig(t *testing.T, file, id string) (*Config, error) {
	t.Helper()
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	cfg := NewFactory().CreateDefaultConfig()
	sub, err := cm.Sub(id)
	if err != nil {
		t.Fatal(err)
	}
	if err := sub.Unmarshal(cfg); err != nil {
		return nil, err
	}
	return cfg.(*Config), confmap.Validate(cfg)
}

func TestConfigStruct(t *testing.T) {
	if err := componenttest.CheckConfigStruct(NewFactory().CreateDefaultConfig()); err != nil {
		t.Fatal(err)
	}
}

func TestDefaultConfigIsValidLive(t *testing.T) {
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	if cfg.Source != SourceLive {
		t.Fatalf("default source = %q, want live", cfg.Source)
	}
	if err := confmap.Validate(cfg); err != nil {
		t.Fatalf("default config invalid: %v", err)
	}
	if len(cfg.Live.DRMMajors) != 1 || cfg.Live.DRMMajors[0] != 226 {
		t.Errorf("default drm_majors = %v, want [226]", cfg.Live.DRMMajors)
	}
}

func TestLoadConfig(t *testing.T) {
	def := NewFactory().CreateDefaultConfig().(*Config)

	cfg, err := loadConfig(t, "config.yaml", component.NewID(metadata.Type).String())
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Source != def.Source || cfg.JobTimeout != def.JobTimeout || !cfg.StageSpans || !def.StageSpans {
		t.Errorf("empty section must give the defaults, got %+v", cfg)
	}

	cfg, err = loadConfig(t, "config.yaml", component.NewIDWithName(metadata.Type, "custom").String())
	if err != nil {
		t.Fatal(err)
	}
	want := Config{
		Source:             SourceReplay,
		Replay:             ReplayConfig{Path: "/captures/amdgpu.trace.gz", Epoch: "2017-07-19T10:00:00Z", Speed: 1},
		Live:               def.Live,
		JobTimeout:         30 * time.Second,
		MaxPendingJobs:     5000,
		ReorderWindow:      50 * time.Millisecond,
		FlushInterval:      time.Second,
		CollectionInterval: 30 * time.Second,
		StageSpans:         false,
		ErrorMode:          ErrorModeIgnore,
		Metrics:            def.Metrics,
	}
	if !configEqual(cfg, &want) {
		t.Errorf("custom config:\n got %+v\nwant %+v", *cfg, want)
	}

	cfg, err = loadConfig(t, "config.yaml", component.NewIDWithName(metadata.Type, "live").String())
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Live.DRMMajors; len(got) != 2 || got[0] != 226 || got[1] != 195 {
		t.Errorf("drm_majors = %v", got)
	}
	if cfg.Live.RingBufferSize != 16<<20 || cfg.Live.PollInterval != 5*time.Millisecond {
		t.Errorf("live config = %+v", cfg.Live)
	}
	if !slices.Equal(cfg.Context.Tiers, []string{"traceparent", "otep4947"}) || cfg.Context.OBIMapPath != "/run/obi/bpf/traces_ctx_v1" ||
		cfg.Context.MaxWait != 250*time.Millisecond || cfg.Context.enrichMaxWait() != 250*time.Millisecond {
		t.Errorf("context = %+v", cfg.Context)
	}
	if !cfg.Tenant.Enabled || cfg.Tenant.ProcRoot != "/host/proc" || cfg.Tenant.SysRoot != "/sys" {
		t.Errorf("tenant = %+v", cfg.Tenant)
	}
	if !slices.Equal(cfg.Metrics.Dimensions, []string{"service.name", "k8s.pod.uid"}) {
		t.Errorf("dimensions = %v", cfg.Metrics.Dimensions)
	}
	if !slices.Equal(def.Context.Tiers, []string{"otep4947", "obi", "traceparent"}) || !slices.Equal(def.Metrics.Dimensions, []string{"service.name"}) {
		t.Errorf("defaults: tiers %v dimensions %v", def.Context.Tiers, def.Metrics.Dimensions)
	}
	if def.Context.MaxWait != time.Second {
		t.Errorf("default context.max_wait %v, want 1s", def.Context.MaxWait)
	}
	// sampling: on for live by default, off for a replay unless enabled
	if def.Sampling.pipeline(SourceLive) == nil || def.Sampling.pipeline(SourceReplay) != nil {
		t.Errorf("default sampling: live %v, replay %v; want on, off", def.Sampling.pipeline(SourceLive), def.Sampling.pipeline(SourceReplay))
	}
	if got, want := def.Sampling.sampler(), sample.DefaultConfig(); got != want {
		t.Errorf("default sampling %+v, want the sampler's defaults %+v", got, want)
	}
	cfg, err = loadConfig(t, "config.yaml", component.NewIDWithName(metadata.Type, "sampled").String())
	if err != nil {
		t.Fatal(err)
	}
	wantSampling := sample.Config{SpansPerSecond: 2000, Probability: 0.5, ParentBased: false, Tick: 250 * time.Millisecond,
		Keep: sample.KeepConfig{Failed: true, Incomplete: false, LostEvents: true, SlowestWindow: 30 * time.Second,
			LatencyAbove: 50 * time.Millisecond, DependencyWaitAbove: 5 * time.Millisecond}}
	if sc := cfg.Sampling.pipeline(cfg.Source); sc == nil || *sc != wantSampling {
		t.Errorf("sampling %+v, want %+v", sc, wantSampling)
	}
	if never := (ContextConfig{}); never.enrichMaxWait() >= 0 {
		t.Errorf("context.max_wait 0 must mean never hold, enrich gets %v", never.enrichMaxWait())
	}
}

func configEqual(a, b *Config) bool {
	return a.Source == b.Source && a.Replay == b.Replay && a.JobTimeout == b.JobTimeout &&
		a.MaxPendingJobs == b.MaxPendingJobs && a.ReorderWindow == b.ReorderWindow &&
		a.FlushInterval == b.FlushInterval && a.CollectionInterval == b.CollectionInterval &&
		a.ErrorMode == b.ErrorMode && a.StageSpans == b.StageSpans
}

func TestInvalidConfigs(t *testing.T) {
	cases := map[string]string{
		"bad_source":           `source must be "live" or "replay", got "gpu"`,
		"replay_no_path":       "replay.path must name a capture file",
		"bad_epoch":            "replay.epoch",
		"negative_speed":       "replay.speed must be ≥ 0",
		"zero_timeout":         "job_timeout must be positive",
		"huge_pending":         "max_pending_jobs must be in 1..",
		"bad_error_mode":       `error_mode must be "propagate" or "ignore", got "panic"`,
		"bad_ringbuf":          "live.ring_buffer_size must be a power of two",
		"bad_records":          `live.records must be jobs or events, got "stream"`,
		"jobs_classic":         "classic_tracepoints needs records: events",
		"jobs_fence_filter":    "fence_filter needs records: events",
		"bad_major":            "live.drm_majors: 0 is not a valid device major",
		"bad_function":         "is not a kernel symbol name",
		"reorder_gt_timeout":   "reorder_window must be in 0..job_timeout",
		"bad_tier":             `context.tiers: unknown context tier "env"`,
		"max_wait":             "context.max_wait must be between 0 (never hold a job) and 1m0s, got 2m0s",
		"pid_dimension":        `"process.pid" is not an allowed dimension`,
		"sampling_probability": "sampling.probability: 1.5 is out of range (0, 1]",
		"sampling_nothing":     "sampling.spans_per_second: 0 with sampling.parent_based off and every keep rule off exports no span at all",
		"sampling_latency":     "sampling.keep.latency_above: -1s is negative",
	}
	for name, want := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := loadConfig(t, "invalid_"+name+".yaml", component.NewID(metadata.Type).String())
			if err == nil {
				t.Fatalf("invalid_%s.yaml validated", name)
			}
			if !strings.Contains(err.Error(), want) {
				t.Fatalf("error %q does not say %q", err, want)
			}
		})
	}
}

// The collector unmarshals with ErrorUnused: a misspelt key is an error, not ignored.
func TestUnknownKeyRejected(t *testing.T) {
	cm := confmap.NewFromStringMap(map[string]any{"sauce": "live"})
	cfg := NewFactory().CreateDefaultConfig()
	if err := cm.Unmarshal(cfg); err == nil || !strings.Contains(err.Error(), "sauce") {
		t.Fatalf("unknown key accepted: %v", err)
	}
}
