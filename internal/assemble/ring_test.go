// Per-ring hardware-start inference ("ring_serial").
package assemble

import (
	"testing"
	"time"

	"github.com/ghostdriver/ghostdriver/internal/event"
)

func onRing(e event.Event, ring string) event.Event { e.Ring = ring; return e }

func TestRingSerial(t *testing.T) {
	j1, j2, j3 := fk(0x10, 1), fk(0x10, 2), fk(0x10, 3)
	h1, h2 := fk(0x2, 101), fk(0x2, 102)
	other := fk(0x20, 1)
	c := newCollector(testConfig())
	jobs := c.run(
		// Three jobs handed to the ring back to back; the ring runs them one at a time.
		queue617(10, 100, j1), queue617(11, 100, j2), queue617(12, 100, j3),
		run617(20, j1), finit(21, 500, "amdgpu", h1),
		run617(22, j2), finit(23, 500, "amdgpu", h2),
		run617(24, j3), // no hardware fence traced for j3
		onRing(queue617(25, 101, other), "sdma0"), onRing(run617(26, other), "sdma0"),
		fsig(50, "amdgpu", h1), done617(51, j1),
		done617(55, other), // another ring: does not delay the gfx jobs
		fsig(80, "amdgpu", h2), done617(81, j2),
		done617(95, j3),
	)
	wantPoint(t, find(t, jobs, j1), PointHWStart, 21, Inferred, "ring_serial") // ring idle: its own te
	jb := find(t, jobs, j2)
	wantPoint(t, jb, PointHWStart, 50, Inferred, "ring_serial") // behind j1's hardware done
	wantStages(t, jb,
		"fence_dependency 11 11 inferred drm_sched_job_queue→no_dependencies",
		"scheduler_queue 11 22 inferred no_dependencies→drm_sched_job_run",
		"ring_emission 22 23 measured drm_sched_job_run→dma_fence_init",
		"dma_scheduling 23 50 inferred dma_fence_init→ring_serial",
		"execution 50 80 inferred ring_serial→dma_fence_signaled",
		"fence_signal 80 81 measured dma_fence_signaled→drm_sched_job_done",
	)
	// Only queue/run/done for j3: execution = [max(tr, previous done), tf].
	jc := find(t, jobs, j3)
	wantPoint(t, jc, PointHWStart, 80, Inferred, "ring_serial")
	wantPoint(t, jc, PointHWDone, 95, Inferred, "fallback_to_finished")
	wantPoint(t, find(t, jobs, other), PointHWStart, 26, Inferred, "ring_serial")

	st := c.a.Stats()
	gfx := st.Rings["0000:03:00.0/gfx_0.0.0"]
	if gfx.Jobs != 3 || gfx.Busy != time.Duration((50-21)+(80-50)+(95-80))*time.Microsecond {
		t.Errorf("ring stats %+v", st.Rings)
	}
	if st.Rings["0000:03:00.0/sdma0"].Jobs != 1 {
		t.Errorf("ring stats %+v", st.Rings)
	}
}
