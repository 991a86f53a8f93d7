// Percentile and summary-table checks on hand-made jobs.
package summary

import (
	"bytes"
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
	st := event.SourceStats{Malformed: 2, MalformedSamples: []string{"line 7: bad timestamp"}}
	st.Events[event.JobQueue] = 4
	s.Write(&b, st)
	out := b.String()
	for _, want := range []string{
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
