// Sources of one pipeline stop independently: a DRM source that fails is reported at once
// (OnSourceError) while the CUDA branch keeps running, and Run returns every source's
// error once all have stopped.
package pipeline

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ghostdriver/ghostdriver/internal/cuda"
	"github.com/ghostdriver/ghostdriver/internal/event"
	"github.com/ghostdriver/ghostdriver/internal/metadata"
)

// failingSource is a DRM source whose reader fails at once.
type failingSource struct{ err error }

func (f failingSource) Clock() event.Clock                    { return event.OffsetClock{} }
func (f failingSource) Run(context.Context, event.Sink) error { return f.err }
func (f failingSource) Stats() event.SourceStats              { return event.SourceStats{} }

// blockingCUDA is a CUDA source that delivers nothing until it is cancelled, then fails.
type blockingCUDA struct{ err error }

func (b blockingCUDA) Run(ctx context.Context, _ cuda.Sink) error {
	<-ctx.Done()
	return b.err
}

func TestSourceErrorReportedWhileOtherBranchRuns(t *testing.T) {
	drmErr, cudaErr := errors.New("ring buffer read failed"), errors.New("uprobe reader failed")
	reported := make(chan error, 2)
	p := New(Config{Metrics: metadata.DefaultMetricsConfig(), OnSourceError: func(err error) { reported <- err }},
		failingSource{drmErr}, Outputs{}, nil)
	p.AddCUDA(CUDAConfig{}, blockingCUDA{cudaErr})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()

	select {
	case err := <-reported:
		if !errors.Is(err, drmErr) {
			t.Fatalf("reported %v, want the DRM source's error", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the DRM source's error was not reported while the CUDA branch ran")
	}
	select {
	case err := <-done:
		t.Fatalf("Run returned (%v) while the CUDA branch still ran", err)
	default:
	}
	cancel()
	err := <-done
	if !errors.Is(err, drmErr) || !errors.Is(err, cudaErr) || !strings.Contains(err.Error(), "CUDA source: ") {
		t.Errorf("Run: %v; want both sources' errors, the CUDA one named", err)
	}
	if err := <-reported; !errors.Is(err, cudaErr) {
		t.Errorf("second report %v, want the CUDA source's error", err)
	}
}
