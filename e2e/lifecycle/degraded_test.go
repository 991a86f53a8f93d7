//go:build linux

// Degraded modes: error_mode decides between failing Start and running without the
// source (reported through componentstatus); a ring buffer overrun is counted and
// exported as a metric, never a crash.
package lifecycle

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component/componentstatus"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/ghostdriver/ghostdriver/internal/assemble"
	"github.com/ghostdriver/ghostdriver/internal/event"
	"github.com/ghostdriver/ghostdriver/internal/metadata"
	"github.com/ghostdriver/ghostdriver/internal/pipeline"
	"github.com/ghostdriver/ghostdriver/internal/probe"
	"github.com/ghostdriver/ghostdriver/internal/testreq"
	gdreceiver "github.com/ghostdriver/ghostdriver/receiver/ghostdriverreceiver"
)

const childEnv = "GHOSTDRIVER_RELIABILITY_CHILD"

// TestErrorModeWithoutPrivileges re-runs TestErrorModeChild in a process without
// CAP_BPF, CAP_PERFMON and CAP_SYS_ADMIN (setpriv), where the live source cannot load.
func TestErrorModeWithoutPrivileges(t *testing.T) {
	requireRoot(t)
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		testreq.Skip(t, testreq.Setpriv, "setpriv (util-linux) not installed")
	}
	cmd := exec.Command(setpriv, "--inh-caps=-all", "--bounding-set=-bpf,-perfmon,-sys_admin", "--",
		os.Args[0], "-test.run=^TestErrorModeChild$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), childEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestErrorModeChild") {
		t.Fatalf("child: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}

func TestErrorModeChild(t *testing.T) {
	if os.Getenv(childEnv) == "" {
		t.Skip("run by TestErrorModeWithoutPrivileges in a process without capabilities")
	}
	for _, mode := range []string{gdreceiver.ErrorModeIgnore, gdreceiver.ErrorModePropagate} {
		cfg := gdreceiver.NewFactory().CreateDefaultConfig().(*gdreceiver.Config)
		cfg.ErrorMode = mode
		f := gdreceiver.NewFactory()
		tr, err := f.CreateTraces(context.Background(), receivertest.NewNopSettings(metadata.Type), cfg, consumertest.NewNop())
		if err != nil {
			t.Fatal(err)
		}
		host := &statusHost{}
		err = tr.Start(context.Background(), host)
		switch mode {
		case gdreceiver.ErrorModeIgnore:
			evs := host.snapshot()
			if err != nil || len(evs) != 1 || evs[0].Status() != componentstatus.StatusRecoverableError ||
				!strings.Contains(evs[0].Err().Error(), "CAP_BPF") {
				t.Errorf("ignore: Start %v, status %v", err, evs)
			} else {
				t.Logf("ignore: Start ok, status %v: %v", evs[0].Status(), evs[0].Err())
			}
		case gdreceiver.ErrorModePropagate:
			if err == nil || !strings.Contains(err.Error(), "CAP_BPF") {
				t.Errorf("propagate: Start %v", err)
			} else {
				t.Logf("propagate: Start: %v", err)
			}
		}
		if err := tr.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}

// A one-page ring buffer and a flood of ioctls on /dev/null (--drm-major 1) while the
// reader sleeps: reservations fail in the kernel, are counted per CPU, reach
// SourceStats.Lost and the ghostdriver.source.lost_events metric. The oracle is the
// flood's own count: each of its ioctls ends in a record with its exit event (with task
// storage its deferred entry rides in the same record), delivered or counted lost; other
// processes' ioctls on /dev/null can only add to the loss.
func TestRingBufferOverrunCounted(t *testing.T) {
	requireRoot(t)
	cfg := probe.DefaultConfig()
	cfg.DRMMajors = []uint32{1}
	cfg.RingBufferBytes = os.Getpagesize()
	cfg.PollInterval = 200 * time.Millisecond
	live, rep, err := probe.Open(cfg, nil)
	if err != nil {
		t.Fatalf("Open: %v\n%s", err, rep)
	}
	defer live.Close()

	var lostPoints []int64
	out := pipeline.Outputs{Metrics: func(_ context.Context, md pmetric.Metrics) error {
		rms := md.ResourceMetrics()
		for i := 0; i < rms.Len(); i++ {
			sms := rms.At(i).ScopeMetrics()
			for j := 0; j < sms.Len(); j++ {
				ms := sms.At(j).Metrics()
				for k := 0; k < ms.Len(); k++ {
					if m := ms.At(k); m.Name() == metadata.MetricSourceLostEvents {
						for p := 0; p < m.Sum().DataPoints().Len(); p++ {
							lostPoints = append(lostPoints, m.Sum().DataPoints().At(p).IntValue())
						}
					}
				}
			}
		}
		return nil
	}}
	src := &ownIoctls{Source: live, pid: uint32(os.Getpid())}
	p := pipeline.New(pipeline.Config{Assemble: assemble.DefaultConfig(), Metrics: metadata.DefaultMetricsConfig(), CollectionInterval: time.Hour}, src, out, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	want := uint64(ioctlFlood(t, time.Second)) // 200 ms between drains: a page holds ~40 records
	// Until every ioctl of the flood is delivered or counted lost (the reader drains the
	// ring every PollInterval).
	for deadline := time.Now().Add(10 * time.Second); src.events.Load()+live.Stats().Lost < want && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	st := p.Stats()
	own := src.events.Load()
	if st.Source.Lost == 0 || own == 0 {
		t.Fatalf("lost %d, delivered %d of the flood's %d ioctls: the overrun was not seen", st.Source.Lost, own, want)
	}
	if own > want || own+st.Source.Lost < want {
		t.Errorf("the flood made %d ioctls; %d exits delivered + %d records counted lost", want, own, st.Source.Lost)
	}
	if len(lostPoints) == 0 || lostPoints[len(lostPoints)-1] != int64(st.Source.Lost) {
		t.Fatalf("lost_events metric: %v, SourceStats.Lost %d", lostPoints, st.Source.Lost)
	}
	t.Logf("the flood's %d ioctls: %d delivered, %d records lost (metric %d)", want, own, st.Source.Lost, lostPoints[len(lostPoints)-1])
}

// ownIoctls passes a source on and counts the ioctl exits of pid it delivers.
type ownIoctls struct {
	event.Source
	pid    uint32
	events atomic.Uint64
}

func (s *ownIoctls) Run(ctx context.Context, sink event.Sink) error {
	return s.Source.Run(ctx, ownIoctlsSink{sink, s})
}

type ownIoctlsSink struct {
	event.Sink
	s *ownIoctls
}

func (k ownIoctlsSink) Consume(batch []event.Event) {
	for i := range batch {
		if e := &batch[i]; e.PID == k.s.pid && e.Kind == event.IoctlExit {
			k.s.events.Add(1)
		}
	}
	k.Sink.Consume(batch)
}
