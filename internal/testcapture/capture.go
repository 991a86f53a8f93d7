// Package testcapture generates large ftrace text captures shaped like the real ones the
// replay decoder is tested on: a fixture of the product tests (assemble, pipeline, the
// receiver, the CLI) and of the user-space benchmarks (BENCHMARKS.md; bench/gencapture
// writes one to a file):
//
//   - "4.11": trace-cmd report text like testdata/captures/gpuvis_amdgpu_4.11_*: per job
//     amdgpu_cs_ioctl, amdgpu_sched_run_job, the scheduled fence's dma_fence_signaled
//     (driver=amd_sched, context−1), the hardware fence's (driver=amdgpu, one context per
//     ring), the finished fence's, and a trace_marker print line now and then.
//   - "6.17": tracefs `trace` text (irq-flags column) like testdata/vgpu/out/7.3: per job
//     the submit ioctl's sys_ioctl enter/exit, dma_fence_init of the scheduled and
//     finished fences, drm_sched_job_queue, drm_sched_job_run on a kworker, the hardware
//     fence's init/emit, the scheduled fence's signal, the hardware fence's signal in
//     hard IRQ, drm_sched_job_done and the finished fence's signal — 12 lines per job.
//
// Jobs are spread over K rings (each ring runs its jobs one after the other) and P
// submitting processes (one fence context per process and ring, as drm_sched entities
// have). Lines come out in time order; µs timestamps as in the real captures.
package testcapture

import (
	"bufio"
	"container/heap"
	"fmt"
	"io"
	"math/rand/v2"
)

// Options of one capture.
type Options struct {
	Style string // "4.11" or "6.17"
	Jobs  int
	Rings int
	Procs int
	// Rate is submitted jobs per second of capture time (default: keeps the rings ≈ 80 % busy).
	Rate float64
	// Pending: jobs are queued and never run or finish (the assembler's pending table).
	Pending bool
	// Start is the first timestamp in seconds (default 1000).
	Start float64
	Seed  uint64
}

// Bytes-per-job guide: 4.11 ≈ 620 B, 6.17 ≈ 1.3 KB.

type line struct {
	t   int64 // µs
	seq int   // tie-break: generation order
	s   string
}

type lineHeap []line

func (h lineHeap) Len() int { return len(h) }
func (h lineHeap) Less(i, j int) bool {
	if h[i].t != h[j].t {
		return h[i].t < h[j].t
	}
	return h[i].seq < h[j].seq
}
func (h lineHeap) Swap(i, j int)   { h[i], h[j] = h[j], h[i] }
func (h *lineHeap) Push(x any)     { *h = append(*h, x.(line)) }
func (h *lineHeap) Pop() (x any)   { old := *h; x = old[len(old)-1]; *h = old[:len(old)-1]; return x }
func (h lineHeap) peekTime() int64 { return h[0].t }

