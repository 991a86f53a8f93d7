// Receiver lifecycle and end-to-end replay through the collector-facing API.
package ghostdriverreceiver

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.uber.org/goleak"

	"github.com/ghostdriver/ghostdriver/internal/metadata"
	"github.com/ghostdriver/ghostdriver/internal/rawcapture"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// The OpenCensus/otel global machinery started by the collector libraries.
		goleak.IgnoreTopFunction("go.opencensus.io/stats/view.(*worker).start"),
	)
}

var bundledCapture = filepath.Join("..", "..", "testdata", "captures", "gpuvis_amdgpu_4.11_full.trace-cmd-report.txt.gz")

func replayConfig(t *testing.T) *Config {
	t.Helper()
	if _, err := os.Stat(bundledCapture); err != nil {
		t.Fatalf("bundled capture missing: %v", err)
	}
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	cfg.Source = SourceReplay
	cfg.Replay.Path = bundledCapture
	cfg.Replay.Epoch = "1500458400000000000"
	cfg.FlushInterval = 10 * time.Millisecond
	cfg.CollectionInterval = 50 * time.Millisecond
	return cfg
}

func TestShutdownWithoutStartAndTwice(t *testing.T) {
	f := NewFactory()
	set := receivertest.NewNopSettings(metadata.Type)
	r, err := f.CreateTraces(context.Background(), set, f.CreateDefaultConfig(), consumertest.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := r.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestTracesAndMetricsShareOneInstance(t *testing.T) {
	f := NewFactory()
	set := receivertest.NewNopSettings(metadata.Type)
	cfg := replayConfig(t)
	tr, err := f.CreateTraces(context.Background(), set, cfg, consumertest.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	mr, err := f.CreateMetrics(context.Background(), set, cfg, consumertest.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	if tr != mr {
		t.Fatal("traces and metrics receivers of one ID must be the same instance")
	}
	if err := tr.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	// After Shutdown the ID is free again: a new instance is created.
	tr2, err := f.CreateTraces(context.Background(), set, cfg, consumertest.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	if tr2 == tr {
		t.Fatal("a shut-down instance was handed out again")
	}
	_ = tr2.Shutdown(context.Background())
}

// The bundled real capture through the receiver: job spans with stage children reach the
// traces consumer (every job of the capture, every complete one with its six stages, as a
// second reading of the capture counts them), metrics reach the metrics consumer,
// Shutdown leaves nothing running.
func TestReplayEndToEnd(t *testing.T) {
	t.Run("stage_spans", func(t *testing.T) { testReplayEndToEnd(t, true) })
	t.Run("no_stage_spans", func(t *testing.T) { testReplayEndToEnd(t, false) })
}

// testReplayEndToEnd replays the bundled capture through the receiver; stage_spans off,
// every job is still a gpu.job span and the stage metric is still there, with no child.
func testReplayEndToEnd(t *testing.T, stageSpans bool) {
	f := NewFactory()
	set := receivertest.NewNopSettings(metadata.Type)
	cfg := replayConfig(t)
	cfg.StageSpans = stageSpans
	traces := new(consumertest.TracesSink)
	metrics := new(consumertest.MetricsSink)
	tr, err := f.CreateTraces(context.Background(), set, cfg, traces)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.CreateMetrics(context.Background(), set, cfg, metrics); err != nil {
		t.Fatal(err)
	}
	if err := tr.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	r := tr.(*ghostReceiver)
	select {
	case <-r.done:
	case <-time.After(60 * time.Second):
		t.Fatal("replay of the bundled capture did not finish in 60s")
	}
	if err := tr.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}

	// The oracle: the capture read a second way (internal/rawcapture), not the assembler's
	// own counts.
	raw, err := rawcapture.Read(bundledCapture)
	if err != nil {
		t.Fatal(err)
	}
	var spans []rawcapture.Span
	for _, td := range traces.AllTraces() {
		forEachSpan(td, func(s ptrace.Span) {
			attrs := map[string]string{}
			s.Attributes().Range(func(k string, v pcommon.Value) bool {
				if v.Type() == pcommon.ValueTypeStr {
					attrs[k] = v.Str()
				}
				return true
			})
			spans = append(spans, rawcapture.Span{ID: s.SpanID().String(), Parent: s.ParentSpanID().String(), Name: s.Name(), Attrs: attrs})
		})
	}
	for _, bad := range raw.CheckCompleteJobs(rawcapture.JobTree(spans), stageSpans) {
		t.Error(bad)
	}
	if len(metrics.AllMetrics()) == 0 {
		t.Error("no metrics reached the metrics consumer")
	}
	stageMetric := false
	for _, md := range metrics.AllMetrics() {
		rms := md.ResourceMetrics()
		for i := 0; i < rms.Len(); i++ {
			for j := 0; j < rms.At(i).ScopeMetrics().Len(); j++ {
				ms := rms.At(i).ScopeMetrics().At(j).Metrics()
				for k := 0; k < ms.Len(); k++ {
					stageMetric = stageMetric || ms.At(k).Name() == metadata.MetricStageDuration && ms.At(k).Histogram().DataPoints().Len() > 0
				}
			}
		}
	}
	if !stageMetric {
		t.Error("no ghostdriver.stage.duration data points")
	}
}

func forEachSpan(td ptrace.Traces, fn func(ptrace.Span)) {
	for i := 0; i < td.ResourceSpans().Len(); i++ {
		ss := td.ResourceSpans().At(i).ScopeSpans()
		for j := 0; j < ss.Len(); j++ {
			spans := ss.At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				fn(spans.At(k))
			}
		}
	}
}

// A replay of a file that does not exist fails Start with the file named (propagate),
// and keeps the collector up under error_mode: ignore.
func TestStartErrorModes(t *testing.T) {
	for _, mode := range []string{ErrorModePropagate, ErrorModeIgnore} {
		t.Run(mode, func(t *testing.T) {
			f := NewFactory()
			cfg := replayConfig(t)
			cfg.Replay.Path = filepath.Join(t.TempDir(), "missing.trace")
			cfg.ErrorMode = mode
			tr, err := f.CreateTraces(context.Background(), receivertest.NewNopSettings(metadata.Type), cfg, consumertest.NewNop())
			if err != nil {
				t.Fatal(err)
			}
			err = tr.Start(context.Background(), componenttest.NewNopHost())
			if mode == ErrorModePropagate && err == nil {
				t.Fatal("Start succeeded on a missing capture")
			}
			if mode == ErrorModeIgnore && err != nil {
				t.Fatalf("error_mode ignore: Start failed: %v", err)
			}
			if err := tr.Shutdown(context.Background()); err != nil {
				t.Fatal(err)
			}
		})
	}
}
