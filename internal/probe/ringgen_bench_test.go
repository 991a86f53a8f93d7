//go:build linux

package probe

// TestRingGeneratorLoss is a benchmark (BENCHMARKS.md, "Loss at 100 000 jobs/s"): can the
// user-space side — the live reader's Run loop, decode, reorder, assembly, span building
// and the OTLP protobuf encoding of every span — keep up with a given rate of 6.17+ jobs
// in events mode, so that the ring buffer never fills?
//
// This host has no DRM, and BPF_PROG_TEST_RUN of the real hook bodies reaches ≈ 17 000
// jobs/s on one core (13 syscalls per job), so the ring is fed by a generator instead: a
// ring with the BPF ring buffer's semantics (a byte capacity of RingBufferBytes, each
// record taking its length + 8 rounded up to 8; a record that does not fit is dropped and
// counted, as bpf_ringbuf_reserve fails; the reader is woken only once a quarter of the
// ring is pending, as ring_submit does, else at its poll deadline) is filled on a locked
// thread, at the paced rate, with the records the kernel's programs write for one job —
// the same C structs (commonRecord, commonFenceRecord, commonIoctlExitRecord), the same
// hooks, flags and strings: the submit ioctl's enter and exit, dma_fence_init of the
// scheduled and finished fences, drm_sched_job_queue, drm_sched_job_run on a worker
// thread, the hardware fence's init and emit, the scheduled fence's signal, the hardware
// fence's signal in interrupt context, drm_sched_job_done and the finished fence's signal:
// 12 records per job (the fences' destroys are not hooked). Live.Run reads them as it reads the
// kernel's ring, and feeds the real pipeline, whose span batches are encoded to OTLP
// protobuf (what the collector's OTLP exporter sends).
//
// Not covered: the kernel's cost of writing the records (BENCHMARKS.md's per-job kernel
// CPU), contention between CPUs writing the ring, and the export's network send. The
// reader's CPU is the process's CPU minus the generator thread's.
//
// It only runs when GHOSTDRIVER_RINGGEN_OUT names a TSV file; GHOSTDRIVER_RINGGEN_RATES
// (jobs/s, comma-separated; default 100000; 0: no job and no generator, the reader and
// the pipeline idle for the seconds: their own polls and timers) and GHOSTDRIVER_RINGGEN_SECONDS (default 60).
// GHOSTDRIVER_RINGGEN_SPANS says what the pipeline exports (column span_output): stages
// (the default: each job's span and its stage spans), job (stage spans off) or none (no
// span output, the metrics only: what the reader and the assembler alone sustain). The spans
// take the collector's path: the pipeline's SpanBuilder builds pdata (ptrace.Traces, what
// the receiver hands its next consumer) and ptrace.ProtoMarshaler encodes each batch (what
// the OTLP exporter sends).
//
// GHOSTDRIVER_RINGGEN_SAMPLING (column sampling): off (the default: every job's spans) or
// default (pipeline.Config.Sampling = sample.DefaultConfig(): budget 10 000 spans a second of
// source time, keep rules on); the sampler's counts are in jobs_kept, jobs_sampled_out,
// spans_kept, spans_sampled_out and kept_reasons. The sampler's clock is the records' own:
// job n is stamped n periods after the start, and the generator writes the jobs due by the
// wall clock, so source time runs at wall time (source_seconds beside seconds).
// GHOSTDRIVER_RINGGEN_METRICS (column metrics_output): none (the default: the metrics are
// recorded, never collected) or proto (collected every 10 s and at the end, as the receiver
// does, and encoded with pmetric.ProtoMarshaler; metrics_jobs: the ghostdriver.jobs sum of the
// last collection, every job the metrics counted).

