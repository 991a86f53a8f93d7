//go:build linux

// The live source's lifecycle: Open loads and attaches (load), Run reads the ring buffer
// on its poll deadline and hands the events over in batches, Stats counts, Close
// detaches; Doctor says what would attach without keeping anything.

package probe

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/rlimit"
	"go.uber.org/zap"

	"github.com/ghostdriver/ghostdriver/internal/capability"
	"github.com/ghostdriver/ghostdriver/internal/event"
	"github.com/ghostdriver/ghostdriver/internal/kclock"
	"github.com/ghostdriver/ghostdriver/internal/ringread"
	"github.com/ghostdriver/ghostdriver/internal/tenant/appctx"
)

// maxBatch bounds the events handed to the sink in one Consume call.
const maxBatch = 1024

// Live is the live eBPF source. It implements event.Source.
type Live struct {
	cfg  Config
	log  *zap.Logger
	objs *objects
	rd   recordReader
	dec  decoder
	// jobs is the jobs record mode's reader (jobs_live.go); nil in events mode.
	jobs *jobsReader

	offset   atomic.Int64 // realtime − monotonic, ns
	running  atomic.Bool
	closeMu  sync.Mutex
	closed   bool
	lostLast atomic.Uint64 // lost count read at Close, when the map is gone
	skipLast atomic.Uint64 // of lostLast: program runs the kernel skipped
	// lostAtStop: records the ring held at a stop that its read had no time for (stopReading).
	lostAtStop atomic.Uint64
	// dropsLast: kernel drops read last (under closeMu), reported after Close.
	dropsLast map[string]uint64

	mu    sync.Mutex
	stats event.SourceStats

	// Kernel-side drops counted in user space (kcounters.go).
	procsFull atomic.Uint64 // SetProcess refused: the procs table is full
	evicted   atomic.Uint64 // highest inflight eviction count read
	irqsLate  atomic.Uint64 // GPU interrupt lines found after Start (irqrefresh.go)
	// watermark: polls that held the watermark for a record still being written (Run).
	watermark watermarkStats
	// fences feeds the fence filter's contexts (nil: filter off).
	fences *fenceContexts
	// ld is the loader, kept to attach the irq hooks when a GPU interrupt line appears later.
	ld *loader
}

var _ event.Source = (*Live)(nil)

// recordReader is what Live reads records from: the ring buffer's reader, or a generated
// ring of the same semantics in the benchmarks (ringgen_bench_test.go).
type recordReader = ringread.Ring

// Open loads and attaches every hook it can and returns the capability report. The
// error is non-nil only when the source is unusable: not privileged, the ring buffer
// cannot be created, or no hook attached at all.
func Open(cfg Config, log *zap.Logger) (*Live, capability.Report, error) {
	if log == nil {
		log = zap.NewNop()
	}
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, newReport(), fmt.Errorf("probe config: %w", err)
	}
	ld, err := load(cfg, log)
	if err != nil {
		return nil, ld.rep, err
	}
	// Events mode reads the ring in place (ringread.go); jobs mode keeps cilium's reader
	// (internal/ringread's Reader).
	var rd recordReader
	if _, jobsMode := ld.objs.families[famJobs]; jobsMode {
		rd, err = ringread.NewReader(ld.objs.eventsMap())
	} else {
		rd, err = ringread.NewMmap(ld.objs.eventsMap())
	}
	if err != nil {
		ld.objs.close()
		return nil, ld.rep, fmt.Errorf("ring buffer reader: %w", err)
	}
	l := &Live{
		cfg:  cfg,
		log:  log,
		objs: ld.objs,
		rd:   rd,
		dec:  decoder{boFuncs: cfg.BOValidationFuncs, runFuncs: cfg.RunJobFuncs, irqNames: ld.objs.irqNames},
		ld:   ld,
	}
	l.fences = newFenceContexts(ld.objs, cfg.FenceFilter)
	if ld.objs.classic != (classicEvents{}) {
		l.dec.classic = newClassicDecoder(&ld.objs.classic)
	}
	l.jobs = newJobsReader(ld.objs, &l.dec)
	l.stats.Unknown = map[string]uint64{}
	l.stats.Hooks = append(l.stats.Hooks, ld.rep.Entries...)
	off, _ := kclock.SampleOffset()
	l.offset.Store(off)
	log.Info("ghostdriver live source attached", zap.String("summary", ld.rep.Summary()))
	return l, ld.rep, nil
}

