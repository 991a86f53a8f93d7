// Receiver lifecycle, a thin adapter over internal/graph: Start turns the configuration
// into a graph.Spec, opens it (the privileged part for `live`) and runs its one pipeline
// into the collector's consumers in the background; Shutdown stops it and releases
// everything, and works without Start and when called twice. Source selection and the
// policy when a live source cannot attach are the graph's.

package ghostdriverreceiver

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
	"github.com/ghostdriver/ghostdriver/internal/graph"
	"github.com/ghostdriver/ghostdriver/internal/metadata"
	"github.com/ghostdriver/ghostdriver/internal/pipeline"
	"github.com/ghostdriver/ghostdriver/internal/replay"
	"github.com/ghostdriver/ghostdriver/internal/version"
)

const transport = "ebpf"

type ghostReceiver struct {
	set     receiver.Settings
	cfg     *Config
	opts    *options
	obs     *receiverhelper.ObsReport
	tb      *metadata.TelemetryBuilder // the receiver's health (telemetry.go)
	onClose func()

	traces  consumer.Traces
	metrics consumer.Metrics

	mu      sync.Mutex
	started bool
	stopped bool
	cancel  context.CancelFunc
	done    chan struct{}
	graph   *graph.Graph // the open sources
	pipe    *pipeline.Pipeline
}

func newReceiver(set receiver.Settings, cfg *Config, opts *options, onClose func()) (*ghostReceiver, error) {
	obs, err := receiverhelper.NewObsReport(receiverhelper.ObsReportSettings{
		ReceiverID:             set.ID,
		Transport:              transport,
		LongLivedCtx:           true,
		ReceiverCreateSettings: set,
	})
	if err != nil {
		return nil, err
	}
	tb, err := metadata.NewTelemetryBuilder(set.TelemetrySettings)
	if err != nil {
		return nil, err
	}
	return &ghostReceiver{set: set, cfg: cfg, opts: opts, obs: obs, tb: tb, onClose: onClose}, nil
}

func (r *ghostReceiver) setTraces(next consumer.Traces)   { r.traces = next }
func (r *ghostReceiver) setMetrics(next consumer.Metrics) { r.metrics = next }

// Start implements component.Component: the graph opens the configured sources (the
// privileged part for `live`) and the one pipeline over them runs in the background.
func (r *ghostReceiver) Start(_ context.Context, host component.Host) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.started {
		return nil
	}
	r.started = true
	log := r.set.Logger
	log.Info("ghostdriver receiver starting", zap.String("version", version.String()), zap.String("source", r.cfg.Source))
	if sc := r.cfg.Sampling.pipeline(r.cfg.Source); sc != nil {
		log.Info("ghostdriver sampling on: every job in the metrics, spans for the jobs kept", zap.String("sampling", sc.String()))
	} else {
		log.Info("ghostdriver sampling off: every job's spans (sampling.enabled)")
	}

	spec, err := specOf(r.cfg)
	var g *graph.Graph
	if err == nil {
		g, err = graph.Open(spec, log)
	}
	if err != nil {
		if r.cfg.ErrorMode == ErrorModeIgnore {
			log.Error("ghostdriver source unavailable; running without it (error_mode: ignore)", zap.Error(err))
			componentstatus.ReportStatus(host, componentstatus.NewRecoverableErrorEvent(err))
			return nil
		}
		return err
	}
	for _, d := range g.Degraded {
		componentstatus.ReportStatus(host, componentstatus.NewRecoverableErrorEvent(d))
	}
	r.graph = g
	// A source that fails is reported at once, even while the other goes on.
	g.OnSourceError(func(err error) {
		log.Error("ghostdriver source stopped with an error", zap.Error(err))
		componentstatus.ReportStatus(host, componentstatus.NewPermanentErrorEvent(err))
	})
	r.pipe = g.Pipeline(r.outputs(), nil)
	if err := registerHealth(r.tb, r.pipe.Stats); err != nil {
		log.Warn("ghostdriver health not in the collector's telemetry", zap.Error(err))
	}
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	r.done = make(chan struct{})
	go func() {
		defer close(r.done)
		err := r.pipe.Run(ctx)
		st := r.pipe.Stats()
		if err != nil { // each error was logged and reported when its source stopped
			log.Info("ghostdriver pipeline stopped", stopFields(st, g)...)
		} else if st.DRM && ctx.Err() == nil {
			log.Info("ghostdriver source finished (end of capture)", stopFields(st, g)...)
		} else if st.CUDA != nil {
			log.Info("ghostdriver CUDA source stopped", stopFields(st, g)...)
		}
		for _, s := range st.Source.MalformedSamples {
			log.Warn("malformed input", zap.String("sample", s))
		}
	}()
	return nil
}

