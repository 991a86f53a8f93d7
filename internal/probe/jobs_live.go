//go:build linux

// The reader of the jobs record mode. A job record arrives when its job completes, with
// stamps as old as the job; the per-event records of the same moments (ioctls, BO
// validation, run_job's exit) arrived long before. So that the assembler never releases an
// event before a job record that sorts earlier has arrived, the reader holds every event
// back to the oldest job the kernel still has pending (jobs_pending: pending jobs by the
// 16.8 ms bucket they started in) and hands over only what sorts before it. A job pending
// longer than jobsMaxHold is taken out of the kernel map and decoded as it is (marked
// JF_EVICTED, counted); a later stamp of it starts a new record, joined by its fence key.
// What is held back is kept as the ring's samples and decoded when handed over
// (jobs_held.go).

package probe

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/cilium/ebpf"
	"go.uber.org/zap"

	"github.com/ghostdriver/ghostdriver/internal/event"
	"github.com/ghostdriver/ghostdriver/internal/kclock"
	"github.com/ghostdriver/ghostdriver/internal/ringread"
)

const (
	jobBucketShift = 24   // JOB_BUCKET_SHIFT
	jobBuckets     = 1024 // JOB_BUCKETS
	// jobsMaxHold is the longest the reader holds events back for a pending job.
	jobsMaxHold = 5 * time.Second
)

// jobsReader is the jobs mode's part of Live.
type jobsReader struct {
	dec     *jobDecoder
	jobs    *ebpf.Map // the pending-job hash
	pending *ebpf.Map // jobs_pending
	stats   *ebpf.Map // jobs_stats
	// swept[b]: jobs of bucket b user space took out of the map (the kernel's count of
	// the bucket keeps them).
	swept [jobBuckets]int64
	buf   jobsJobPending
	// held: what waits for the bound, as raw samples (jobs_held.go).
	held heldStore
	// bad reports a sample the decoder rejects; follow sees every decoded event (the
	// fence filter's, when on). Either may be nil.
	bad    func(string, error)
	follow func(*event.Event)
	tmp    []event.Event
	// holds: polls that held events back for a pending job; sweeps: map sweeps.
	holds, sweeps uint64
}

// newJobsReader returns the jobs mode's reader, or nil when the jobs family was not used.
func newJobsReader(objs *objects, d *decoder) *jobsReader {
	f, ok := objs.families[famJobs]
	if !ok {
		return nil
	}
	return &jobsReader{dec: newJobDecoder(d), jobs: f.maps[jobsMapJobs], pending: f.maps[jobsMapJobsPending], stats: f.maps[jobsMapJobsStats]}
}

// bound is the time before which no job record can still bring a stamp: the start of the
// oldest bucket with a pending job, else now. A job older than jobsMaxHold is swept first.
func (r *jobsReader) bound(now int64) int64 {
	if err := r.pending.Lookup(uint32(0), &r.buf); err != nil {
		return now
	}
	bNow := now >> jobBucketShift
	for i := int64(jobBuckets - 1); i >= 0; i-- {
		b := bNow - i
		if r.buf.N[b&(jobBuckets-1)]-r.swept[b&(jobBuckets-1)] > 0 {
			start := b << jobBucketShift
			if now-start > int64(jobsMaxHold) {
				r.sweep(now - int64(jobsMaxHold))
				continue
			}
			r.holds++
			return min(now, start)
		}
	}
	return now
}

// sweep takes every job first seen before cutoff (every job: cutoff = MaxInt64) out of the
// kernel map and decodes what it has into held.
func (r *jobsReader) sweep(cutoff int64) {
	r.sweeps++
	if r.jobs == nil { // a reader without the kernel's maps (tests over a generated ring)
		return
	}
	var (
		k  jobsFenceKey
		v  jobsJobRecord
		ks []jobsFenceKey
	)
	it := r.jobs.Iterate()
	for it.Next(&k, &v) {
		first := int64(-1)
		for s := 0; s < int(jobsJobSlotJS_COUNT); s++ {
			if v.Slots&(1<<s) != 0 && (first < 0 || int64(v.St[s].Ts) < first) {
				first = int64(v.St[s].Ts)
			}
		}
		if first < cutoff {
			ks = append(ks, k)
		}
	}
	for _, k := range ks {
		if err := r.jobs.LookupAndDelete(&k, &v); err != nil {
			// hash maps have no lookup-and-delete before 5.14: read, then delete
			if r.jobs.Lookup(&k, &v) != nil || r.jobs.Delete(&k) != nil {
				continue // the kernel sent it meanwhile
			}
		}
		r.swept[v.Bucket&(jobBuckets-1)]++
		v.Flags |= uint16(jobsJobFlagJF_EVICTED)
		r.tmp = r.dec.decodeJob(v, r.tmp[:0])
		r.followAll(r.tmp)
		r.held.holdEvents(r.tmp)
	}
}

// hold keeps a ring sample until it is handed over. A names record is read at once (the
// job records it names are decoded after it); a sample with no time is decoded at once.
func (r *jobsReader) hold(b []byte) {
	if len(b) == jobNamesRecordSize && loadSample[jobsJobNamesRecord](b).Magic == jobNamesMagic {
		r.dec.decode(b, nil, r.report)
		return
	}
	if t, ok := sampleTime(b); ok {
		r.held.holdSample(b, t)
		return
	}
	r.tmp = r.decodeSample(b, r.tmp[:0])
	r.held.holdEvents(r.tmp)
}