import (
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/cilium/ebpf/ringbuf"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"
	"golang.org/x/sys/unix"

	"github.com/ghostdriver/ghostdriver/internal/assemble"
	"github.com/ghostdriver/ghostdriver/internal/emit"
	"github.com/ghostdriver/ghostdriver/internal/event"
	"github.com/ghostdriver/ghostdriver/internal/kclock"
	"github.com/ghostdriver/ghostdriver/internal/metadata"
	"github.com/ghostdriver/ghostdriver/internal/pipeline"
	"github.com/ghostdriver/ghostdriver/internal/ringread"
	"github.com/ghostdriver/ghostdriver/internal/sample"
)

// genRing is a single-producer, single-consumer ring with the BPF ring buffer's loss
// semantics and layout: one byte buffer outside the garbage collector's scanning (no
// pointers in it), each record an 8-byte header (its length) and its bytes, rounded up to
// 8, read in place as the live reader reads the kernel's ring (the record stays valid
// until the next read) and released as it releases them (every ringread.PublishBytes, and
// before a wait). As the kernel maps its ring's pages twice, a
// record that runs past the end continues contiguously: the buffer has room for the
// largest record after its capacity.
type genRing struct {
	capacity uint64 // bytes, a power of two
	wakeAt   uint64
	buf      []byte
	prod     atomic.Uint64 // bytes ever committed
	cons     atomic.Uint64 // bytes ever released by the reader
	next     uint64        // the reader's position after the record it holds
	lost     atomic.Uint64
	maxUsed  atomic.Uint64
	wake     chan struct{}
	deadline time.Time
	closed   atomic.Bool
}

// genMaxRecord bounds a generated record (the largest record struct, with room to spare).
const genMaxRecord = 1 << 12

func newGenRing(capacity int) *genRing {
	if capacity&(capacity-1) != 0 {
		panic("genRing: capacity is not a power of two")
	}
	return &genRing{capacity: uint64(capacity), wakeAt: uint64(capacity / 4), buf: make([]byte, capacity+genMaxRecord),
		wake: make(chan struct{}, 1)}
}

func ringBytes(n int) uint64 { return uint64(ringread.Span(n)) }

// used is what is committed and not yet released.
func (r *genRing) used() uint64 { return r.prod.Load() - r.cons.Load() }

// put copies one record in, or counts it lost when it does not fit.
func (r *genRing) put(rec []byte) {
	if len(rec)+ringread.HeaderSize > genMaxRecord {
		panic("genRing: record larger than genMaxRecord")
	}
	sz := ringBytes(len(rec))
	p := r.prod.Load()
	used := p - r.cons.Load()
	if used+sz > r.capacity {
		r.lost.Add(1)
		return
	}
	at := p & (r.capacity - 1)
	binary.LittleEndian.PutUint32(r.buf[at:], uint32(len(rec)))
	copy(r.buf[at+ringread.HeaderSize:], rec)
	r.prod.Store(p + sz)
	used += sz
	if used > r.maxUsed.Load() {
		r.maxUsed.Store(used)
	}
	if used >= r.wakeAt {
		select {
		case r.wake <- struct{}{}:
		default:
		}
	}
}

func (r *genRing) SetDeadline(t time.Time) { r.deadline = t }
func (r *genRing) AvailableBytes() int     { return int(r.prod.Load() - r.next) }
func (r *genRing) Close() error {
	r.closed.Store(true)
	select {
	case r.wake <- struct{}{}:
	default:
	}
	return nil
}

func (r *genRing) ReadInto(rec *ringbuf.Record) error {
	for {
		if r.closed.Load() {
			return ringbuf.ErrClosed
		}
		// Release what was read, as the live reader publishes its position: every
		// ringread.PublishBytes, and before it waits (below).
		if r.next-r.cons.Load() >= ringread.PublishBytes {
			r.cons.Store(r.next)
		}
		if c := r.next; c != r.prod.Load() {
			at := c & (r.capacity - 1)
			n := int(binary.LittleEndian.Uint32(r.buf[at:]))
			rec.RawSample = r.buf[at+ringread.HeaderSize : at+ringread.HeaderSize+uint64(n) : at+ringread.HeaderSize+uint64(n)]
			r.next = c + ringBytes(n)
			return nil
		}
		r.cons.Store(r.next)
		d := time.Until(r.deadline)
		if d <= 0 {
			return os.ErrDeadlineExceeded
		}
		t := time.NewTimer(d)
		select {
		case <-r.wake:
		case <-t.C:
		}
		t.Stop()
	}
}

