// Options of NewFactoryWithOptions: what a distribution that embeds the receiver sets in
// its own code rather than in every user's configuration, as the OpenTelemetry eBPF
// profiler's collector package lets an embedder do. NewFactory is the factory without any.

package ghostdriverreceiver

import (
	"time"

	"github.com/ghostdriver/ghostdriver/internal/assemble"
)

// Option configures the factory of NewFactoryWithOptions.
type Option func(*options)

type options struct {
	procRoot, sysRoot string
	jobObservers      []func(JobRecord)
	onShutdown        []func()
}

func newOptions(opts []Option) *options {
	o := &options{}
	for _, opt := range opts {
		opt(o)
	}
	return o
}

// WithHostRoots sets the defaults of tenant.proc_root and tenant.sys_root (else /proc and
// /sys): for a distribution that runs in a container with the host's procfs and sysfs
// mounted elsewhere (/host/proc, /host/sys), so that its users need not configure them.
// A user's configuration still overrides them; "" keeps that default.
func WithHostRoots(procRoot, sysRoot string) Option {
	return func(o *options) { o.procRoot, o.sysRoot = procRoot, sysRoot }
}

// WithJobObserver adds a consumer of every assembled GPU job, beside the traces and
// metrics pipelines: what a job's gpu.job span says, as Go values, for an embedder that
// keeps its own per-process accounting or scheduler feedback without parsing spans. It is
// called on the receiver's source goroutine while the pipeline holds its lock, for every
// job (sampling or a full span buffer do not apply): it must return at once (copy what it
// needs and hand it off).
func WithJobObserver(f func(JobRecord)) Option {
	return func(o *options) { o.jobObservers = append(o.jobObservers, f) }
}

// WithOnShutdown adds a function called once the receiver has shut down (its sources
// closed, its pipeline stopped): for an embedder that ties resources of its own (an
// observer's queue, a socket) to the receiver's life.
func WithOnShutdown(f func()) Option {
	return func(o *options) { o.onShutdown = append(o.onShutdown, f) }
}

// JobRecord is one assembled GPU job (WithJobObserver). Values the job does not know are
// zero.
type JobRecord struct {
	Driver, Device, Ring string
	// PID and TID are the submitting process and thread; ThreadName is the thread's comm.
	PID, TID   uint32
	ThreadName string
	// Outcome is ghostdriver.job.outcome (completed, incomplete, evicted); Reason says why
	// a job is not completed.
	Outcome, Reason string
	// Duration is the gpu.job span's: earliest known point to the finished fence (or the
	// last known point).
	Duration time.Duration
	// Stages are the stage child spans' (whether or not stage_spans sends them), in stage
	// order, only those with known bounds.
	Stages []StageRecord
}

// StageRecord is one stage of a job.
type StageRecord struct {
	Name     string // the stage span's name (ioctl, scheduler_queue, execution, …)
	Source   string // ghostdriver.stage.source: measured or inferred
	Duration time.Duration
}

// jobRecord is j as JobRecord.
func jobRecord(j *assemble.Job) JobRecord {
	r := JobRecord{
		Driver: j.Driver, Device: j.Device, Ring: j.Ring,
		PID: j.PID, TID: j.TID, ThreadName: j.Comm,
		Outcome: j.Outcome.String(), Reason: j.Reason,
		Duration: interval(j.Start, j.End),
	}
	if len(j.Stages) > 0 {
		r.Stages = make([]StageRecord, len(j.Stages))
		for i, st := range j.Stages {
			r.Stages[i] = StageRecord{Name: st.Stage.String(), Source: st.Src.String(), Duration: interval(st.Start, st.End)}
		}
	}
	return r
}

// interval is end − start of the source clock (nanoseconds), 0 when inverted, as a span's
// end before its start collapses to the start.
func interval(start, end int64) time.Duration { return time.Duration(max(end-start, 0)) }
