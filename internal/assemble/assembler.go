// The Assembler: configuration, the event loop and the public API.
//
// Events go through the reorder buffer (reorder.go) into process, which dispatches by
// kind to the scheduler (sched.go), native-driver (native.go), fence (fences.go) and
// submitting-thread (threads.go) rules. A job leaves the pending table when its finished
// fence signals, waits ReorderWindow more for late events (an ioctl exit can follow a
// fast job's completion), is tiled into stages (stages.go) and handed to out. Jobs that
// never finish are evicted (evict.go). Every table is bounded; see each file.

package assemble

import (
	"math"
	"time"

	"github.com/ghostdriver/ghostdriver/internal/event"
)

// Config bounds the assembler. Zero JobTimeout and MaxPendingJobs take the defaults; a
// zero ReorderWindow releases events as soon as they arrive (for sorted input).
type Config struct {
	// JobTimeout: a pending job with no new event for this long (source clock) is
	// evicted, reason "timeout: …".
	JobTimeout time.Duration
	// MaxPendingJobs caps the pending table; the job that progressed least recently is
	// evicted first, reason "max_pending_jobs (N) reached".
	MaxPendingJobs int
	// ReorderWindow: events are held this long (source clock) so that events of one job
	// recorded on different CPUs are processed in order, and finished jobs are held this
	// long for late events before output.
	ReorderWindow time.Duration
}

// DefaultConfig returns the defaults, the receiver's and the CLI's: 10s timeout, 100000 pending jobs, 20ms window.
func DefaultConfig() Config {
	return Config{JobTimeout: 10 * time.Second, MaxPendingJobs: 100000, ReorderWindow: 20 * time.Millisecond}
}

// Stats is what the assembler counted. Every event is either part of a job or counted
// here (Orphans, IoctlsWithoutJob, Ignored).
type Stats struct {
	Completed      uint64 // jobs output with queue, run and finish seen
	Incomplete     uint64 // jobs output with part of their life outside the input
	EvictedTimeout uint64 // jobs evicted by JobTimeout
	EvictedCap     uint64 // jobs evicted by MaxPendingJobs

	Pending  int // jobs waiting for their finished fence
	Held     int // jobs finished (or evicted) and waiting out the reorder window
	Buffered int // events in the reorder buffer

	Events uint64 // events consumed
	// Late counts events that arrived after the reorder window had already passed their
	// time; they are processed, but order-dependent rules may have missed them.
	Late uint64
	// LateByKind is Late by event kind name (which events come late says why).
	LateByKind map[string]uint64
	// LateMaxBehind is how far, at most, a late event's time was behind the release bound.
	LateMaxBehind time.Duration
	// LatePastWatermark counts the late events that were behind the bound only because event
	// times had moved it past the latest watermark − ReorderWindow: against the watermark's
	// bound alone they would have been in time.
	LatePastWatermark uint64
	// ClockJumps counts events whose timestamp was more than JobTimeout ahead of the
	// stream and that the next event did not follow (a corrupt or far-future timestamp,
	// then back): each was processed at the stream's time instead (clock.go).
	ClockJumps uint64
	// Orphans counts events that matched no job, by event kind name. Most fences are not
	// jobs' fences, so orphan fence signals are normal.
	Orphans map[string]uint64
	// Ignored counts events of kinds that play no part in job assembly (IRQs, markers, …).
	Ignored uint64
	// Duplicates counts job events seen twice for the same job (the second is ignored).
	Duplicates uint64
	// IoctlsWithoutJob counts submit-side ioctls (on the filtered DRM fds) that queued no job.
	IoctlsWithoutJob uint64
	// IoctlExitsNotSeen counts finished jobs output without their submit ioctl's exit
	// after waiting JobTimeout for it (the submitting thread never returned, or its exit
	// event was lost): such a job has no ioctl stage.
	IoctlExitsNotSeen uint64
	// DepsAfterRun counts jobs whose dependency wait, by drm_sched's rules, ended after
	// the scheduler ran them (td clamped to tr, rule clamped_to_run): a rule no event
	// shows (a fence error) or clocks that disagree.
	DepsAfterRun uint64
	// Rings: per ring ("device/ring", or the ring alone when the device is not printed),
	// the jobs output and the sum of their execution stages.
	Rings map[string]RingStats
}

// RingStats is the per-ring part of Stats.
type RingStats struct {
	Jobs uint64
	Busy time.Duration // sum of the execution stages (ts → th) of the ring's jobs
}

