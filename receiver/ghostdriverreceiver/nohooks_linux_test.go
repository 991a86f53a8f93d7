// Start on a host without GPU job hooks (this CI host: no DRM driver, no gpu_scheduler
// events) must warn once, with the verdict, instead of running silently; and Start logs
// the receiver's version.
package ghostdriverreceiver

import (
	"context"
	"os"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/ghostdriver/ghostdriver/internal/metadata"
	"github.com/ghostdriver/ghostdriver/internal/testreq"
	"github.com/ghostdriver/ghostdriver/internal/version"
)

func TestLiveStartWarnsWithoutGPUHooks(t *testing.T) {
	if os.Geteuid() != 0 {
		testreq.Skip(t, testreq.Root, "needs root: Start loads the eBPF programs of the live source (CI runs as root)")
	}
	// The host facts, read here independently of the receiver: the test is only
	// meaningful where no GPU job tracepoint can exist.
	if _, err := os.Stat("/sys/module/gpu_sched"); err == nil {
		testreq.Skip(t, testreq.NoDRM, "this host has the DRM GPU scheduler loaded: job hooks may attach, the warning is not expected")
	}
	if ents, _ := os.ReadDir("/dev/dri"); len(ents) > 0 {
		testreq.Skip(t, testreq.NoDRM, "this host has DRM devices (/dev/dri): driver hooks may attach")
	}
	core, logs := observer.New(zapcore.InfoLevel)
	set := receivertest.NewNopSettings(metadata.Type)
	set.Logger = zap.New(core)
	f := NewFactory()
	cfg := f.CreateDefaultConfig().(*Config) // source: live, as shipped
	cfg.Tenant.Enabled = false
	tr, err := f.CreateTraces(context.Background(), set, cfg, consumertest.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		t.Fatalf("Start: %v", err)
	}
	defer func() {
		if err := tr.Shutdown(context.Background()); err != nil {
			t.Error(err)
		}
	}()
	warned := logs.FilterMessageSnippet("no GPU job hook attached").All()
	if len(warned) != 1 || warned[0].Level != zapcore.WarnLevel {
		t.Fatalf("want one warning about missing GPU job hooks, got %d (of %d log lines)", len(warned), logs.Len())
	}
	verdict := warned[0].ContextMap()["verdict"]
	if s, _ := verdict.(string); !strings.Contains(s, "cannot follow GPU jobs") || !strings.Contains(s, "/dev/dri") {
		t.Errorf("verdict field: %v", verdict)
	}
	started := logs.FilterMessage("ghostdriver receiver starting").All()
	if len(started) != 1 || started[0].ContextMap()["version"] != version.String() {
		t.Errorf("no start line with the version %q: %v", version.String(), started)
	}
}