// genSource is the Live source over a generated ring (Live's own Stats needs the kernel's
// maps, which a generated ring has not).
type genSource struct {
	l    *Live
	ring *genRing
}

func (s genSource) Clock() event.Clock                             { return s.l.Clock() }
func (s genSource) Run(ctx context.Context, sink event.Sink) error { return s.l.Run(ctx, sink) }
func (s genSource) Stats() event.SourceStats {
	s.l.mu.Lock()
	st := s.l.stats
	s.l.mu.Unlock()
	st.Lost = s.ring.lost.Load()
	return st
}

// jobGen writes one 6.17+ job's records (what sched.c, fence.c and syscalls.c write).
type jobGen struct {
	buf      []byte
	rec      commonRecord
	fence    commonFenceRecord
	exit     commonIoctlExitRecord
	enter    commonIoctlEnterRecord
	seq      uint64
	comm     [16]int8
	rings    [4][16]int8
	dev      [16]int8
	driver   [16]int8
	workerOf [4]uint64 // pid_tgid of each ring's scheduler worker
	pending  []genRecord
}

func cstr(s string) (a [16]int8) {
	for i := 0; i < len(s) && i < 15; i++ {
		a[i] = int8(s[i])
	}
	return a
}

func newJobGen() *jobGen {
	g := &jobGen{comm: cstr("app"), dev: cstr("0000:03:00.0"), driver: cstr("amdgpu")}
	for i, n := range []string{"gfx_0.0.0", "comp_1.0.0", "sdma0", "sdma1"} {
		g.rings[i] = cstr(n)
		g.workerOf[i] = uint64(300+i)<<32 | uint64(300+i)
	}
	return g
}

// genRecord is one record waiting for its place in time order.
type genRecord struct {
	ts uint64
	b  []byte
}

// put queues a copy of the record v stamped ts.
func (g *jobGen) put(ts uint64, b []byte) {
	if len(g.pending) < cap(g.pending) {
		g.pending = g.pending[:len(g.pending)+1]
		last := &g.pending[len(g.pending)-1]
		last.ts, last.b = ts, append(last.b[:0], b...)
		return
	}
	g.pending = append(g.pending, genRecord{ts, append([]byte(nil), b...)})
}

func putRec[T any](g *jobGen, ts uint64, v *T) {
	g.put(ts, unsafe.Slice((*byte)(unsafe.Pointer(v)), unsafe.Sizeof(*v)))
}

// flush writes the queued records into the ring in time order (the kernel's ring is in
// reservation order, which is time order up to the CPUs' races), keeping those stamped
// after until the next flush.
func (g *jobGen) flush(r *genRing, until uint64) {
	slices.SortStableFunc(g.pending, func(a, b genRecord) int { return cmp.Compare(a.ts, b.ts) })
	i := 0
	for ; i < len(g.pending) && g.pending[i].ts <= until; i++ {
		r.put(g.pending[i].b)
	}
	// Move the rest to the front, swapping buffers so none is shared.
	n := copy(g.pending, g.pending[i:])
	for j := n; j < len(g.pending) && j < i+n; j++ {
		g.pending[j].b = nil
	}
	g.pending = g.pending[:n]
}