// specOf is the graph of the configuration: which sources, and the pipeline over them.
func specOf(cfg *Config) (graph.Spec, error) {
	spec := graph.Spec{
		Enrich:   cfg.Tenant.Enabled,
		ProcRoot: cfg.Tenant.ProcRoot,
		SysRoot:  cfg.Tenant.SysRoot,
		Context: graph.ContextSpec{
			Tiers:      cfg.Context.Tiers,
			OBIMapPath: cfg.Context.OBIMapPath,
			MaxWait:    cfg.Context.enrichMaxWait(),
		},
		Pipeline: pipeline.Config{
			Assemble: assemble.Config{
				JobTimeout:     cfg.JobTimeout,
				MaxPendingJobs: cfg.MaxPendingJobs,
				ReorderWindow:  cfg.ReorderWindow,
			},
			Metrics:            cfg.Metrics,
			FlushInterval:      cfg.FlushInterval,
			CollectionInterval: cfg.CollectionInterval,
			SpanOptions:        []emit.SpanOption{emit.WithStageSpans(cfg.StageSpans)},
			// A capture has no live source to protect: the reader waits for the next
			// consumer (backpressure) instead of dropping spans.
			Lossless: cfg.Source == SourceReplay,
			Sampling: cfg.Sampling.pipeline(cfg.Source),
		},
	}
	switch cfg.Source {
	case SourceReplay:
		rc := replay.Config{Path: cfg.Replay.Path, Speed: cfg.Replay.Speed}
		if cfg.Replay.Epoch != "" {
			ep, err := replay.ParseEpoch(cfg.Replay.Epoch)
			if err != nil {
				return spec, fmt.Errorf("replay.epoch: %w", err)
			}
			rc.Epoch, rc.HasEpoch = ep, true
		}
		spec.Replay = &rc
	case SourceLive:
		l := cfg.Live
		spec.Live = &graph.LiveSpec{
			DRMMajors:          l.DRMMajors,
			BOValidationFuncs:  l.BOValidationFunctions,
			RunJobFuncs:        l.RunJobFunctions,
			RingBufferBytes:    l.RingBufferSize,
			PollInterval:       l.PollInterval,
			IRQNames:           l.IRQNames,
			ClassicTracepoints: l.ClassicTracepoints,
			NoTracefsMount:     !l.MountTracefs,
			FenceFilter:        l.FenceFilter,
			SendJoblessIoctls:  l.SendJoblessIoctls,
			Records:            l.Records,
		}
		if c := l.CUDA; c.Enabled {
			spec.CUDA = &graph.CUDASpec{
				Libraries:         c.Libraries,
				RescanInterval:    c.RescanInterval,
				RingBufferBytes:   c.RingBufferSize,
				IgnoreEntryPoints: !c.FollowEntryPoints,
				NoXid:             !c.Xid,
				Layers:            c.Layers,
				LaunchesAtEntry:   c.LaunchesAtEntry,
				UprobeMulti:       c.UprobeMulti,
				SyncWakeups:       c.SyncWakeups,
				Timeline:          c.Timeline.policy(),
			}
		}
	default:
		return spec, fmt.Errorf("unknown source %q", cfg.Source)
	}
	return spec, nil
}

// stopFields are the counts logged when the pipeline stops.
func stopFields(st pipeline.Stats, g *graph.Graph) []zap.Field {
	var fields []zap.Field
	if st.DRM {
		fields = append(fields,
			zap.Uint64("jobs_completed", st.Assembler.Completed),
			zap.Uint64("jobs_incomplete", st.Assembler.Incomplete),
			zap.Uint64("malformed_lines", st.Source.Malformed),
			zap.Uint64("truncated_lines", st.Source.Truncated),
			zap.Uint64("span_ids_renamed", st.RenamedSpanIDs),
			zap.Uint64("job_spans_dropped", st.DroppedJobs))
	}
	if c := st.CUDA; c != nil {
		fields = append(fields, zap.Uint64("submissions", c.Submissions), zap.Uint64("xids", c.Xids),
			zap.Uint64("submission_spans_dropped", c.DroppedSubmissions))
		fields = append(fields, cudaSourceFields(g)...)
	}
	if s := st.Sampling; s != nil {
		kept, out := s.Spans()
		fields = append(fields, zap.Uint64("spans_kept", kept), zap.Uint64("spans_sampled_out", out),
			zap.Float64("sampling_probability", s.Probability))
	}
	return append(fields, zap.Uint64("export_errors", st.ExportErrors))
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
	if obs := r.opts.jobObservers; len(obs) > 0 {
		out.Job = func(j *assemble.Job) {
			rec := jobRecord(j)
			for _, f := range obs {
				f(rec)
			}
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
	// Closing the live sources unblocks their ring buffer readers.
	if r.graph != nil {
		errs = append(errs, r.graph.Close())
	}
	if r.done != nil {
		<-r.done
	}
	r.tb.Shutdown()
	for _, f := range r.opts.onShutdown {
		f()
	}
	return errors.Join(errs...)
}
