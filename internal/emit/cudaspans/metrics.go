// Recorder: the CUDA histograms and counters, cumulative from the recorder's start.
//
// Default attributes are the sync scope and the submission outcome (a handful of values);
// the configured optional dimensions (metrics.dimensions: service.name by default) are
// taken from the process's resource as the Builder would write it, resolved once per
// process and collection.

package cudaspans

import (
	"math"
	"sort"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/ghostdriver/ghostdriver/internal/cuda"
	"github.com/ghostdriver/ghostdriver/internal/emit/histogram"
	"github.com/ghostdriver/ghostdriver/internal/metadata"
)

type durKey struct{ scope, outcome, dims string }

type waitKey struct{ scope, dims string }

// Recorder accumulates the CUDA metrics. Not safe for concurrent use.
type Recorder struct {
	mcfg  metadata.MetricsConfig
	cfg   config
	start pcommon.Timestamp
	dims  []string // configured dimension keys

	names   processNames
	dimsOf  map[uint32]string   // PID → dims key, reset every collection
	dimVals map[string][]string // dims key → values

	dur      map[durKey]*histogram.Histogram
	durOrder []durKey
	wait     map[waitKey]*histogram.Histogram
	waitOrd  []waitKey
	launches map[string]uint64
	launchOr []string
	xids     map[uint32]uint64

	// The GPU timeline: busy time by (device, dims), the union kept per process and
	// device by a horizon (the latest kernel end counted); queue and completion.
	busy     map[busyKey]float64
	smBusy   map[busyKey]float64
	busyOrd  []busyKey
	smOrd    []busyKey
	horizon  map[horizonKey]int64
	gpuQueue map[string]*histogram.Histogram
	gpuDone  map[string]*histogram.Histogram
	gpuQOrd  []string
	gpuDOrd  []string
}

type busyKey struct {
	device uint32
	dims   string
}

type horizonKey struct{ pid, device uint32 }

// maxHorizons bounds the per-process horizons (a process that went away is forgotten
// when the map is reset: its next kernels may then count what an earlier submission did).
const maxHorizons = 1 << 16

// NewRecorder returns a recorder whose cumulative points start at start. Options are the
// Builder's (the resource hook and host name give the dimension values).
func NewRecorder(mcfg metadata.MetricsConfig, start time.Time, opts ...Option) *Recorder {
	return &Recorder{
		mcfg: mcfg, cfg: newConfig(opts), start: pcommon.NewTimestampFromTime(start),
		dims:   append([]string(nil), mcfg.Dimensions...),
		dimsOf: map[uint32]string{}, dimVals: map[string][]string{},
		dur: map[durKey]*histogram.Histogram{}, wait: map[waitKey]*histogram.Histogram{},
		launches: map[string]uint64{}, xids: map[uint32]uint64{},
		busy: map[busyKey]float64{}, smBusy: map[busyKey]float64{}, horizon: map[horizonKey]int64{},
		gpuQueue: map[string]*histogram.Histogram{}, gpuDone: map[string]*histogram.Histogram{},
	}
}

// Record adds one submission.
func (r *Recorder) Record(s *cuda.Submission) {
	r.names.learn(s)
	dims := r.dimsKey(s.PID)
	scope := SyncScope(s)
	if r.mcfg.GhostdriverCUDASubmissionDuration.Enabled {
		k := durKey{scope, s.Outcome.String(), dims}
		h := r.dur[k]
		if h == nil {
			h = &histogram.Histogram{}
			r.dur[k] = h
			r.durOrder = append(r.durOrder, k)
		}
		h.Record(seconds(s.End - s.Start))
	}
	if r.mcfg.GhostdriverCUDASyncWait.Enabled && s.Sync != nil {
		k := waitKey{scope, dims}
		h := r.wait[k]
		if h == nil {
			h = &histogram.Histogram{}
			r.wait[k] = h
			r.waitOrd = append(r.waitOrd, k)
		}
		h.Record(seconds(s.Sync.End - s.Sync.Start))
	}
	if r.mcfg.GhostdriverCUDALaunches.Enabled {
		if _, ok := r.launches[dims]; !ok {
			r.launchOr = append(r.launchOr, dims)
		}
		r.launches[dims] += uint64(s.Launches)
	}
	if s.GPU != nil {
		r.recordGPU(s, dims)
	}
}

