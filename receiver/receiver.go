// Receiver lifecycle: Start opens the source (the privileged part for `live`) and runs
// the pipeline in the background; Shutdown stops it and releases everything, and works
// without Start and when called twice.
package receiver

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/receiverhelper"
	"go.uber.org/zap"

	"github.com/ghostdriver/ghostdriver/internal/assemble"
	"github.com/ghostdriver/ghostdriver/internal/emit"
	"github.com/ghostdriver/ghostdriver/internal/event"
	"github.com/ghostdriver/ghostdriver/internal/pipeline"
	"github.com/ghostdriver/ghostdriver/internal/replay"
	"github.com/ghostdriver/ghostdriver/internal/version"
)

const transport = "ebpf"

type ghostReceiver struct {
	set     receiver.Settings
	cfg     *Config
	obs     *receiverhelper.ObsReport
	onClose func()

	traces  consumer.Traces
	metrics consumer.Metrics

	mu       sync.Mutex
	started  bool
	stopped  bool
	cancel   context.CancelFunc
	done     chan struct{}
	closeSrc func() error
	pipe     *pipeline.Pipeline
}

func newReceiver(set receiver.Settings, cfg *Config, onClose func()) (*ghostReceiver, error) {
	obs, err := receiverhelper.NewObsReport(receiverhelper.ObsReportSettings{
		ReceiverID:             set.ID,
		Transport:              transport,
		LongLivedCtx:           true,
		ReceiverCreateSettings: set,
	})
	if err != nil {
		return nil, err
	}
	return &ghostReceiver{set: set, cfg: cfg, obs: obs, onClose: onClose}, nil
}

func (r *ghostReceiver) setTraces(next consumer.Traces)   { r.traces = next }
func (r *ghostReceiver) setMetrics(next consumer.Metrics) { r.metrics = next }

// Start implements component.Component.
func (r *ghostReceiver) Start(_ context.Context, host component.Host) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.started {
		return nil
	}
	r.started = true
	log := r.set.Logger
	log.Info("ghostdriver receiver starting", zap.String("version", version.String()), zap.String("source", r.cfg.Source))

	src, enricher, closeSrc, err := r.openSource(log)
	runCUDA, err := r.openCUDA(host, log, err)
	if err != nil {
		if r.cfg.ErrorMode == ErrorModeIgnore {
			log.Error("ghostdriver source unavailable; running without it (error_mode: ignore)", zap.Error(err))
			componentstatus.ReportStatus(host, componentstatus.NewRecoverableErrorEvent(err))
			return nil
		}
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	r.done = make(chan struct{})
	var wg sync.WaitGroup
	if runCUDA != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runCUDA(ctx, host)
		}()
	}
	if src == nil { // the CUDA source runs alone
		go func() {
			defer close(r.done)
			wg.Wait()
		}()
		return nil
	}
	r.closeSrc = joinClose(r.closeSrc, closeSrc)
	spanOpts := []emit.SpanOption{emit.WithStageSpans(r.cfg.StageSpans)}
	if r.cfg.Source == SourceLive {
		spanOpts = append(spanOpts, liveSpanOptions()...)
	}

	r.pipe = pipeline.New(pipeline.Config{
		Assemble: assemble.Config{
			JobTimeout:     r.cfg.JobTimeout,
			MaxPendingJobs: r.cfg.MaxPendingJobs,
			ReorderWindow:  r.cfg.ReorderWindow,
		},
		Metrics:            r.cfg.Metrics,
		FlushInterval:      r.cfg.FlushInterval,
		CollectionInterval: r.cfg.CollectionInterval,
		SpanOptions:        spanOpts,
		Enricher:           enricher,
		// A capture has no live source to protect: the reader waits for the next
		// consumer (backpressure) instead of dropping spans.
		Lossless: r.cfg.Source == SourceReplay,
	}, src, r.outputs(), log)

	wg.Add(1)
	go func() {
		defer close(r.done)
		defer wg.Wait()
		defer wg.Done()
		err := r.pipe.Run(ctx)
		st := r.pipe.Stats()
		fields := []zap.Field{
			zap.Uint64("jobs_completed", st.Assembler.Completed),
			zap.Uint64("jobs_incomplete", st.Assembler.Incomplete),
			zap.Uint64("malformed_lines", st.Source.Malformed),
			zap.Uint64("truncated_lines", st.Source.Truncated),
			zap.Uint64("span_ids_renamed", st.RenamedSpanIDs),
			zap.Uint64("job_spans_dropped", st.DroppedJobs),
			zap.Uint64("export_errors", st.ExportErrors),
		}
		switch {
		case err != nil:
			log.Error("ghostdriver source stopped with an error", append(fields, zap.Error(err))...)
			componentstatus.ReportStatus(host, componentstatus.NewPermanentErrorEvent(err))
		case ctx.Err() == nil:
			log.Info("ghostdriver source finished (end of capture)", fields...)
		}
		for _, s := range st.Source.MalformedSamples {
			log.Warn("malformed input", zap.String("sample", s))
		}
	}()
	return nil
}