// load is Open without the reader: privilege check, ring buffer, every ladder.
func load(cfg Config, log *zap.Logger) (*loader, error) {
	ld := newLoader(cfg, log)
	if err := checkPrivileges(); err != nil {
		for _, def := range hookDefs(cfg) {
			ld.rep.Add(def.stage, def.event, capability.StatusUnavailable, "not privileged")
		}
		return ld, err
	}
	if err := rlimit.RemoveMemlock(); err != nil {
		log.Debug("removing the memlock limit", zap.Error(err))
	}
	if err := ld.loadCommon(); err != nil {
		ld.objs.close()
		return ld, err
	}
	ld.openOBIMap()
	ld.rep.Tracefs, ld.objs.tracefs = acquireTracefs(cfg.NoTracefsMount)
	ld.fillIRQs()
	ld.attachAll()
	ld.enableJobEnd()
	if ld.objs.tracefs {
		// Attached tracepoints do not need the mount: leave nothing behind, even on kill -9.
		ld.objs.tracefs = false
		err := releaseTracefs()
		log.Info("tracefs was not mounted: ghostdriver mounted it to attach its hooks and unmounted it again",
			zap.String("path", tracefsMountPoint), zap.Error(err))
	}
	if w := FallbackWarning(ld.rep); w != "" {
		log.Warn(w)
	}
	if !anyJobHook(ld.rep) {
		ld.objs.close()
		return ld, errors.New("no GPU hook could be attached: " + ld.rep.Summary())
	}
	if err := jobsModeRefusal(cfg, ld.rep); err != nil {
		ld.objs.close()
		return ld, err
	}
	return ld, nil
}

// Processes is the kernel's table of processes user space has resolved: the OTEP 4947
// thread-context recipe of each (or none), and the reason exec and exit of them are
// reported (bpf/syscalls.c, `procs`).
type Processes interface {
	// SetProcess records pid with where its threads' otel_thread_ctx_v1 slot is (tenant's
	// Process.ThreadContextTLS); nil means "known, no thread context".
	SetProcess(pid uint32, tls *appctx.TLSAccess) error
	// ForgetProcess removes pid (the kernel does it by itself on exec and exit).
	ForgetProcess(pid uint32) error
}

var _ Processes = (*Live)(nil)

// SetProcess implements Processes.
func (l *Live) SetProcess(pid uint32, tls *appctx.TLSAccess) error {
	m := l.objs.procsMap()
	if m == nil {
		return errors.New("probe: the syscalls family is not loaded")
	}
	v := appctx.KernelRecipeOf(tls)
	err := m.Update(pid, &v, 0)
	if isTableFull(err) {
		l.procsFull.Add(1)
		return fmt.Errorf("the kernel's process table is full (%d processes): %w", m.MaxEntries(), err)
	}
	return err
}

// ForgetProcess implements Processes.
func (l *Live) ForgetProcess(pid uint32) error {
	m := l.objs.procsMap()
	if m == nil {
		return nil
	}
	if err := m.Delete(pid); err != nil && !errors.Is(err, ebpf.ErrKeyNotExist) {
		return err
	}
	return nil
}

// Doctor produces the report Open would, without keeping anything attached.
func Doctor(cfg Config, log *zap.Logger) capability.Report {
	if log == nil {
		log = zap.NewNop()
	}
	cfg, err := cfg.withDefaults()
	if err != nil {
		r := newReport()
		r.Add("config", "", capability.StatusUnavailable, err.Error())
		return r
	}
	ld, err := load(cfg, log)
	if err == nil {
		ld.objs.close()
	} else if ld.rep.Entries == nil {
		ld.rep.Add("ring_buffer", "ringbuf/events", capability.StatusUnavailable, err.Error())
	}
	return ld.rep
}

// Clock converts monotonic event times to wall time with the current offset.
func (l *Live) Clock() event.Clock { return liveClock{l} }

type liveClock struct{ l *Live }

