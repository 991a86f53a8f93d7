// source: replay on a file without a GPU event: the receiver logs at error and reports a
// permanent error status, both saying what was expected and how to record it.
package ghostdriverreceiver

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/ghostdriver/ghostdriver/internal/metadata"
)

// statusHost records the status events reported to it.
type statusHost struct {
	mu     sync.Mutex
	events []*componentstatus.Event
}

func (h *statusHost) GetExtensions() map[component.ID]component.Component { return nil }
func (h *statusHost) Report(e *componentstatus.Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.events = append(h.events, e)
}

func TestReplayWithoutGPUEventsIsAnError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "README.md")
	if err := os.WriteFile(path, []byte("# notes\n\nnot a capture: 1.5: at all\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	cfg.Source = SourceReplay
	cfg.Replay.Path = path
	core, logs := observer.New(zapcore.InfoLevel)
	set := receivertest.NewNopSettings(metadata.Type)
	set.Logger = zap.New(core)
	r, err := NewFactory().CreateTraces(context.Background(), set, cfg, consumertest.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	host := &statusHost{}
	if err := r.Start(context.Background(), host); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for logs.FilterLevelExact(zapcore.ErrorLevel).Len() == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no error logged: %v", logs.All())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := r.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	e := logs.FilterLevelExact(zapcore.ErrorLevel).All()[0]
	msg := e.ContextMap()["error"]
	if s, _ := msg.(string); !strings.Contains(s, "no GPU event recognised") || !strings.Contains(s, "trace-cmd record -e gpu_scheduler") {
		t.Errorf("error log %q: %v", e.Message, e.ContextMap())
	}
	host.mu.Lock()
	defer host.mu.Unlock()
	found := false
	for _, ev := range host.events {
		if ev.Status() == componentstatus.StatusPermanentError && ev.Err() != nil && strings.Contains(ev.Err().Error(), "no GPU event recognised") {
			found = true
		}
	}
	if !found {
		t.Errorf("no permanent error status; reported %d events", len(host.events))
	}
}
