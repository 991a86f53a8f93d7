// BenchmarkAssemble: a synthetic stream shaped like the real amdgpu capture — two
// submitting processes on one gfx ring plus an sdma ring, every job with its queue, run,
// scheduled-fence signal, hardware-fence signal and finished-fence signal, markers in
// between — fed in batches of 64 as a source would. Reports events/s and allocs/event.
package assemble

import (
	"testing"

	"github.com/ghostdriver/ghostdriver/internal/event"
)

func captureShapedStream(jobs int) []event.Event {
	evs := make([]event.Event, 0, jobs*8)
	var hwSeq uint64 = 3803317
	for i := 0; i < jobs; i++ {
		t := int64(i) * 5500 // ~5.5µs apart in µs units below: a job every 5.5ms… scaled
		ctx, tid, comm := uint64(4929), uint32(25155), "RenderThread"
		if i%3 == 2 {
			ctx, tid, comm = 105, 1150, "amdgpu_cs:0"
		}
		ring := "gfx"
		if i%20 == 19 {
			ctx, ring = 73, "sdma1"
		}
		seq := uint64(3000 + i)
		ev := func(k event.Kind, name string, dt int64, cpu int32, tid uint32, comm string) event.Event {
			return event.Event{Kind: k, Name: name, Time: T(t + dt), CPU: cpu, TID: tid, Comm: comm}
		}
		q := ev(event.JobQueue, "amdgpu_cs_ioctl", 0, 2, tid, comm)
		q.Driver, q.Timeline, q.Ring, q.Fence, q.JobID = "amdgpu", ring, ring, fk(ctx, seq), uint64(3489000+i)
		r := ev(event.JobRun, "amdgpu_sched_run_job", 30, 0, 190, ring)
		r.Driver, r.Timeline, r.Ring, r.Fence, r.JobID = "amdgpu", ring, ring, fk(ctx, seq), uint64(3489000+i)
		sched := ev(event.FenceSignaled, "dma_fence_signaled", 38, 0, 190, ring)
		sched.Driver, sched.Timeline, sched.Fence = "amd_sched", ring, fk(ctx-1, seq)
		mark := ev(event.Marker, "print", 100, 2, tid, comm)
		mark.Text = "[Compositor] End Present"
		hw := ev(event.FenceSignaled, "dma_fence_signaled", 1400, 1, 0, "<idle>")
		hwSeq++
		hw.Driver, hw.Timeline, hw.Fence = "amdgpu", ring, fk(0, hwSeq)
		fin := ev(event.FenceSignaled, "dma_fence_signaled", 1402, 1, 0, "<idle>")
		fin.Driver, fin.Timeline, fin.Fence = "amd_sched", ring, fk(ctx, seq)
		evs = append(evs, q, r, sched, mark, hw, fin)
	}
	return evs
}

func BenchmarkAssemble(b *testing.B) {
	evs := captureShapedStream(100_000)
	b.ReportAllocs()
	b.ResetTimer()
	var n int
	for b.Loop() {
		a := New(DefaultConfig(), func(*Job) { n++ })
		for i := 0; i < len(evs); i += 64 {
			a.Consume(evs[i:min(i+64, len(evs))])
		}
		a.Flush()
	}
	b.StopTimer()
	perEvent := float64(b.Elapsed().Nanoseconds()) / float64(b.N) / float64(len(evs))
	b.ReportMetric(1e9/perEvent, "events/s")
	b.ReportMetric(perEvent, "ns/event")
	if n == 0 {
		b.Fatal("no jobs")
	}
}

// allocsPerEvent is checked by a test so a regression does not wait for a benchmark run.
func TestAllocsPerEvent(t *testing.T) {
	evs := captureShapedStream(20_000)
	allocs := testing.AllocsPerRun(3, func() {
		a := New(DefaultConfig(), func(*Job) {})
		for i := 0; i < len(evs); i += 64 {
			a.Consume(evs[i:min(i+64, len(evs))])
		}
		a.Flush()
	})
	if per := allocs / float64(len(evs)); per > 1 {
		t.Errorf("%.2f allocs/event", per)
	}
}