func (c liveClock) WallNanos(t int64) int64 { return t + c.l.offset.Load() }

// ClockOffset is the current realtime − monotonic offset in nanoseconds.
func (l *Live) ClockOffset() int64 { return l.offset.Load() }

// Run reads the ring buffer until ctx is cancelled or Close is called (then it
// returns nil). Records are produced without wakeups; Run drains them every
// PollInterval, delivers them in batches and then advances the watermark.
func (l *Live) Run(ctx context.Context, sink event.Sink) error {
	if !l.running.CompareAndSwap(false, true) {
		return errors.New("probe: Run called twice")
	}
	defer l.running.Store(false)
	if l.jobs != nil {
		return l.runJobs(ctx, sink)
	}
	if r, ok := l.rd.(*ringread.Mmap); ok {
		defer r.Release() // the last record read may be unmapped by Close after this
	}

	var (
		batch   = make([]event.Event, 0, maxBatch)
		house   = l.newHousekeeping()
		hold    watermarkHold
		behind  behindMark
		stopped bool
		poller  = ringread.New(l.rd)
	)
	defer behind.report(l.log)
	blocking, _ := l.rd.(blockingReader)
	flush := func() {
		if len(batch) == 0 {
			return
		}
		l.count(batch)
		sink.Consume(batch)
		batch = batch[:0]
	}
	add := func(b []byte) {
		// decode writes the whole event (or fails): the slot is not cleared first.
		batch = batch[:len(batch)+1]
		if derr := l.dec.decode(b, &batch[len(batch)-1]); derr != nil {
			l.bad(batch[len(batch)-1].Name, derr)
			batch = batch[:len(batch)-1]
		} else {
			// One ring buffer, filled by each thread in program order.
			batch[len(batch)-1].InThreadOrder = true
			behind.check(&batch[len(batch)-1], l.log)
			if l.fences != nil {
				l.fences.follow(&batch[len(batch)-1])
			}
		}
		if len(batch) == maxBatch {
			flush()
		}
	}
	record := func(b []byte) bool {
		add(b)
		if len(batch) == 0 && ctx.Err() != nil {
			stopped = true // a batch went out as the context was cancelled: stop now
			return false
		}
		return true
	}
	stop := func() error {
		err := l.stopReading(poller, add)
		flush()
		return err
	}
	defer poller.WakeOnCancel(ctx)()
	for {
		if ctx.Err() != nil {
			return stop()
		}
		house.poll()
		// Everything stamped before this instant is committed by the time the poll below
		// ends (within the reorder window). Its records were reserved before it (stamps
		// are taken after the reservation), so they are within what the ring holds as the
		// poll begins, which the poll reads before it may end early under a flood (the
		// watermark — and with it timeouts and the release of finished jobs — must
		// advance even then).
		mark := kclock.MonoNow()
		err := poller.Poll(l.cfg.PollInterval, record)
		if stopped {
			return stop()
		}
		if err != nil {
			flush()
			if errors.Is(err, ringread.ErrClosed) {
				return nil
			}
			return fmt.Errorf("reading the ring buffer: %w", err)
		}
		flush()
		if blocking != nil {
			held, forced := hold.holds(blocking, l.cfg.PollInterval, &l.watermark)
			if forced {
				l.log.Warn("a ring buffer record stayed reserved and uncommitted for a second; the watermark moved past it, so events stamped before it may be counted late")
			}
			if held {
				continue
			}
		}
		sink.Watermark(mark)
		behind.mark = mark
	}
}

// stopReading is both record modes' stop: ringread's Stop (what the ring holds at the
// stop, read up to ringread.StopTimeout; the rest counted lost, SourceStats.LostAtStop).
func (l *Live) stopReading(p *ringread.Poller, record func([]byte)) error {
	st, err := p.Stop(ringread.StopTimeout, record)
	if st.Left > 0 {
		l.lostAtStop.Add(uint64(st.Left))
		l.log.Warn("the ring still held records when the stop's read ran out of time; they are counted lost",
			zap.Int("read", st.Read), zap.Int("lost", st.Left), zap.Duration("timeout", ringread.StopTimeout))
	}
	if err != nil {
		return fmt.Errorf("reading the ring buffer at the stop: %w", err)
	}
	return nil
}