// Write writes the capture to w.
func Write(w io.Writer, o Options) error {
	if o.Rings <= 0 {
		o.Rings = 1
	}
	if o.Procs <= 0 {
		o.Procs = 1
	}
	if o.Start == 0 {
		o.Start = 1000
	}
	const meanEngineUS = 200 // engine time 100–300 µs
	if o.Rate <= 0 {
		o.Rate = 0.8 * float64(o.Rings) * 1e6 / meanEngineUS
	}
	if o.Style != "4.11" && o.Style != "6.17" {
		return fmt.Errorf("style %q: want 4.11 or 6.17", o.Style)
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	rng := rand.New(rand.NewPCG(o.Seed, 42))
	g := &gen{o: o, w: bw, ringFree: make([]int64, o.Rings), hwSeq: make([]uint64, o.Rings),
		seq: make([]uint64, o.Procs*o.Rings)}
	if o.Style == "6.17" {
		fmt.Fprintf(bw, "# tracer: nop\n#\n# entries-in-buffer/entries-written: %d/%d   #P:2\n#\n", o.Jobs*12, o.Jobs*12)
	} else {
		fmt.Fprintf(bw, "cpus=4\n")
	}
	start := int64(o.Start * 1e6)
	gapUS := 1e6 / o.Rate
	for i := 0; i < o.Jobs; i++ {
		t := start + int64(float64(i)*gapUS)
		for g.h.Len() > 0 && g.h.peekTime() < t {
			g.flushOne()
		}
		g.job(i, t, 100+rng.Int64N(200), rng.IntN(8) == 0)
	}
	for g.h.Len() > 0 {
		g.flushOne()
	}
	return bw.Flush()
}

type gen struct {
	o        Options
	w        *bufio.Writer
	h        lineHeap
	n        int
	ringFree []int64
	hwSeq    []uint64
	seq      []uint64 // per (proc, ring) entity
}

func (g *gen) add(t int64, s string) {
	heap.Push(&g.h, line{t: t, seq: g.n, s: s})
	g.n++
}

func (g *gen) flushOne() {
	l := heap.Pop(&g.h).(line)
	sec, us := l.t/1e6, l.t%1e6
	if g.o.Style == "4.11" {
		fmt.Fprintf(g.w, l.s, fmt.Sprintf("%d.%06d", sec, us))
	} else {
		fmt.Fprintf(g.w, l.s, fmt.Sprintf("%5d.%06d", sec, us))
	}
	g.w.WriteByte('\n')
}

var rings411 = []string{"gfx", "comp_1.0.0", "sdma0", "sdma1", "comp_1.1.0", "comp_1.2.0", "uvd", "vce"}
var rings617 = []string{"gfx_0.0.0", "comp_1.0.0", "sdma0", "sdma1", "comp_1.1.0", "comp_1.2.0", "vcn_dec", "vcn_enc"}

func ringName(names []string, r int) string {
	if r < len(names) {
		return names[r]
	}
	return fmt.Sprintf("ring%d", r)
}

// job adds one job's lines. "%s" in each line is the timestamp.
func (g *gen) job(i int, t, engineUS int64, marker bool) {
	o := g.o
	ring := i % o.Rings
	proc := (i / o.Rings) % o.Procs
	ent := proc*o.Rings + ring
	g.seq[ent]++
	seq := g.seq[ent]
	finCtx := uint64(100 + 2*ent + 1)
	schedCtx := finCtx - 1
	pid := 2000 + proc*10
	tid := pid + 1 + ring%2
	comm := fmt.Sprintf("app%d", proc)
	cpu := proc % 4
	runAt := max(t+20, g.ringFree[ring])
	endAt := runAt + 5 + engineUS
	if !o.Pending {
		g.ringFree[ring] = endAt
	}
	g.hwSeq[ring]++
	hw := g.hwSeq[ring]
	jobID := uint64(1_000_000 + i)

	if o.Style == "4.11" {
		rn := ringName(rings411, ring)
		task := fmt.Sprintf("%16s-%-5d [%03d] %%s: ", comm, tid, cpu)
		sched := fmt.Sprintf("%16s-%-5d [%03d] %%s: ", rn, 190+ring, (cpu+1)%4)
		irq := fmt.Sprintf("%16s-%-5d [%03d] %%s: ", "<idle>", 0, (cpu+2)%4)
		g.add(t, task+fmt.Sprintf("amdgpu_cs_ioctl:      sched_job=%d, timeline=%s, context=%d, seqno=%d, ring_name=ffff91cb1ab1%04x, num_ibs=1", jobID, rn, finCtx, seq, ring*0x10))
		if marker {
			g.add(t+3, task+"print:                0xffffffffabf5a467: [Compositor] End Present")
		}
		if o.Pending {
			return
		}
		g.add(runAt, sched+fmt.Sprintf("amdgpu_sched_run_job: sched_job=%d, timeline=%s, context=%d, seqno=%d, ring_name=ffff91cb1ab1%04x, num_ibs=1", jobID, rn, finCtx, seq, ring*0x10))
		g.add(runAt+3, sched+fmt.Sprintf("dma_fence_signaled:   driver=amd_sched timeline=%s context=%d seqno=%d", rn, schedCtx, seq))
		g.add(endAt, irq+fmt.Sprintf("dma_fence_signaled:   driver=amdgpu timeline=%s context=%d seqno=%d", rn, ring, 3_800_000+hw))
		g.add(endAt+2, irq+fmt.Sprintf("dma_fence_signaled:   driver=amd_sched timeline=%s context=%d seqno=%d", rn, finCtx, seq))
		return
	}
	rn := ringName(rings617, ring)
	task := fmt.Sprintf("%16s-%-7d [%03d] %%s %%s: ", comm, tid, cpu)
	worker := fmt.Sprintf("%16s-%-7d [%03d] %%s %%s: ", fmt.Sprintf("kworker/u8:%d", ring), 12+ring, (cpu+1)%2)
	irqTask := fmt.Sprintf("%16s-%-7d [%03d] %%s %%s: ", "<idle>", 0, cpu%2)
	dev := "0000:03:00.0"
	fl := func(pre, flags string) string { return fmt.Sprintf(pre, flags, "%s") }
	arg := 0x7f5f8b12bec0 + uint64(tid)*0x1000
	g.add(t, fl(task, ".....")+fmt.Sprintf("sys_ioctl(fd: 4, cmd: 0xc0406441, arg: 0x%x)", arg))
	g.add(t+2, fl(task, ".....")+fmt.Sprintf("dma_fence_init: driver=drm_sched timeline=%s context=%d seqno=%d", rn, schedCtx, seq))
	g.add(t+2, fl(task, ".....")+fmt.Sprintf("dma_fence_init: driver=drm_sched timeline=%s context=%d seqno=%d", rn, finCtx, seq))
	g.add(t+3, fl(task, ".....")+fmt.Sprintf("drm_sched_job_queue: dev=%s, fence=%d:%d, ring=%s, job count:0, hw job count:0, client_id:%d", dev, finCtx, seq, rn, proc+1))
	g.add(t+4, fl(task, ".....")+"sys_ioctl -> 0x0")
	if o.Pending {
		return
	}
	g.add(runAt, fl(worker, ".....")+fmt.Sprintf("drm_sched_job_run: dev=%s, fence=%d:%d, ring=%s, job count:0, hw job count:1, client_id:%d", dev, finCtx, seq, rn, proc+1))
	g.add(runAt+1, fl(worker, "d..1.")+fmt.Sprintf("dma_fence_init: driver=amdgpu timeline=%s context=%d seqno=%d", rn, ring+1, hw))
	g.add(runAt+1, fl(worker, "d..1.")+fmt.Sprintf("dma_fence_emit: driver=amdgpu timeline=%s context=%d seqno=%d", rn, ring+1, hw))
	g.add(runAt+2, fl(worker, "d..1.")+fmt.Sprintf("dma_fence_signaled: driver=drm_sched timeline=%s context=%d seqno=%d", rn, schedCtx, seq))
	g.add(endAt, fl(irqTask, "d.h1.")+fmt.Sprintf("dma_fence_signaled: driver=amdgpu timeline=%s context=%d seqno=%d", rn, ring+1, hw))
	g.add(endAt, fl(irqTask, "d.h1.")+fmt.Sprintf("drm_sched_job_done: fence=%d:%d signaled", finCtx, seq))
	g.add(endAt+1, fl(irqTask, "d.h2.")+fmt.Sprintf("dma_fence_signaled: driver=drm_sched timeline=%s context=%d seqno=%d", rn, finCtx, seq))
}