// recordGPU adds a fused submission's GPU time: each kernel counts only past the latest
// kernel end already counted for its process and device, so overlapping kernels (streams,
// submissions of one process running at once) count once — exact when a process's
// submissions arrive in start order, an undercount of overlaps otherwise, never double.
// Kernels beyond the submission's kept list (GPUWork.MaxKernels) are not counted.
func (r *Recorder) recordGPU(s *cuda.Submission, dims string) {
	w := s.GPU
	if r.mcfg.GhostdriverCUDAGPUBusyTime.Enabled || r.mcfg.GhostdriverCUDAGPUSMWeighted.Enabled {
		if len(r.horizon) > maxHorizons {
			clear(r.horizon)
		}
		for _, k := range w.Kernels {
			hk := horizonKey{s.PID, k.Device}
			from := max(k.Start, r.horizon[hk])
			if k.End <= from {
				continue
			}
			bk := busyKey{k.Device, dims}
			if r.mcfg.GhostdriverCUDAGPUBusyTime.Enabled {
				if _, ok := r.busy[bk]; !ok {
					r.busyOrd = append(r.busyOrd, bk)
				}
				r.busy[bk] += seconds(k.End - from)
			}
			// Weighted by the kernel's share of its device's SMs; a device that did not
			// report its SM count adds nothing (the series is then absent, not 0).
			if r.mcfg.GhostdriverCUDAGPUSMWeighted.Enabled && k.SMs > 0 {
				if _, ok := r.smBusy[bk]; !ok {
					r.smOrd = append(r.smOrd, bk)
				}
				r.smBusy[bk] += seconds(k.End-from) * k.SMWeight()
			}
			r.horizon[hk] = k.End
		}
	}
	if r.mcfg.GhostdriverCUDAGPUQueue.Enabled && w.QueueFrom != 0 && w.QueueFrom <= w.FirstStart && w.KernelCount > 0 {
		recordHist(r.gpuQueue, &r.gpuQOrd, dims, seconds(w.FirstStart-w.QueueFrom))
	}
	if r.mcfg.GhostdriverCUDAGPUCompletion.Enabled && s.Outcome == cuda.Synced && s.Sync != nil && w.KernelCount > 0 && w.LastEnd <= s.Sync.End {
		recordHist(r.gpuDone, &r.gpuDOrd, dims, seconds(s.Sync.End-w.LastEnd))
	}
}

func recordHist(m map[string]*histogram.Histogram, order *[]string, dims string, v float64) {
	h := m[dims]
	if h == nil {
		h = &histogram.Histogram{}
		m[dims] = h
		*order = append(*order, dims)
	}
	h.Record(v)
}

// RecordXid counts one Xid error (each once, however many submissions it is attached to).
func (r *Recorder) RecordXid(x cuda.Xid) { r.xids[x.Code]++ }

// dimsKey resolves the configured dimensions of a process (once per collection).
func (r *Recorder) dimsKey(pid uint32) string {
	if len(r.dims) == 0 {
		return ""
	}
	if k, ok := r.dimsOf[pid]; ok {
		return k
	}
	m := pcommon.NewMap()
	fillResource(m, pid, &r.names, &r.cfg)
	vals := make([]string, len(r.dims))
	for i, d := range r.dims {
		if v, ok := m.Get(d); ok {
			vals[i] = v.AsString()
		}
	}
	if v, ok := m.Get(metadata.AttrServiceName); ok && v.Str() == unknownService {
		// Like the DRM metrics: no label rather than a placeholder.
		for i, d := range r.dims {
			if d == metadata.AttrServiceName {
				vals[i] = ""
			}
		}
	}
	k := strings.Join(vals, "\x00")
	r.dimsOf[pid] = k
	r.dimVals[k] = vals
	return k
}

func (r *Recorder) putDims(a pcommon.Map, key string) {
	for i, v := range r.dimVals[key] {
		if v != "" {
			a.PutStr(r.dims[i], v)
		}
	}
}

func seconds(ns int64) float64 {
	if ns < 0 {
		return 0
	}
	return float64(ns) / 1e9
}