// housekeeping is what both record modes' Run do between polls: re-sample the clock
// offset every kclock.ResyncPeriod and look for GPU interrupt lines that appeared after
// Start every IRQRefreshInterval (when interrupt names were asked for).
type housekeeping struct {
	l                 *Live
	lastSync, lastIRQ time.Time
}

func (l *Live) newHousekeeping() housekeeping {
	return housekeeping{l: l, lastSync: time.Now(), lastIRQ: time.Now()}
}

func (h *housekeeping) poll() {
	l := h.l
	if time.Since(h.lastSync) >= kclock.ResyncPeriod {
		off, _ := kclock.SampleOffset()
		l.offset.Store(off)
		h.lastSync = time.Now()
	}
	if l.cfg.IRQRefreshInterval > 0 && len(l.cfg.IRQNames) > 0 && time.Since(h.lastIRQ) >= l.cfg.IRQRefreshInterval {
		l.refreshIRQs()
		h.lastIRQ = time.Now()
	}
}

func (l *Live) count(batch []event.Event) {
	l.mu.Lock()
	for i := range batch {
		l.stats.Events[batch[i].Kind]++
	}
	l.mu.Unlock()
}

func (l *Live) bad(name string, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if errors.Is(err, errUnknownHook) {
		l.stats.Unknown[name]++
		return
	}
	l.stats.Malformed++
	if len(l.stats.MalformedSamples) < 8 {
		l.stats.MalformedSamples = append(l.stats.MalformedSamples, "record: "+err.Error())
	}
}

// Stats reports decoded, unknown and malformed records, and ring buffer reserve
// failures counted per CPU in the kernel.
func (l *Live) Stats() event.SourceStats {
	l.mu.Lock()
	s := l.stats
	s.Unknown = make(map[string]uint64, len(l.stats.Unknown))
	for k, v := range l.stats.Unknown {
		s.Unknown[k] = v
	}
	s.MalformedSamples = append([]string(nil), l.stats.MalformedSamples...)
	l.mu.Unlock()
	s.Lost, s.LostSkipped = l.lost()
	s.LostAtStop = l.lostAtStop.Load()
	s.Lost += s.LostAtStop
	s.KernelDrops = l.drops()
	return s
}

// lost is what the kernel could not deliver: ring buffer reserve failures plus the program
// runs it skipped, which skipped counts alone.
func (l *Live) lost() (lost, skipped uint64) {
	l.closeMu.Lock()
	defer l.closeMu.Unlock()
	if l.closed {
		return l.lostLast.Load(), l.skipLast.Load()
	}
	var perCPU []uint64
	if err := l.objs.lostMap().Lookup(uint32(0), &perCPU); err != nil {
		return l.lostLast.Load(), l.skipLast.Load()
	}
	var n uint64
	for _, v := range perCPU {
		n += v
	}
	// Runs the kernel skipped are lost events too: a tracing program is not re-entered
	// on a CPU where it is already running (e.g. one scheduler kworker preempted inside
	// the program while another hits the same tracepoint, seen on a preemptible 7.3
	// guest). The kernel counts them per program (recursion_misses, Linux 5.12+).
	for _, p := range l.objs.progs {
		if st, err := p.Stats(); err == nil {
			skipped += st.RecursionMisses
		}
	}
	l.lostLast.Store(n + skipped)
	l.skipLast.Store(skipped)
	return n + skipped, skipped
}

// drops is kernelDrops while the objects are open, and the last reading after Close.
func (l *Live) drops() map[string]uint64 {
	l.closeMu.Lock()
	defer l.closeMu.Unlock()
	if !l.closed {
		l.dropsLast = l.kernelDrops()
		l.jobDrops(l.dropsLast)
	}
	out := make(map[string]uint64, len(l.dropsLast))
	for k, v := range l.dropsLast {
		out[k] = v
	}
	return out
}

// Close detaches every hook and releases the ring buffer. It is idempotent and makes
// a concurrent Run return nil.
func (l *Live) Close() error {
	l.lost()
	l.drops()
	l.closeMu.Lock()
	defer l.closeMu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	err := l.rd.Close()
	return errors.Join(err, l.objs.close())
}