// job queues job n's 12 records starting at t (ns, CLOCK_MONOTONIC), on ring n%4 by
// process n%8.
func (g *jobGen) job(n uint64, t uint64) {
	ring := n % 4
	proc := 1000 + n%8
	sub := proc<<32 | proc
	worker := g.workerOf[ring]
	schedCtx := 1<<33 | (proc*4+ring)*2 // the entity's scheduled/finished contexts
	finCtx := schedCtx + 1
	hwCtx := 1<<34 | ring
	g.seq++
	seqno, hwSeq := g.seq, g.seq
	cpuSub, cpuWork := uint32(n%2), uint32(1-n%2)
	wide := uint8(commonRecordFlagRF_HAS_FENCE | commonRecordFlagRF_FENCE_WIDE)

	fence := func(h commonHook, at uint64, pidTgid uint64, cpu uint32, ctx, sq uint64) {
		g.fence = commonFenceRecord{Ts: at, PidTgid: pidTgid, FenceCtx: ctx, FenceSeqno: sq, Ptr: 0xffff888000000000 | ctx<<8 | sq&0xff,
			Cpu: cpu, Hook: uint16(h), Flags: wide}
		putRec(g, at, &g.fence)
	}
	sched := func(h commonHook, at uint64, pidTgid uint64, cpu uint32, flags uint8) {
		g.rec = commonRecord{Ts: at, PidTgid: pidTgid, FenceCtx: finCtx, FenceSeqno: seqno, JobId: n + 1, Entity: 0xffff888100000000 | proc<<4 | ring,
			ClientId: proc, Cpu: cpu, Hook: uint16(h), Flags: flags, Comm: g.comm, Ring: g.rings[ring], Dev: g.dev}
		if flags&uint8(commonRecordFlagRF_HW_FENCE) != 0 {
			g.rec.HwCtx, g.rec.HwSeqno = hwCtx, hwSeq
		}
		putRec(g, at, &g.rec)
	}
	us := uint64(time.Microsecond)
	g.enter = commonIoctlEnterRecord{Ts: t, PidTgid: sub, Fd: 5, Cmd: 0xc0186444, Arg: 0x7ffd00001000, Cpu: cpuSub, Hook: uint8(commonHookHOOK_SYS_ENTER_IOCTL),
		Comm: g.comm, Driver: g.driver}
	putRec(g, t, &g.enter)
	fence(commonHookHOOK_DMA_FENCE_INIT, t+1*us, sub, cpuSub, schedCtx, seqno)
	fence(commonHookHOOK_DMA_FENCE_INIT, t+2*us, sub, cpuSub, finCtx, seqno)
	sched(commonHookHOOK_DRM_SCHED_JOB_QUEUE, t+3*us, sub, cpuSub, wide)
	g.exit = commonIoctlExitRecord{Ts: t + 5*us, PidTgid: sub, Ret: 0, Fd: 5, Cmd: 0xc0186444, Cpu: cpuSub, Hook: uint16(commonHookHOOK_SYS_EXIT_IOCTL)}
	putRec(g, t+5*us, &g.exit)
	sched(commonHookHOOK_DRM_SCHED_JOB_RUN, t+10*us, worker, cpuWork, wide)
	fence(commonHookHOOK_DMA_FENCE_INIT, t+11*us, worker, cpuWork, hwCtx, hwSeq)
	fence(commonHookHOOK_DMA_FENCE_EMIT, t+12*us, worker, cpuWork, hwCtx, hwSeq)
	fence(commonHookHOOK_DMA_FENCE_SIGNALED, t+13*us, worker, cpuWork, schedCtx, seqno)
	fence(commonHookHOOK_DMA_FENCE_SIGNALED, t+30*us, 0, cpuSub, hwCtx, hwSeq)
	sched(commonHookHOOK_DRM_SCHED_JOB_DONE, t+31*us, 0, cpuSub, wide|uint8(commonRecordFlagRF_HW_FENCE))
	fence(commonHookHOOK_DMA_FENCE_SIGNALED, t+32*us, 0, cpuSub, finCtx, seqno)
}

const genRecordsPerJob = 12

func threadCPU() time.Duration {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts)
	return time.Duration(ts.Nano())
}

func processCPU() time.Duration {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_PROCESS_CPUTIME_ID, &ts)
	return time.Duration(ts.Nano())
}