// Collect returns every enabled CUDA metric that has data points, cumulative since the
// recorder's start, timestamped now.
func (r *Recorder) Collect(now time.Time) pmetric.Metrics {
	md := pmetric.NewMetrics()
	sm := md.ResourceMetrics().AppendEmpty().ScopeMetrics().AppendEmpty()
	sm.Scope().SetName(metadata.ScopeName)
	sm.Scope().SetVersion(r.cfg.scopeVersion)
	ts := pcommon.NewTimestampFromTime(now)
	for i := range metadata.Metrics {
		d := &metadata.Metrics[i]
		if !r.mcfg.Enabled(d.Name) {
			continue
		}
		switch d.Name {
		case metadata.MetricCUDASubmissionDuration:
			dps := d.AppendTo(sm.Metrics()).Histogram().DataPoints()
			for _, k := range r.durOrder {
				a := r.histPoint(dps, r.dur[k], ts).Attributes()
				a.PutStr(metadata.AttrCUDASyncScope, k.scope)
				a.PutStr(metadata.AttrCUDASubmissionOutcome, k.outcome)
				r.putDims(a, k.dims)
			}
		case metadata.MetricCUDASyncWait:
			dps := d.AppendTo(sm.Metrics()).Histogram().DataPoints()
			for _, k := range r.waitOrd {
				a := r.histPoint(dps, r.wait[k], ts).Attributes()
				a.PutStr(metadata.AttrCUDASyncScope, k.scope)
				r.putDims(a, k.dims)
			}
		case metadata.MetricCUDALaunches:
			dps := d.AppendTo(sm.Metrics()).Sum().DataPoints()
			for _, k := range r.launchOr {
				r.putDims(r.sumPoint(dps, r.launches[k], ts).Attributes(), k)
			}
		case metadata.MetricCUDAGPUBusyTime, metadata.MetricCUDAGPUSMWeighted:
			m, order := r.busy, r.busyOrd
			if d.Name == metadata.MetricCUDAGPUSMWeighted {
				m, order = r.smBusy, r.smOrd
			}
			dps := d.AppendTo(sm.Metrics()).Sum().DataPoints()
			for _, k := range order {
				dp := dps.AppendEmpty()
				dp.SetStartTimestamp(r.start)
				dp.SetTimestamp(ts)
				dp.SetDoubleValue(m[k])
				dp.Attributes().PutInt(metadata.AttrCUDAGPUDevice, int64(k.device))
				r.putDims(dp.Attributes(), k.dims)
			}
		case metadata.MetricCUDAGPUQueue, metadata.MetricCUDAGPUCompletion:
			m, order := r.gpuQueue, r.gpuQOrd
			if d.Name == metadata.MetricCUDAGPUCompletion {
				m, order = r.gpuDone, r.gpuDOrd
			}
			dps := d.AppendTo(sm.Metrics()).Histogram().DataPoints()
			for _, k := range order {
				r.putDims(r.histPoint(dps, m[k], ts).Attributes(), k)
			}
		case metadata.MetricNvidiaXid:
			dps := d.AppendTo(sm.Metrics()).Sum().DataPoints()
			codes := make([]uint32, 0, len(r.xids))
			for c := range r.xids {
				codes = append(codes, c)
			}
			sort.Slice(codes, func(i, j int) bool { return codes[i] < codes[j] })
			for _, c := range codes {
				r.sumPoint(dps, r.xids[c], ts).Attributes().PutInt(metadata.AttrNvidiaXidCode, int64(c))
			}
		case metadata.MetricCUDALostCalls:
			if r.cfg.loss == nil {
				continue
			}
			l := r.cfg.loss()
			dps := d.AppendTo(sm.Metrics()).Sum().DataPoints()
			r.sumPoint(dps, l.RingBuffer, ts).Attributes().PutStr(metadata.AttrCUDALossReason, metadata.CUDALossRingBuffer)
			r.sumPoint(dps, l.MissedReturn, ts).Attributes().PutStr(metadata.AttrCUDALossReason, metadata.CUDALossMissedReturn)
			r.sumPoint(dps, l.NoFrame, ts).Attributes().PutStr(metadata.AttrCUDALossReason, metadata.CUDALossNoFrame)
		case metadata.MetricCUDAEntryPointsDropped:
			if r.cfg.loss == nil {
				continue
			}
			r.sumPoint(d.AppendTo(sm.Metrics()).Sum().DataPoints(), r.cfg.loss().EntryPointsDropped, ts)
		}
	}
	sm.Metrics().RemoveIf(func(m pmetric.Metric) bool {
		switch m.Type() {
		case pmetric.MetricTypeHistogram:
			return m.Histogram().DataPoints().Len() == 0
		case pmetric.MetricTypeSum:
			return m.Sum().DataPoints().Len() == 0
		}
		return false
	})
	// Re-resolve dimensions next time (a process may have gained its service.name), but
	// keep the values of the series that exist.
	clear(r.dimsOf)
	return md
}

func (r *Recorder) histPoint(dps pmetric.HistogramDataPointSlice, h *histogram.Histogram, now pcommon.Timestamp) pmetric.HistogramDataPoint {
	dp := dps.AppendEmpty()
	dp.SetStartTimestamp(r.start)
	dp.SetTimestamp(now)
	h.WriteTo(dp)
	return dp
}

func (r *Recorder) sumPoint(dps pmetric.NumberDataPointSlice, v uint64, now pcommon.Timestamp) pmetric.NumberDataPoint {
	dp := dps.AppendEmpty()
	dp.SetStartTimestamp(r.start)
	dp.SetTimestamp(now)
	dp.SetIntValue(int64(min(v, math.MaxInt64)))
	return dp
}
