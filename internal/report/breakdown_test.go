// The report's numbers on a small set whose every instant was attributed by hand (the
// comments walk the timeline): the busy split, stage quantiles and tenant sums.
package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/ghostdriver/ghostdriver/internal/timeline"
)

func st(name string, s, e int64) timeline.Stage {
	return timeline.Stage{Name: name, Start: s, End: e, Source: "inferred"}
}

func handSet() *timeline.Set {
	gfx := timeline.Ring{Driver: "amdgpu", Ring: "gfx"}
	comp := timeline.Ring{Driver: "amdgpu", Ring: "comp"}
	return &timeline.Set{Jobs: []timeline.Job{
		{Ring: gfx, Start: 0, End: 52, Service: "vkcube", PID: 500, Fence: "1:1", Stages: []timeline.Stage{
			st("fence_dependency", 0, 10), st("ring_emission", 10, 12), st("dma_scheduling", 12, 20),
			st("execution", 20, 50), st("fence_signal", 50, 52)}},
		{Ring: gfx, Start: 5, End: 71, Service: "vkcube", PID: 500, Fence: "1:2", Stages: []timeline.Stage{
			st("fence_dependency", 5, 30), st("ring_emission", 30, 31), st("dma_scheduling", 31, 50),
			st("execution", 50, 70), st("fence_signal", 70, 71)}},
		{Ring: gfx, Start: 100, End: 130, Service: "unknown_service", PID: 600, Fence: "2:1", Error: "incomplete", Stages: []timeline.Stage{
			st("fence_dependency", 100, 100), st("ring_emission", 100, 110), st("execution", 120, 130)}},
		{Ring: comp, Start: 200, End: 300, Service: "unknown_service", TID: 77, Thread: "worker", Fence: "3:1", Stages: []timeline.Stage{
			st("fence_dependency", 200, 210), st("gpu_preempt", 210, 260), st("execution", 260, 300)}},
	}}
}

func TestBusySplitByHand(t *testing.T) {
	sum := Summarize(handSet())
	if sum.Window != 300 || sum.Jobs != 4 || sum.Failed != 1 {
		t.Fatalf("window %d jobs %d failed %d, want 300, 4, 1", sum.Window, sum.Jobs, sum.Failed)
	}
	// amdgpu/comp sorts before amdgpu/gfx.
	comp, gfx := sum.Rings[0], sum.Rings[1]
	// gfx, instant by instant (first active of executing, fences, overhead, hw queue, other):
	// [0,5) A fence; [5,10) A+B fence; [10,12) A emission, B fence → fence; [12,20) A dma,
	// B fence → fence: 20 of fences. [20,50) A exec; [50,52) A signal, B exec → exec;
	// [52,70) B exec; [120,130) C exec: 60 executing. [70,71) B signal, [100,110) C
	// emission: 11 overhead. [110,120) C in flight with no stage: 10. Busy 71 + 30 = 101.
	want := map[timeline.Category]int64{timeline.CategoryFenceWait: 20, timeline.CategoryExecuting: 60, timeline.CategoryOverhead: 11}
	if gfx.Ring != "amdgpu/gfx" || gfx.Busy != 101 || gfx.InFlightOnly != 10 || gfx.Jobs != 3 || gfx.Failed != 1 {
		t.Errorf("gfx: %+v; want busy 101, in flight only 10, 3 jobs, 1 failed", gfx)
	}
	for _, c := range timeline.Categories {
		if gfx.Shares[c] != want[c] {
			t.Errorf("gfx %s: %d, want %d", c, gfx.Shares[c], want[c])
		}
	}
	// comp: [200,210) fence 10, [210,260) a stage nobody classified: other 50, [260,300) exec 40.
	if comp.Busy != 100 || comp.Shares[timeline.CategoryOther] != 50 || comp.Shares[timeline.CategoryFenceWait] != 10 ||
		comp.Shares[timeline.CategoryExecuting] != 40 {
		t.Errorf("comp: %+v; want busy 100 = 10 fences + 50 other + 40 executing", comp)
	}

	// gfx execution durations 30, 20, 10: nearest-rank p50 20, p99 30.
	for _, r := range sum.RingStages["amdgpu/gfx"] {
		if r.Stage == "execution" && (r.Count != 3 || r.Total != 60 || r.P50 != 20 || r.P99 != 30 || r.Max != 30) {
			t.Errorf("gfx execution row %+v, want count 3 total 60 p50 20 p99 30 max 30", r)
		}
	}
	// The unknown stage is listed on its ring, counted as other.
	found := false
	for _, r := range sum.RingStages["amdgpu/comp"] {
		if r.Stage == "gpu_preempt" {
			found = r.Count == 1 && r.Total == 50 && r.Category == timeline.CategoryOther
		}
	}
	if !found {
		t.Errorf("gpu_preempt missing or wrong in %+v", sum.RingStages["amdgpu/comp"])
	}

	// Tenants: vkcube's two jobs were in flight 52 + 66 = 118 and executed 30 + 20.
	var vk *TenantRow
	for i := range sum.Tenants {
		if sum.Tenants[i].Tenant == "vkcube (pid 500)" {
			vk = &sum.Tenants[i]
		}
	}
	if vk == nil || vk.Jobs != 2 || vk.InFlight != 118 || vk.ByCat[timeline.CategoryExecuting] != 50 ||
		vk.ByCat[timeline.CategoryFenceWait] != 35 || vk.ByCat[timeline.CategoryOverhead] != 6 {
		t.Errorf("vkcube tenant %+v; want 2 jobs, 118 in flight, 50 executing, 35 on fences, 6 overhead", vk)
	}
	if len(sum.Tenants) != 3 {
		t.Errorf("%d tenants, want vkcube, pid 600 and the thread worker", len(sum.Tenants))
	}
}

func TestReportHTMLHoldsTheTables(t *testing.T) {
	var buf bytes.Buffer
	if _, err := Write(&buf, handSet(), Options{Title: "hand <set>", Source: "test"}); err != nil {
		t.Fatal(err)
	}
	html := buf.String()
	for _, want := range []string{
		`<span id="job-count">4</span>`, "gpu_preempt", "thread worker (process unknown)", "vkcube (pid 500)",
		"hand &lt;set&gt;", // the title is escaped
	} {
		if !strings.Contains(html, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	for _, banned := range []string{"<script src", "<link", "@import", "url("} {
		if strings.Contains(html, banned) {
			t.Errorf("the page fetches something: %q", banned)
		}
	}
}
