// One receiver, one pipeline: with live.cuda on, the DRM live source and the CUDA source
// are two branches of the same pipeline, and every metrics export carries both.
package ghostdriverreceiver

import (
	"context"
	"os"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"golang.org/x/sys/unix"

	"github.com/ghostdriver/ghostdriver/internal/cuda/cudatest"
	"github.com/ghostdriver/ghostdriver/internal/metadata"
)

// sumIn is the sum of metric name's points in md, and whether md has it.
func sumIn(md pmetric.Metrics, name string) (int64, bool) {
	var total int64
	found := false
	for i := 0; i < md.ResourceMetrics().Len(); i++ {
		sms := md.ResourceMetrics().At(i).ScopeMetrics()
		for j := 0; j < sms.Len(); j++ {
			ms := sms.At(j).Metrics()
			for k := 0; k < ms.Len(); k++ {
				if m := ms.At(k); m.Name() == name && m.Type() == pmetric.MetricTypeSum {
					found = true
					for n := 0; n < m.Sum().DataPoints().Len(); n++ {
						total += m.Sum().DataPoints().At(n).IntValue()
					}
				}
			}
		}
	}
	return total, found
}

func TestLiveDRMAndCUDAShareOnePipeline(t *testing.T) {
	cudatest.Need(t)
	stubs := cudatest.Build(t)
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	// The DRM branch follows major 1 (/dev/null): this host has no DRM driver, and the
	// test's own ioctls on /dev/null are then ioctl events of that branch.
	cfg.Live.DRMMajors = []uint32{1}
	cfg.Live.CUDA.Enabled = true
	cfg.Live.CUDA.Libraries = stubs.Libraries()
	cfg.Live.CUDA.RescanInterval = 0
	cfg.Tenant.Enabled = false
	cfg.FlushInterval = 10 * time.Millisecond
	set := receivertest.NewNopSettings(metadata.Type)
	traces, metrics := new(consumertest.TracesSink), new(consumertest.MetricsSink)
	f := NewFactory()
	tr, err := f.CreateTraces(context.Background(), set, cfg, traces)
	if err != nil {
		t.Fatal(err)
	}
	mr, err := f.CreateMetrics(context.Background(), set, cfg, metrics)
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	if err := mr.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	r := tr.(*ghostReceiver)
	if st := r.pipe.Stats(); !st.DRM || st.CUDA == nil {
		_ = tr.Shutdown(context.Background())
		t.Fatalf("pipeline branches: DRM %v, CUDA %v; want both in one pipeline", st.DRM, st.CUDA != nil)
	}

	const ioctls = 50
	null, err := os.Open("/dev/null")
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < ioctls; i++ {
		_, _ = unix.IoctlGetTermios(int(null.Fd()), unix.TCGETS) // ENOTTY; the syscall is what counts
	}
	null.Close()
	pid := cudatest.Run(t, stubs.App, 10, nil, nil, nil)
	if err := tr.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}

	// The final collection is one Metrics: the DRM branch's decoded events (at least
	// this test's ioctls) beside the CUDA branch's launches.
	all := metrics.AllMetrics()
	if len(all) == 0 {
		t.Fatal("no metrics exported")
	}
	last := all[len(all)-1]
	events, drm := sumIn(last, metadata.MetricDecoderEvents)
	launches, cuda := sumIn(last, metadata.MetricCUDALaunches)
	if !drm || !cuda || events < ioctls || launches == 0 {
		t.Errorf("final metrics: %s %d (present %v, want ≥ %d), %s %d (present %v, want > 0): want both branches in one export",
			metadata.MetricDecoderEvents, events, drm, ioctls, metadata.MetricCUDALaunches, launches, cuda)
	}
	subs := 0
	for _, td := range traces.AllTraces() {
		for i := 0; i < td.ResourceSpans().Len(); i++ {
			rs := td.ResourceSpans().At(i)
			if p, _ := rs.Resource().Attributes().Get("process.pid"); p.Int() != int64(pid) {
				continue
			}
			for j := 0; j < rs.ScopeSpans().Len(); j++ {
				for k := 0; k < rs.ScopeSpans().At(j).Spans().Len(); k++ {
					if rs.ScopeSpans().At(j).Spans().At(k).Name() == metadata.SpanCUDASubmission {
						subs++
					}
				}
			}
		}
	}
	if subs == 0 {
		t.Error("no cuda.submission span of the workload reached the traces consumer")
	}
}
