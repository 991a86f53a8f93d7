// The receiver's health in the collector's internal telemetry, read with the helpers
// mdatagen generates (internal/metadatatest) from a componenttest.Telemetry: a capture
// with known losses in, the counts out, equal to the data stream's health metrics. And
// the embedder's options: host roots as defaults, a job observer, a shutdown hook.
package ghostdriverreceiver

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/ghostdriver/ghostdriver/internal/metadata"
	"github.com/ghostdriver/ghostdriver/internal/metadatatest"
)

// snippetsCapture has 12 malformed lines and 7 jobs evicted by the job timeout (the
// capture's own lines: testdata/captures/README.md), 8 jobs in all.
var snippetsCapture = filepath.Join("..", "..", "testdata", "captures", "snippets_real_lines.txt")

// replayToEnd replays path through a receiver made by f with set's telemetry until the
// capture's end is logged, and returns the last metrics it sent; stop shuts it down.
func replayToEnd(t *testing.T, f func() (*ghostReceiver, *consumertest.MetricsSink, *observer.ObservedLogs)) (md pmetric.Metrics, stop func()) {
	t.Helper()
	r, sink, logs := f()
	if err := r.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	stop = func() {
		if err := r.Shutdown(context.Background()); err != nil {
			t.Error(err)
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for logs.FilterMessage("ghostdriver source finished (end of capture)").Len() == 0 || sink.DataPointCount() == 0 {
		if time.Now().After(deadline) {
			stop()
			t.Fatalf("the replay did not end: %v", logs.All())
		}
		time.Sleep(10 * time.Millisecond)
	}
	// The pipeline's final export is sent before the end is logged: the last metrics hold
	// the capture's final counts.
	all := sink.AllMetrics()
	return all[len(all)-1], stop
}

func TestHealthInInternalTelemetry(t *testing.T) {
	tt := componenttest.NewTelemetry()
	defer func() {
		if err := tt.Shutdown(context.Background()); err != nil {
			t.Error(err)
		}
	}()
	md, stop := replayToEnd(t, func() (*ghostReceiver, *consumertest.MetricsSink, *observer.ObservedLogs) {
		cfg := replayConfig(t)
		cfg.Replay.Path = snippetsCapture
		set := metadatatest.NewSettings(tt)
		core, logs := observer.New(zapcore.InfoLevel)
		set.Logger = zap.New(core)
		sink := new(consumertest.MetricsSink)
		m, err := NewFactory().CreateMetrics(context.Background(), set, cfg, sink)
		if err != nil {
			t.Fatal(err)
		}
		return m.(*ghostReceiver), sink, logs
	})
	defer stop()

	opts := []metricdatatest.Option{metricdatatest.IgnoreTimestamp()}
	point := func(v int64, kv ...attribute.KeyValue) metricdata.DataPoint[int64] {
		return metricdata.DataPoint[int64]{Value: v, Attributes: attribute.NewSet(kv...)}
	}
	metadatatest.AssertEqualGhostdriverDecoderMalformed(t, tt, []metricdata.DataPoint[int64]{point(12)}, opts...)
	metadatatest.AssertEqualGhostdriverJobEvictions(t, tt, []metricdata.DataPoint[int64]{
		point(7, attribute.String(metadata.AttrEvictionReason, metadata.EvictionReasonTimeout)),
		point(0, attribute.String(metadata.AttrEvictionReason, metadata.EvictionReasonMaxPending)),
	}, opts...)
	metadatatest.AssertEqualGhostdriverSourceLostEvents(t, tt, []metricdata.DataPoint[int64]{point(0)}, opts...)
	metadatatest.AssertEqualGhostdriverJobSpansDropped(t, tt, []metricdata.DataPoint[int64]{point(0)}, opts...)
	// A replay has no kernel side, no CUDA branch and no sampler: nothing observed.
	for _, name := range []string{"otelcol_ghostdriver_source_kernel_drops", "otelcol_ghostdriver_cuda_submission_spans_dropped",
		"otelcol_ghostdriver_sampling_spans_sampled_out"} {
		if m, err := tt.GetMetric(name); err == nil {
			t.Errorf("%s observed for a replay: %+v", name, m)
		}
	}

	// The same counts as the data stream's health metrics.
	internal := map[string]string{
		metadata.MetricDecoderMalformed: "otelcol_ghostdriver_decoder_malformed",
		metadata.MetricJobEvictions:     "otelcol_ghostdriver_job_evictions",
		metadata.MetricSourceLostEvents: "otelcol_ghostdriver_source_lost_events",
		metadata.MetricJobSpansDropped:  "otelcol_ghostdriver_job_spans_dropped",
	}
	ms := md.ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics()
	found := 0
	for i := 0; i < ms.Len(); i++ {
		m := ms.At(i)
		name, ok := internal[m.Name()]
		if !ok {
			continue
		}
		found++
		got, err := tt.GetMetric(name)
		if err != nil {
			t.Fatal(err)
		}
		want := map[attribute.Distinct]int64{}
		for k := 0; k < m.Sum().DataPoints().Len(); k++ {
			dp := m.Sum().DataPoints().At(k)
			var kv []attribute.KeyValue
			for key, v := range dp.Attributes().All() {
				kv = append(kv, attribute.String(key, v.Str()))
			}
			set := attribute.NewSet(kv...)
			want[set.Equivalent()] = dp.IntValue()
		}
		dps := got.Data.(metricdata.Sum[int64]).DataPoints
		if len(dps) != len(want) {
			t.Errorf("%s: %d points, the data stream's %s has %d", name, len(dps), m.Name(), len(want))
		}
		for _, dp := range dps {
			if v, ok := want[dp.Attributes.Equivalent()]; !ok || v != dp.Value {
				t.Errorf("%s %v = %d; the data stream's %s says %d", name, dp.Attributes.ToSlice(), dp.Value, m.Name(), v)
			}
		}
	}
	if found != len(internal) {
		t.Fatalf("%d of the %d health metrics in the data stream", found, len(internal))
	}
}

func TestEmbedderOptions(t *testing.T) {
	var jobs []JobRecord
	shutdowns := 0
	f := NewFactoryWithOptions(
		WithHostRoots("/host/proc", ""),
		WithJobObserver(func(j JobRecord) { jobs = append(jobs, j) }),
		WithOnShutdown(func() { shutdowns++ }),
	)
	def := f.CreateDefaultConfig().(*Config)
	if def.Tenant.ProcRoot != "/host/proc" || def.Tenant.SysRoot != "/sys" {
		t.Errorf("tenant roots %q, %q: want the embedder's /host/proc and the default /sys", def.Tenant.ProcRoot, def.Tenant.SysRoot)
	}
	_, stop := replayToEnd(t, func() (*ghostReceiver, *consumertest.MetricsSink, *observer.ObservedLogs) {
		cfg := replayConfig(t)
		cfg.Replay.Path = snippetsCapture
		set := metadatatest.NewSettings(componenttest.NewTelemetry())
		core, logs := observer.New(zapcore.InfoLevel)
		set.Logger = zap.New(core)
		sink := new(consumertest.MetricsSink)
		m, err := f.CreateMetrics(context.Background(), set, cfg, sink)
		if err != nil {
			t.Fatal(err)
		}
		return m.(*ghostReceiver), sink, logs
	})
	stop()
	if shutdowns != 1 {
		t.Errorf("shutdown hook called %d times", shutdowns)
	}
	// 1 completed and 7 evicted jobs (the CLI's summary of the capture says the same)
	outcomes := map[string]int{}
	for _, j := range jobs {
		outcomes[j.Outcome]++
	}
	if len(jobs) != 8 || outcomes["completed"] != 1 || outcomes["evicted"] != 7 {
		t.Fatalf("observed %d jobs %v: want 1 completed and 7 evicted", len(jobs), outcomes)
	}
	for _, j := range jobs {
		if j.Outcome != "completed" {
			continue
		}
		// its stages: scheduler_queue and execution 100µs each, job 200µs (the summary's p50)
		if j.Driver != "amdgpu" || j.Ring != "gfx" || j.Duration != 200*time.Microsecond || len(j.Stages) != 6 {
			t.Errorf("completed job %+v", j)
		}
	}
}

// The sampler's counts in the internal telemetry are the data stream's: spans sampled out
// by reason, summed over kinds; nothing while sampling is off (the replay above).
func TestSamplingInInternalTelemetry(t *testing.T) {
	tt := componenttest.NewTelemetry()
	defer func() {
		if err := tt.Shutdown(context.Background()); err != nil {
			t.Error(err)
		}
	}()
	md, stop := replayToEnd(t, func() (*ghostReceiver, *consumertest.MetricsSink, *observer.ObservedLogs) {
		cfg := replayConfig(t)
		cfg.Replay.Path = snippetsCapture
		on := true
		cfg.Sampling.Enabled = &on
		cfg.Sampling.SpansPerSecond = 0 // only the keep rules, and of them only incomplete
		cfg.Sampling.Keep = SamplingKeepConfig{Incomplete: true}
		set := metadatatest.NewSettings(tt)
		core, logs := observer.New(zapcore.InfoLevel)
		set.Logger = zap.New(core)
		sink := new(consumertest.MetricsSink)
		m, err := NewFactory().CreateMetrics(context.Background(), set, cfg, sink)
		if err != nil {
			t.Fatal(err)
		}
		// the same receiver with a traces consumer: the sampler decides only spans
		if _, err := NewFactory().CreateTraces(context.Background(), set, cfg, new(consumertest.TracesSink)); err != nil {
			t.Fatal(err)
		}
		return m.(*ghostReceiver), sink, logs
	})
	defer stop()
	want := map[string]int64{}
	for _, rm := range md.ResourceMetrics().All() {
		for _, sm := range rm.ScopeMetrics().All() {
			for _, m := range sm.Metrics().All() {
				if m.Name() != metadata.MetricSamplingSpans {
					continue
				}
				for _, dp := range m.Sum().DataPoints().All() {
					if d, _ := dp.Attributes().Get(metadata.AttrSamplingDecision); d.Str() == metadata.SamplingSampledOut {
						r, _ := dp.Attributes().Get(metadata.AttrSamplingReason)
						want[r.Str()] += dp.IntValue()
					}
				}
			}
		}
	}
	if len(want) == 0 {
		var names []string
		for _, rm := range md.ResourceMetrics().All() {
			for _, sm := range rm.ScopeMetrics().All() {
				for _, m := range sm.Metrics().All() {
					names = append(names, m.Name())
				}
			}
		}
		t.Fatalf("the data stream counts no span sampled out (metrics %v): the test would prove nothing", names)
	}
	got, err := tt.GetMetric("otelcol_ghostdriver_sampling_spans_sampled_out")
	if err != nil {
		t.Fatal(err)
	}
	dps := got.Data.(metricdata.Sum[int64]).DataPoints
	if len(dps) != len(want) {
		t.Errorf("%d points, the data stream has %d reasons: %v", len(dps), len(want), want)
	}
	for _, dp := range dps {
		r, _ := dp.Attributes.Value(attribute.Key(metadata.AttrSamplingReason))
		if want[r.AsString()] != dp.Value {
			t.Errorf("sampled out for %s: %d, the data stream says %d", r.AsString(), dp.Value, want[r.AsString()])
		}
	}
}