// Assembler joins events into jobs. It is not safe for concurrent use: one goroutine
// calls Consume, Watermark, Flush and Stats.
type Assembler struct {
	cfg     Config
	timeout int64
	window  int64
	out     func(*Job)

	buf reorder
	// The shortcut for ioctl pairs no job joins (pairs.go).
	enters       [heldSlots]heldEnter
	heldN        int
	heldMin      int64 // no held enter is stamped earlier
	pairs        pairRing
	lossNoted    bool   // a capture's loss note arrived: no more shortcuts
	noPairs      bool   // tests: every event takes the reorder buffer
	pairsApplied uint64 // pairs that took the shortcut

	hi int64 // latest time seen (events or watermark)
	// mark is the latest trusted watermark; nowPastMark: now was last moved past
	// mark − window by event times (Stats.LatePastWatermark).
	mark        int64
	nowPastMark bool
	now         int64 // every event at or before now has been processed

	// Clock-jump guard (clock.go).
	started   bool        // hi holds a time of the stream
	suspect   event.Event // an event far ahead of hi, waiting for the next one to tell
	suspected bool
	jumpHi    int64 // the latest timestamp rejected as a jump

	byKey   jobIndex       // finished fence (packed 32-bit) → job
	byPtr   jobIndex       // finished fence pointer (≤6.16 text) → job, until the job's done
	byID    map[idKey]*job // (ring, sched job id), msm submit id, xe fence pointer → job
	byHW    jobIndex       // hardware fence (packed) → job
	waiters map[uint64][]*job

	pending jobList // unfinished jobs, least recently progressed first
	held    jobList // finished or evicted jobs, in finish order
	// exitWait: finished jobs past their window whose submit ioctl has not returned yet
	// (the submitting thread still in it), in release order; each waits for that exit
	// until JobTimeout after its finish (threads.go ioctlExit, evict.go expire).
	exitWait jobList

	threads map[uint32]*thread
	// recentThreads is a direct-mapped cache in front of threads (threadOf): a job's
	// events come from a few threads, each looked up several times a job.
	recentThreads [threadCacheSlots]threadCacheEntry
	rings         map[ringKey]*ring

	i915Legacy map[i915RingKey][]legacyRequest // i915legacy.go: open requests per ring
	pvrCreated map[uint32][]*job               // accel.go: powervr jobs created on a thread, not yet queued

	signals  *fifoMap[signalRec]        // recent fence signals: packed key → time, hook
	owners   *fifoMap[ownerRec]         // fences of output jobs → the job's finished fence and run
	contexts *fifoMap[ctxInfo]          // fence context → its scheduler and entity (deps.go)
	early    *fifoMap[[]event.FenceKey] // dependencies announced before their job was queued
	streams  *fifoMap[struct{}]         // submission streams (fence contexts, entities) seen queueing

	cpuFirst  map[int32]int64
	cpuSeen   uint64 // CPUs 0–63 that are in cpuFirst: the per-event check without a lookup
	lastSweep int64
	rules     map[[2]string]string
	lastRule  [stageCount]stageRule // stages.go: rule
	qualified map[[2]string]string
	// lastQualified: qualify's last name, qualifier and answer.
	lastQualified stageRule

	stageSlab []StageSpan // backing store of output jobs' Stages (stages.go: stageBuf)
	jobSlab   []job       // the next jobs to open (jobs.go: newJob)

	st        Stats
	orphans   [256]uint64
	late      [256]uint64 // Stats.LateByKind
	ringStats map[string]*RingStats

	gpu gpuStamps // native.go: flush anchors of GPU stamps, and their counts

	loss lossTracker // loss.go: windows of "[LOST n EVENTS]" notes
}

// Bounds of the lookaside tables.
const (
	recentFences   = 8192 // recent signals and fence owners remembered
	earlyDeps      = 4096 // jobs with dependencies announced before their queue event
	streamsKept    = 4096
	maxDepsPerJob  = 64
	maxIDsPerJob   = 2    // identities of a job without a fence key (idKey): old scheduler ids, msm, xe
	maxQueuedPerIO = 16   // jobs one ioctl can queue that we bracket
	maxRingStats   = 1024 // distinct rings counted in Stats.Rings, the rest under "other"
	maxCachedRules = 4096
)