// decodeSample appends the events of a held sample to out.
func (r *jobsReader) decodeSample(b []byte, out []event.Event) []event.Event {
	n := len(out)
	out = r.dec.decode(b, out, r.report)
	r.followAll(out[n:])
	return out
}

func (r *jobsReader) followAll(evs []event.Event) {
	if r.follow != nil {
		for i := range evs {
			r.follow(&evs[i])
		}
	}
}

func (r *jobsReader) report(name string, err error) {
	if r.bad != nil {
		r.bad(name, err)
	}
}

// jobDrops adds the jobs mode's counts to Stats' KernelDrops (the objects are open).
func (l *Live) jobDrops(out map[string]uint64) {
	if l.jobs == nil {
		return
	}
	out[event.KernelDropJobStateFull] = l.jobs.kernelCounts()[jobsJobCounterJC_FULL]
	out[event.KernelDropJobStateEvicted] = l.jobs.dec.evicted.Load()
}

// handOver passes every held event before bound to deliver, in time order and in batches
// of at most maxBatch, keeping the rest in arrival order; out is scratch space, returned
// for reuse. In time order, because the sink releases what is older than its latest event
// minus its reorder window after each batch: a job record decoded after a later ioctl exit
// must not come in a later batch than that exit (seen on the rig: jobs without their ioctl
// when a poll handed over more than maxBatch events in arrival order).
func (r *jobsReader) handOver(bound int64, out []event.Event, deliver func([]event.Event)) []event.Event {
	out = r.held.take(bound, out[:0], r.decodeSample)
	slices.SortStableFunc(out, func(a, b event.Event) int { return cmp.Compare(a.Time, b.Time) })
	for i := 0; i < len(out); i += maxBatch {
		deliver(out[i:min(i+maxBatch, len(out))])
	}
	return out[:0]
}

// kernelCounts sums jobs_stats per counter.
func (r *jobsReader) kernelCounts() [jobsJobCounterJC_COUNT]uint64 {
	var out [jobsJobCounterJC_COUNT]uint64
	if r.stats == nil { // a reader without the kernel's maps (tests over a generated ring)
		return out
	}
	for i := range out {
		var perCPU []uint64
		if err := r.stats.Lookup(uint32(i), &perCPU); err != nil {
			continue
		}
		for _, v := range perCPU {
			out[i] += v
		}
	}
	return out
}

// runJobs is Run in jobs mode: the same polling, with events held back to the bound.
func (l *Live) runJobs(ctx context.Context, sink event.Sink) error {
	r := l.jobs
	var (
		house  = l.newHousekeeping()
		out    = make([]event.Event, 0, maxBatch)
		poller = ringread.New(l.rd)
	)
	// Decoded events tell the fence filter (when on) of every job's fences, as Run does.
	r.bad = func(name string, err error) { l.bad(name, err) }
	if l.fences != nil {
		r.follow = l.fences.follow
	}
	handOver := func(bound int64) {
		out = r.handOver(bound, out, func(b []event.Event) {
			l.count(b)
			sink.Consume(b)
		})
	}
	record := func(b []byte) bool {
		r.hold(b)
		return true
	}
	var stopErr error
	finish := func() {
		// What the ring still holds, then the jobs still pending, with what they have.
		stopErr = l.stopReading(poller, func(b []byte) { r.hold(b) })
		r.sweep(1<<63 - 1)
		handOver(1<<63 - 1)
		c := r.kernelCounts()
		l.log.Info("jobs mode", zap.Uint64("job_records", c[jobsJobCounterJC_EMITTED]),
			zap.Uint64("jobs_map_full", c[jobsJobCounterJC_FULL]), zap.Uint64("no_key", c[jobsJobCounterJC_NO_KEY]),
			zap.Uint64("send_race", c[jobsJobCounterJC_RACE]), zap.Uint64("ring_full", c[jobsJobCounterJC_RING_FULL]),
			zap.Uint64("evicted_by_reader", r.dec.evicted.Load()), zap.Uint64("decoded_jobs", r.dec.jobs),
			zap.Uint64("decoded_alone", r.dec.partial), zap.Uint64("names_records", c[jobsJobCounterJC_NAMES]),
			zap.Uint64("watched_signals", c[jobsJobCounterJC_WATCHED]), zap.Uint64("holds", r.holds),
			zap.Uint64("sweeps", r.sweeps))
	}
	defer poller.WakeOnCancel(ctx)()
	for {
		if ctx.Err() != nil {
			finish()
			return stopErr
		}
		house.poll()
		mark := kclock.MonoNow()
		// Read before the poll: a job still pending now sends its record after this read,
		// and one sent before it is in the ring, which the poll reads before it may end
		// early under a flood, or that job's record would come a poll after the events the
		// bound lets through (seen on the rig).
		bound := r.bound(mark)
		if err := poller.Poll(l.cfg.PollInterval, record); err != nil {
			handOver(1<<63 - 1)
			if errors.Is(err, ringread.ErrClosed) {
				return nil
			}
			return fmt.Errorf("reading the ring buffer: %w", err)
		}
		handOver(bound)
		sink.Watermark(bound)
	}
}