func TestRingGeneratorLoss(t *testing.T) {
	out := os.Getenv("GHOSTDRIVER_RINGGEN_OUT")
	if out == "" {
		t.Skip("benchmark: set GHOSTDRIVER_RINGGEN_OUT=FILE")
	}
	seconds := 60.0
	if v, err := strconv.ParseFloat(os.Getenv("GHOSTDRIVER_RINGGEN_SECONDS"), 64); err == nil && v > 0 {
		seconds = v
	}
	rates := "100000"
	if v := os.Getenv("GHOSTDRIVER_RINGGEN_RATES"); v != "" {
		rates = v
	}
	spanOutput := "stages"
	if v := os.Getenv("GHOSTDRIVER_RINGGEN_SPANS"); v != "" {
		spanOutput = v
	}
	if spanOutput != "stages" && spanOutput != "job" && spanOutput != "none" {
		t.Fatalf("GHOSTDRIVER_RINGGEN_SPANS=%q: want stages, job or none", spanOutput)
	}
	sampling := "off"
	if v := os.Getenv("GHOSTDRIVER_RINGGEN_SAMPLING"); v != "" {
		sampling = v
	}
	if sampling != "off" && sampling != "default" {
		t.Fatalf("GHOSTDRIVER_RINGGEN_SAMPLING=%q: want off or default", sampling)
	}
	if v := os.Getenv("GHOSTDRIVER_RINGGEN_TICK"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 || d > 10*time.Millisecond {
			t.Fatalf("GHOSTDRIVER_RINGGEN_TICK=%q: want a duration in (0, 10ms]", v)
		}
		genTick = d
	}
	metricsOutput := "none"
	if v := os.Getenv("GHOSTDRIVER_RINGGEN_METRICS"); v != "" {
		metricsOutput = v
	}
	if metricsOutput != "none" && metricsOutput != "proto" {
		t.Fatalf("GHOSTDRIVER_RINGGEN_METRICS=%q: want none or proto", metricsOutput)
	}
	f, err := os.OpenFile(out, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if st, _ := f.Stat(); st.Size() == 0 {
		fmt.Fprintln(f, "jobs_per_s_target\tseconds\tjobs_sent\trecords_sent\trecords_lost\tevents_decoded\tjobs_whole\tjobs_completed\tjobs_incomplete\tspans_exported\tdropped_jobs\tmax_ring_fill_pct\treader_cpu_pct\treader_cpu_ns_per_job\tgenerator_cpu_pct\tloadavg1\tspan_output"+
			"\tsampling\tmetrics_output\tmetrics_jobs\tjobs_kept\tjobs_sampled_out\tspans_kept\tspans_sampled_out\tkept_reasons\tsampling_probability\tsource_seconds\tspans_per_s\tgen_tick")
	}
	for _, rs := range strings.Split(rates, ",") {
		rate, err := strconv.ParseFloat(strings.TrimSpace(rs), 64)
		if err != nil {
			t.Fatal(err)
		}
		if rate < 0 || math.IsNaN(rate) || math.IsInf(rate, 0) {
			t.Fatalf("GHOSTDRIVER_RINGGEN_RATES: %q is not a rate (jobs/s ≥ 0; 0: idle, no generator)", rs)
		}
		row := genRun(t, rate, seconds, spanOutput, sampling, metricsOutput)
		fmt.Fprintln(f, row)
		t.Log(row)
	}
}

// genTick is how long the generator sleeps when no job is due (GHOSTDRIVER_RINGGEN_TICK,
// column gen_tick): the jobs due since are then written at once. Every sleep of the locked
// thread costs the other threads a timer and a wakeup, counted as the reader's CPU: at
// 200 µs (the default) ≈ 2–3 % of a core more than at 10 ms, whatever the rate (BENCHMARKS.md,
// "Sampling at the source: what it saves"). The reader reads at its 10 ms poll deadline, or once a quarter
// of the ring is pending, so a tick well under 10 ms does not change what it sees.
var genTick = 200 * time.Microsecond

func genRun(t *testing.T, rate, seconds float64, spanOutput, sampling, metricsOutput string) string {
	cfg, err := DefaultConfig().withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	cfg.IRQRefreshInterval = 0 // no interrupt table behind a generated ring
	ring := newGenRing(cfg.RingBufferBytes)
	l := &Live{cfg: cfg, log: zap.NewNop(), rd: ring}
	l.stats.Unknown = map[string]uint64{}
	off, _ := kclock.SampleOffset()
	l.offset.Store(off)
	src := genSource{l, ring}

	var spans, batches, whole atomic.Uint64
	var m ptrace.ProtoMarshaler
	// A whole job: every point its records measure is measured (BO validation and
	// dependencies are not among the generated records).
	measured := []assemble.Point{assemble.PointIoctlEnter, assemble.PointQueued, assemble.PointIoctlExit, assemble.PointRun,
		assemble.PointEmitted, assemble.PointHWDone, assemble.PointFinished}
	outs := pipeline.Outputs{Job: func(j *assemble.Job) {
		for _, pt := range measured {
			if j.Points[pt].Src != assemble.Measured {
				return
			}
		}
		whole.Add(1)
	}}
	if spanOutput != "none" {
		outs.Traces = func(_ context.Context, td ptrace.Traces) error {
			b, err := m.MarshalTraces(td)
			spans.Add(uint64(td.SpanCount()))
			batches.Add(uint64(len(b)))
			return err
		}
	}
	var metricsJobs atomic.Int64
	if metricsOutput == "proto" {
		var mm pmetric.ProtoMarshaler
		outs.Metrics = func(_ context.Context, md pmetric.Metrics) error {
			if _, err := mm.MarshalMetrics(md); err != nil {
				return err
			}
			if n, ok := jobsSum(md); ok {
				metricsJobs.Store(n)
			}
			return nil
		}
	}
	pcfg := pipeline.Config{Assemble: assemble.DefaultConfig(), Metrics: metadata.DefaultMetricsConfig(),
		SpanOptions: []emit.SpanOption{emit.WithStageSpans(spanOutput == "stages")}}
	if sampling == "default" {
		sc := sample.DefaultConfig()
		pcfg.Sampling = &sc
	}
	p := pipeline.New(pcfg, src, outs, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()

	// The generator, on its own locked thread: the jobs due since the last tick, job n
	// stamped n periods after the start, their records written in time order.
	var genCPU time.Duration
	var sent uint64
	var step time.Duration
	cpu0 := processCPU()
	t0 := time.Now()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		c0 := threadCPU()
		if rate == 0 {
			// Idle: no job, the reader and the pipeline alone (their polls and timers).
			time.Sleep(time.Duration(seconds * float64(time.Second)))
			genCPU = threadCPU() - c0
			return
		}
		g := newJobGen()
		total := uint64(rate * seconds)
		mono0 := uint64(kclock.MonoNow()) // job n starts at mono0 + n·step
		step = time.Duration(float64(time.Second) / rate)
		for sent < total {
			due := uint64(time.Since(t0) / step)
			if due > total {
				due = total
			}
			if due == sent {
				time.Sleep(genTick)
				continue
			}
			for ; sent < due; sent++ {
				g.job(sent, mono0+sent*uint64(step))
			}
			g.flush(ring, mono0+due*uint64(step))
		}
		g.flush(ring, math.MaxUint64)
		genCPU = threadCPU() - c0
	}()
	wg.Wait()
	wall := time.Since(t0)
	// Let the reader drain and the pipeline release what the window holds.
	for i := 0; i < 200 && ring.used() > 0; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond)
	cpu := processCPU() - cpu0 - genCPU
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	st := p.Stats()
	var decoded uint64
	for _, n := range st.Source.Events {
		decoded += n
	}
	load, _ := os.ReadFile("/proc/loadavg")
	as := st.Assembler
	if as.Completed+as.Incomplete == 0 && rate > 0 {
		t.Errorf("no job assembled from %d generated jobs", sent)
	}
	if ring.lost.Load() == 0 && whole.Load() != sent {
		t.Errorf("%d of %d generated jobs whole (%d completed) with nothing lost: the generated records are not a whole job", whole.Load(), sent, as.Completed)
	}
	// Every job the assembler emitted: completed, incomplete and evicted.
	emitted := as.Completed + as.Incomplete + as.EvictedTimeout + as.EvictedCap
	// The sampler's counts (DRM jobs: the only kind here).
	var jobsKept, jobsOut, spansKept, spansOut uint64
	reasons, prob := "-", "-"
	if ss := st.Sampling; ss != nil {
		k := sample.KindJob
		var rs []string
		for r := sample.Reason(0); r < sample.NumReasons; r++ {
			jobsKept += ss.Kept[k][r]
			jobsOut += ss.Dropped[k][r]
			spansKept += ss.SpansKept[k][r]
			spansOut += ss.SpansDropped[k][r]
			if ss.Kept[k][r] > 0 {
				rs = append(rs, fmt.Sprintf("%s=%d", r, ss.Kept[k][r]))
			}
		}
		if len(rs) > 0 {
			reasons = strings.Join(rs, ",")
		}
		prob = strconv.FormatFloat(ss.Probability, 'g', 4, 64)
		if spanOutput != "none" && jobsKept+jobsOut != emitted {
			t.Errorf("the sampler decided %d jobs of %d emitted", jobsKept+jobsOut, emitted)
		}
	}
	metricsJobsCol := "-"
	if metricsOutput == "proto" {
		metricsJobsCol = strconv.FormatInt(metricsJobs.Load(), 10)
		if got, want := uint64(metricsJobs.Load()), emitted; got != want {
			t.Errorf("the metrics counted %d jobs of %d emitted", got, want)
		}
	}
	// The records' clock: the first job stamped at mono0, the last (sent−1) periods later.
	sourceSeconds := (time.Duration(max(sent, 1)-1) * step).Seconds()
	return fmt.Sprintf("%.0f\t%.1f\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%.1f\t%.1f\t%.0f\t%.1f\t%s\t%s"+
		"\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t%s\t%s\t%.2f\t%.0f\t%s", rate, wall.Seconds(), sent, sent*genRecordsPerJob,
		ring.lost.Load(), decoded, whole.Load(), as.Completed, as.Incomplete, spans.Load(), st.DroppedJobs,
		100*float64(ring.maxUsed.Load())/float64(ring.capacity), 100*cpu.Seconds()/wall.Seconds(), float64(cpu.Nanoseconds())/float64(max(sent, 1)),
		100*genCPU.Seconds()/wall.Seconds(), strings.Fields(string(load))[0], spanOutput,
		sampling, metricsOutput, metricsJobsCol, jobsKept, jobsOut, spansKept, spansOut, reasons, prob, sourceSeconds,
		float64(spans.Load())/wall.Seconds(), genTick)
}

// jobsSum is the sum of the ghostdriver.jobs data points of md (cumulative: every job the
// metrics counted since the start).
func jobsSum(md pmetric.Metrics) (int64, bool) {
	var n int64
	found := false
	rms := md.ResourceMetrics()
	for i := 0; i < rms.Len(); i++ {
		sms := rms.At(i).ScopeMetrics()
		for j := 0; j < sms.Len(); j++ {
			ms := sms.At(j).Metrics()
			for k := 0; k < ms.Len(); k++ {
				m := ms.At(k)
				if m.Name() != "ghostdriver.jobs" || m.Type() != pmetric.MetricTypeSum {
					continue
				}
				found = true
				dps := m.Sum().DataPoints()
				for d := 0; d < dps.Len(); d++ {
					n += dps.At(d).IntValue()
				}
			}
		}
	}
	return n, found
}