// New returns an assembler that calls out with every job, synchronously, in the order
// the jobs finish (or are evicted).
func New(cfg Config, out func(*Job)) *Assembler {
	def := DefaultConfig()
	if cfg.JobTimeout <= 0 {
		cfg.JobTimeout = def.JobTimeout
	}
	if cfg.MaxPendingJobs <= 0 {
		cfg.MaxPendingJobs = def.MaxPendingJobs
	}
	if cfg.ReorderWindow < 0 {
		cfg.ReorderWindow = 0
	}
	a := &Assembler{
		cfg:        cfg,
		timeout:    int64(cfg.JobTimeout),
		window:     int64(cfg.ReorderWindow),
		out:        out,
		byID:       map[idKey]*job{},
		waiters:    map[uint64][]*job{},
		threads:    map[uint32]*thread{},
		i915Legacy: map[i915RingKey][]legacyRequest{},
		pvrCreated: map[uint32][]*job{},
		rings:      map[ringKey]*ring{},
		signals:    newFIFOMap[signalRec](recentFences),
		owners:     newFIFOMap[ownerRec](recentFences),
		contexts:   newFIFOMap[ctxInfo](recentFences),
		early:      newFIFOMap[[]event.FenceKey](earlyDeps),
		streams:    newFIFOMap[struct{}](streamsKept),
		cpuFirst:   map[int32]int64{},
		rules:      map[[2]string]string{},
		qualified:  map[[2]string]string{},
		ringStats:  map[string]*RingStats{},
	}
	return a
}

// Consume implements event.Sink. Events are copied.
func (a *Assembler) Consume(batch []event.Event) {
	for i := range batch {
		a.st.Events++
		a.admit(&batch[i])
	}
	a.advance(a.hi - a.window)
}

// accept buffers an event whose time the guard (clock.go) has accepted.
func (a *Assembler) accept(e *event.Event) {
	if e.Time > a.hi || !a.started {
		a.hi = e.Time
		a.started = true
	}
	if e.Time < a.now {
		a.st.Late++
		a.late[e.Kind]++
		a.st.LateMaxBehind = max(a.st.LateMaxBehind, time.Duration(a.now-e.Time))
		if a.nowPastMark && e.Time >= a.mark-a.window {
			a.st.LatePastWatermark++
		}
	}
	if a.hold(e) {
		return
	}
	a.buf.push(e)
}

// Watermark implements event.Sink: no event earlier than t − ReorderWindow is still to
// come. It releases buffered events and held jobs and drives timeouts.
func (a *Assembler) Watermark(t int64) {
	if a.trustWatermark(t) {
		a.mark = max(a.mark, t)
		if t > a.hi || !a.started {
			a.hi = t
			a.started = true
			a.recheckSuspect()
		}
	}
	a.advance(a.hi - a.window)
}

// Flush ends the input: every buffered event is processed, held jobs (those waiting for
// their submit ioctl's exit too) are output, and
// jobs still pending are output as Incomplete with the reason. The assembler is empty
// afterwards (counters kept) and can take a new input.
func (a *Assembler) Flush() {
	if a.suspected { // nothing came after it to contradict it
		a.suspected = false
		a.accept(&a.suspect)
	}
	a.release(math.MaxInt64)
	if a.hi > a.now {
		a.now = a.hi
	}
	for j := a.held.head; j != nil; j = a.held.head {
		a.held.remove(j)
		a.emit(j)
	}
	for j := a.exitWait.head; j != nil; j = a.exitWait.head {
		a.exitWait.remove(j)
		j.exitWait = false
		a.emit(j)
	}
	edge := a.cpuEdge()
	for j := a.pending.head; j != nil; j = a.pending.head {
		a.pending.remove(j)
		j.state = stateClosed
		j.out.Outcome = Incomplete
		j.out.Reason = a.incompleteReason(j, true, edge)
		a.emit(j)
	}
	a.reset()
}

// Stats returns a snapshot of the counters.
func (a *Assembler) Stats() Stats {
	s := a.st
	s.Pending = a.pending.n
	s.Held = a.held.n + a.exitWait.n
	s.Buffered = a.buf.len() + a.heldN + 2*a.pairs.n
	if a.suspected {
		s.Buffered++
	}
	s.Orphans = byKindName(&a.orphans)
	s.LateByKind = byKindName(&a.late)
	s.Rings = make(map[string]RingStats, len(a.ringStats))
	for name, r := range a.ringStats {
		s.Rings[name] = *r
	}
	return s
}

// byKindName is counts indexed by event kind, keyed by the kinds' names (zeros left out).
func byKindName(counts *[256]uint64) map[string]uint64 {
	m := map[string]uint64{}
	for k, n := range counts {
		if n > 0 {
			m[event.Kind(k).String()] = n
		}
	}
	return m
}