// openSource opens the configured source; the live source comes with its enricher.
func (r *ghostReceiver) openSource(log *zap.Logger) (event.Source, pipeline.Enricher, func() error, error) {
	switch r.cfg.Source {
	case SourceReplay:
		rc := replay.Config{Path: r.cfg.Replay.Path, Speed: r.cfg.Replay.Speed}
		if r.cfg.Replay.Epoch != "" {
			ep, err := replay.ParseEpoch(r.cfg.Replay.Epoch)
			if err != nil {
				return nil, nil, nil, fmt.Errorf("replay.epoch: %w", err)
			}
			rc.Epoch, rc.HasEpoch = ep, true
		}
		src, err := replay.New(rc)
		if err != nil {
			return nil, nil, nil, err
		}
		return src, nil, func() error { return nil }, nil
	case SourceLive:
		return openLive(r.cfg, log)
	}
	return nil, nil, nil, fmt.Errorf("unknown source %q", r.cfg.Source)
}

// openCUDA opens the CUDA source when live.cuda is enabled and decides, with the DRM
// source's error drmErr, what runs: both; one of them alone, with a warning naming what the
// other lacks; or neither, and then the returned error is handled by error_mode. A DRM
// source missing next to a working CUDA source is expected (NVIDIA nodes have no
// drm_sched) and only logged; a CUDA source missing next to a working DRM source was asked
// for, so it is also reported as a recoverable status. run is nil when CUDA does not run;
// its close function is in r.closeSrc.
func (r *ghostReceiver) openCUDA(host component.Host, log *zap.Logger, drmErr error) (run func(context.Context, component.Host), err error) {
	if r.cfg.Source != SourceLive || !r.cfg.Live.CUDA.Enabled {
		return nil, drmErr
	}
	run, closeCUDA, cudaErr := openCUDA(r.cfg, r.outputs(), log)
	switch {
	case cudaErr != nil && drmErr != nil:
		return nil, errors.Join(drmErr, fmt.Errorf("CUDA source: %w", cudaErr))
	case cudaErr != nil:
		err := fmt.Errorf("CUDA source unavailable (live.cuda.enabled), running the DRM source alone: %w", cudaErr)
		log.Warn("ghostdriver CUDA source unavailable; running the DRM source alone", zap.Error(cudaErr))
		componentstatus.ReportStatus(host, componentstatus.NewRecoverableErrorEvent(err))
		return nil, nil
	case drmErr != nil:
		log.Warn("ghostdriver DRM source unavailable; running the CUDA source alone", zap.Error(drmErr))
	}
	r.closeSrc = closeCUDA
	return run, nil
}

// joinClose closes both (either may be nil).
func joinClose(a, b func() error) func() error {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	return func() error { return errors.Join(a(), b()) }
}

func (r *ghostReceiver) outputs() pipeline.Outputs {
	var out pipeline.Outputs
	if r.traces != nil {
		next := r.traces
		out.Traces = func(ctx context.Context, td ptrace.Traces) error {
			ctx = r.obs.StartTracesOp(ctx)
			n := td.SpanCount()
			err := next.ConsumeTraces(ctx, td)
			r.obs.EndTracesOp(ctx, "otlp", n, err)
			return err
		}
	}
	if r.metrics != nil {
		next := r.metrics
		out.Metrics = func(ctx context.Context, md pmetric.Metrics) error {
			ctx = r.obs.StartMetricsOp(ctx)
			n := md.DataPointCount()
			err := next.ConsumeMetrics(ctx, md)
			r.obs.EndMetricsOp(ctx, "otlp", n, err)
			return err
		}
	}
	return out
}

// Shutdown implements component.Component.
func (r *ghostReceiver) Shutdown(context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped {
		return nil
	}
	r.stopped = true
	if r.onClose != nil {
		r.onClose()
	}
	var errs []error
	if r.cancel != nil {
		r.cancel()
	}
	// Closing the live source unblocks its ring buffer reader.
	if r.closeSrc != nil {
		errs = append(errs, r.closeSrc())
	}
	if r.done != nil {
		<-r.done
	}
	return errors.Join(errs...)
}
