// Hostile configuration: arbitrary YAML through the collector's own path (YAML → confmap →
// Unmarshal → Validate) never panics, and whatever Validate accepts keeps the kernel side
// and the job table bounded.
package ghostdriverreceiver

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/confmap"

	"github.com/ghostdriver/ghostdriver/internal/graph"
)

// loadYAML is what the collector does with the receiver's section of a config file.
func loadYAML(b []byte) (*Config, error, error) {
	ret, err := confmap.NewRetrievedFromYAML(b)
	if err != nil {
		return nil, err, nil
	}
	conf, err := ret.AsConf()
	if err != nil {
		return nil, err, nil
	}
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	if err := conf.Unmarshal(cfg); err != nil {
		return nil, err, nil
	}
	return cfg, nil, confmap.Validate(cfg)
}

// checkBounded holds a config that passed Validate to the limits the kernel side and the
// assembler rely on.
func checkBounded(t *testing.T, c *Config) {
	t.Helper()
	if c.MaxPendingJobs < 1 || c.MaxPendingJobs > maxPendingJobsLimit {
		t.Fatalf("max_pending_jobs %d accepted", c.MaxPendingJobs)
	}
	if c.JobTimeout <= 0 || c.ReorderWindow < 0 || c.ReorderWindow > c.JobTimeout || c.FlushInterval <= 0 || c.CollectionInterval <= 0 {
		t.Fatalf("durations accepted: %+v", c)
	}
	if c.Source == SourceReplay && (c.Replay.Speed < 0 || math.IsNaN(c.Replay.Speed) || math.IsInf(c.Replay.Speed, 0)) {
		t.Fatalf("replay.speed %v accepted", c.Replay.Speed)
	}
	if c.Source != SourceLive {
		return
	}
	l := c.Live
	rb := l.RingBufferSize
	if rb < minRingBufferBytes || rb > maxRingBufferBytes || rb&(rb-1) != 0 || rb%4096 != 0 {
		t.Fatalf("ring_buffer_size %d accepted", rb)
	}
	if len(l.DRMMajors) == 0 || len(l.DRMMajors) > graph.MaxDRMMajors {
		t.Fatalf("%d drm_majors accepted (the kernel filters %d)", len(l.DRMMajors), graph.MaxDRMMajors)
	}
	if len(l.BOValidationFunctions) > maxFunctions || len(l.RunJobFunctions) > maxFunctions || len(l.IRQNames) > maxFunctions {
		t.Fatalf("unbounded function/irq lists accepted: %d %d %d", len(l.BOValidationFunctions), len(l.RunJobFunctions), len(l.IRQNames))
	}
	for _, n := range append(append([]string{}, l.BOValidationFunctions...), l.RunJobFunctions...) {
		if strings.ContainsAny(n, " /\x00\n") || len(n) > 128 {
			t.Fatalf("function name %q accepted", n)
		}
	}
	if len(l.CUDA.Libraries) > maxCUDALibraries || (l.CUDA.RescanInterval != 0 && (l.CUDA.RescanInterval < minCUDARescan || l.CUDA.RescanInterval > maxCUDARescan)) {
		t.Fatalf("live.cuda accepted: %d libraries, rescan %v", len(l.CUDA.Libraries), l.CUDA.RescanInterval)
	}
	if l.PollInterval <= 0 {
		t.Fatalf("poll_interval %v accepted", l.PollInterval)
	}
}

func FuzzConfig(f *testing.F) {
	// Seeds: every section of every testdata file, valid and invalid.
	files, _ := filepath.Glob(filepath.Join("testdata", "*.yaml"))
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, s := range []string{
		"",
		"source: replay\nreplay: {path: x, speed: .nan}\n",
		"source: replay\nreplay: {path: x, speed: .inf}\n",
		"source: live\nlive: {drm_majors: [1,2,3,4,5,6,7,8,9]}\n",
		"live: {ring_buffer_size: -1, poll_interval: -5s}\n",
		"job_timeout: 9223372036854775807ns\nreorder_window: -1ns\n",
		"metrics: {dimensions: [process.pid]}\n",
		"context: {tiers: [otep4947, otep4947]}\n",
		"max_pending_jobs: 1e300\n",
		"live: {irq_names: [\"a b\", \"\\x00\"]}\n",
		"source: [live]\n",
		"&a [*a]\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		cfg, _, verr := loadYAML(b)
		if cfg == nil || verr != nil {
			return
		}
		checkBounded(t, cfg)
	})
}

// The limits fixed while writing FuzzConfig: Validate used to accept up to 16 DRM majors
// (the kernel filters 8, so Start failed) and a NaN or infinite replay speed (replay.New
// refused it at Start). Both are now rejected by `otelcol validate`.
func TestValidateMatchesKernelAndSourceLimits(t *testing.T) {
	for name, yaml := range map[string]string{
		"nine majors":    "source: live\nlive: {drm_majors: [1,2,3,4,5,6,7,8,9]}\n",
		"NaN speed":      "source: replay\nreplay: {path: x, speed: .nan}\n",
		"infinite speed": "source: replay\nreplay: {path: x, speed: .inf}\n",
	} {
		cfg, uerr, verr := loadYAML([]byte(yaml))
		if uerr != nil {
			t.Fatalf("%s: unmarshal: %v", name, uerr)
		}
		if verr == nil {
			t.Errorf("%s: accepted: %+v", name, cfg)
		}
	}
	if _, _, verr := loadYAML([]byte("source: live\nlive: {drm_majors: [1,2,3,4,5,6,7,8]}\n")); verr != nil {
		t.Errorf("eight majors refused: %v", verr)
	}
}