// advance processes buffered events up to bound, then releases held jobs and evicts
// timed-out ones as of bound.
func (a *Assembler) advance(bound int64) {
	a.release(bound)
	if bound > a.now {
		a.now = bound
		a.nowPastMark = bound > a.mark-a.window
	}
	a.expire()
}

// process applies one event, in (time, CPU) order.
func (a *Assembler) process(e *event.Event) {
	if a.loss.see(e) {
		return
	}
	if c := uint32(e.CPU); c >= 64 || a.cpuSeen&(1<<c) == 0 {
		if _, ok := a.cpuFirst[e.CPU]; !ok {
			a.cpuFirst[e.CPU] = e.Time
		}
		if c < 64 {
			a.cpuSeen |= 1 << c
		}
	}
	switch e.Kind {
	case event.IoctlEnter:
		a.ioctlEnter(e)
	case event.IoctlExit:
		a.ioctlExit(e)
	case event.BOValidEnd:
		a.boValidEnd(e)
	case event.JobQueue:
		a.jobQueue(e)
	case event.JobDependency:
		a.jobDependency(e)
	case event.JobRun:
		a.jobRun(e)
	case event.RunJobEnd:
		a.runJobEnd(e)
	case event.JobDone:
		a.jobDone(e)
	case event.FenceInit:
		a.fenceCreated(e, prioTeFenceInit)
	case event.FenceEmit:
		a.fenceCreated(e, prioTeFenceEmit)
	case event.FenceSignaled:
		a.fenceSignaled(e)
	case event.FenceWaitEnd:
		a.submitterDep(e, e.Time)
	case event.FenceUsedAsDep:
		a.submitterDep(e, 0)
	case event.XeHwFenceSignal:
		a.xeHWSignal(e)
	case event.XeHwFenceCreate:
		a.xeHWCreate(e)
	case event.XeSchedJobFree:
		a.xeFree(e)
	case event.I915RequestComplete:
		a.i915Complete(e)
	default:
		if r := driverRoles[e.Kind]; r != nil {
			a.nativeEvent(e, r)
			return
		}
		a.st.Ignored++
	}
}

// orphan counts an event that matched no job.
func (a *Assembler) orphan(e *event.Event) { a.orphans[e.Kind]++ }

// cpuEdge is when the last CPU's stream started: before it, some CPUs were not being
// recorded (trace-cmd's per-CPU buffers overwrite independently), so a job's events on
// them may be missing.
func (a *Assembler) cpuEdge() int64 {
	var edge int64 = math.MinInt64
	for _, t := range a.cpuFirst {
		if t > edge {
			edge = t
		}
	}
	return edge
}

// reset forgets everything about the input just flushed.
func (a *Assembler) reset() {
	a.loss.reset()
	a.byKey.reset()
	a.byPtr.reset()
	clear(a.byID)
	a.byHW.reset()
	clear(a.waiters)
	clear(a.threads)
	a.recentThreads = [threadCacheSlots]threadCacheEntry{}
	clear(a.rings)
	clear(a.i915Legacy)
	clear(a.pvrCreated)
	clear(a.cpuFirst)
	a.cpuSeen = 0
	a.signals.reset()
	a.owners.reset()
	a.contexts.reset()
	a.early.reset()
	a.streams.reset()
	a.hi, a.now, a.lastSweep = 0, 0, 0
	a.started, a.suspected, a.jumpHi = false, false, 0
	a.lossNoted = false
	a.suspect = event.Event{}
}

// hookOf names the hook an event came from.
func hookOf(e *event.Event) string {
	if e.Name != "" {
		return e.Name
	}
	return e.Kind.String()
}

// funcHook names an fentry/fexit event by its kernel function when known.
func funcHook(e *event.Event) string {
	if e.Func != "" {
		return e.Func
	}
	return hookOf(e)
}

// qualify returns "name(q)", cached: hooks that need saying which fence they were about.
// The last answer is checked first (a stream repeats one hook: comparing two strings
// costs less than hashing them, as in rule).
func (a *Assembler) qualify(name, q string) string {
	if l := &a.lastQualified; l.rule != "" && l.start == name && l.end == q {
		return l.rule
	}
	k := [2]string{name, q}
	s, ok := a.qualified[k]
	if !ok {
		s = name + "(" + q + ")"
		if len(a.qualified) < maxCachedRules {
			a.qualified[k] = s
		}
	}
	a.lastQualified = stageRule{start: name, end: q, rule: s}
	return s
}
