// Percentile and summary-table checks on hand-made jobs.
package summary

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/ghostdriver/ghostdriver/internal/assemble"
	"github.com/ghostdriver/ghostdriver/internal/event"
)

func TestPercentileNearestRank(t *testing.T) {
	d := []int64{50, 10, 40, 20, 30}
	cases := map[float64]int64{0: 10, 20: 10, 21: 20, 50: 30, 99: 50, 100: 50}
	for p, want := range cases {
		if got := Percentile(append([]int64(nil), d...), p); got != want {
			t.Errorf("p%v = %d, want %d", p, got, want)
		}
	}
	if Percentile(nil, 50) != 0 {
		t.Error("empty input must give 0")
	}
}

func TestWriteGroupsByRingAndCountsOutcomes(t *testing.T) {
	s := New()
	for i := int64(1); i <= 4; i++ {
		s.Add(&assemble.Job{Driver: "amdgpu", Ring: "gfx", Outcome: assemble.Completed, Start: 0, End: i * 1000,
			Stages: []assemble.StageSpan{{Stage: assemble.StageExecution, Start: 0, End: i * 1000, Src: assemble.Measured}}})
	}
	s.Add(&assemble.Job{Driver: "amdgpu", Ring: "gfx", Outcome: assemble.Incomplete, Reason: "no queue event (job began before the capture)"})
	var b bytes.Buffer
	st := event.SourceStats{Malformed: 2, MalformedSamples: []string{"line 7: bad timestamp"},
		KernelDrops: map[string]uint64{event.KernelDropIoctlWithoutJob: 33, event.KernelDropFencePassedOver: 0, event.KernelDropIoctlExitMissed: 1}}
	st.Events[event.JobQueue] = 4
	s.Write(&b, st)
	out := b.String()
	if strings.Contains(out, "fence_passed_over") {
		t.Errorf("a zero kernel count is printed:\n%s", out)
	}
	for _, want := range []string{
		"counted in the kernel, not sent: ioctl_exit_missed=1 ioctl_without_job=33",
		"amdgpu     gfx            execution                4         4          2µs          4µs",
		"amdgpu     gfx            job                      4         -          2µs          4µs",
		"jobs: 4 completed, 1 incomplete, 0 evicted",
		"       1  incomplete: no queue event",
		"job_queue=4 (total 4)",
		"malformed lines: 2",
		"line 7: bad timestamp",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
}

func TestReasonClassKeepsCompoundReasonsApart(t *testing.T) {
	for in, want := range map[string]string{
		"":                             "unspecified",
		"not run when the input ended": "not run when the input ended",
		"not run when the input ended (at the start of the input, before every CPU had recorded an event: its events on other CPUs may be missing)":                                                                  "not run when the input ended",
		"no queue event: none seen on its submission stream (a kernel-internal job, or queued before the capture)":                                                                                                   "no queue event: none seen on its submission stream",
		"no queue event: none seen on its submission stream (a kernel-internal job, or queued before the capture); not finished when the input ended (at the start of the input (nested), before every CPU had run)": "no queue event: none seen on its submission stream; not finished when the input ended",
	} {
		if got := reasonClass(in); got != want {
			t.Errorf("reasonClass(%q) = %q, want %q", in, got, want)
		}
	}
}

// Past exactCap values a cell keeps a bounded sketch: the percentiles stay within the
// sketch's relative error of the exact ones (computed here by sorting all values), and
// its size does not grow with the number of values.
func TestSeriesBoundedBeyondExactCap(t *testing.T) {
	var s series
	all := make([]int64, 0, 300_000)
	x := uint64(12345)
	for i := 0; i < 300_000; i++ {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		v := int64(x % 5_000_000) // 0 … 5 ms
		if i%50 == 0 {
			v = 0
		}
		all = append(all, v)
		s.add(v)
		if i == exactCap-1 && s.approx() {
			t.Fatal("sketched before the cap")
		}
	}
	if !s.approx() || s.exact != nil || len(s.counts) > 4000 || s.n != len(all) {
		t.Fatalf("approx %v, exact %d kept, %d buckets, n %d", s.approx(), len(s.exact), len(s.counts), s.n)
	}
	for _, p := range []float64{1, 50, 90, 99, 99.9} {
		want := Percentile(append([]int64(nil), all...), p)
		got := s.percentile(p)
		if math.Abs(float64(got-want)) > sketchAlpha*float64(want)+1 {
			t.Errorf("p%g: sketch %d, exact %d (more than %.1f %% off)", p, got, want, 100*sketchAlpha)
		}
	}
	if s.percentile(1) != 0 { // 2 % of the values are 0
		t.Errorf("p1 %d, want 0", s.percentile(1))
	}
}

// The lost line splits the live source's two kinds of loss (a full ring, runs the kernel
// skipped) and keeps a capture's loss notes as one number.
func TestWriteSplitsLostEvents(t *testing.T) {
	for _, c := range []struct {
		st   event.SourceStats
		want string
	}{
		{event.SourceStats{Lost: 7, LostSkipped: 2}, "events lost before decoding: 7 (ring buffer full: 5, program runs the kernel skipped: 2)\n"},
		{event.SourceStats{Lost: 7}, "events lost before decoding: 7\n"},
		{event.SourceStats{}, ""},
	} {
		var b bytes.Buffer
		New().Write(&b, c.st)
		line := ""
		for _, l := range strings.SplitAfter(b.String(), "\n") {
			if strings.HasPrefix(l, "events lost before decoding:") {
				line = l
			}
		}
		if line != c.want {
			t.Errorf("%+v: lost line %q, want %q", c.st, line, c.want)
		}
	}
}

// A driver none of whose jobs completed (a 4.18 v3d capture has only v3d_submit_cl): the
// summary names the driver's events that bound a job and how to record them.
func TestSummaryNamesTheEventsOfADriverWithoutCompletedJobs(t *testing.T) {
	s := New()
	s.Add(&assemble.Job{Driver: "v3d", Ring: "v3d_bin", Outcome: assemble.Incomplete, Reason: "no finished fence when the input ended"})
	s.Add(&assemble.Job{Driver: "amdgpu", Ring: "gfx", Outcome: assemble.Completed})
	var b strings.Builder
	s.Write(&b, event.SourceStats{})
	if !strings.Contains(b.String(), "no v3d job completed: v3d's events that bound a job are v3d_submit_cl") ||
		strings.Contains(b.String(), "no amdgpu job completed") {
		t.Errorf("summary:\n%s", b.String())
	}
}
