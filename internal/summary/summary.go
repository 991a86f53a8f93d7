// Package summary is the offline analyst's view of a run: per driver/ring and stage, how
// many jobs and the p50/p99 of each stage's duration, plus job outcomes and what the
// source counted. `ghostdriver replay` prints it; golden tests compare it.
package summary

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/ghostdriver/ghostdriver/internal/assemble"
	"github.com/ghostdriver/ghostdriver/internal/event"
	"github.com/ghostdriver/ghostdriver/internal/eventdef"
	"github.com/ghostdriver/ghostdriver/internal/sample"
)

type ringKey struct{ driver, device, ring string }

// Summary accumulates jobs. Durations are kept exactly up to 65 536 per ring and stage,
// then in a sketch of bounded size with 0.5 % relative error (series.go): the memory of a
// replay does not grow with the capture.
type Summary struct {
	stages   map[ringKey]*[assemble.NumStages + 1]series // index NumStages = whole job
	measured map[ringKey]*[assemble.NumStages]int
	outcomes map[string]int // "outcome: reason" → count
	jobs     map[assemble.Outcome]int
	// per driver: jobs, and those completed (a driver none of whose jobs completed is
	// told which of its events would bound them)
	byDriver map[string][2]int
}

// New returns an empty summary.
func New() *Summary {
	return &Summary{
		stages:   map[ringKey]*[assemble.NumStages + 1]series{},
		measured: map[ringKey]*[assemble.NumStages]int{},
		outcomes: map[string]int{},
		jobs:     map[assemble.Outcome]int{},
		byDriver: map[string][2]int{},
	}
}

// Add records one job.
func (s *Summary) Add(j *assemble.Job) {
	s.jobs[j.Outcome]++
	if j.Driver != "" {
		n := s.byDriver[j.Driver]
		n[0]++
		if j.Outcome == assemble.Completed {
			n[1]++
		}
		s.byDriver[j.Driver] = n
	}
	if j.Outcome != assemble.Completed {
		s.outcomes[j.Outcome.String()+": "+reasonClass(j.Reason)]++
		return
	}
	k := ringKey{j.Driver, j.Device, j.Ring}
	d, ok := s.stages[k]
	if !ok {
		d = new([assemble.NumStages + 1]series)
		s.stages[k] = d
		s.measured[k] = new([assemble.NumStages]int)
	}
	for _, st := range j.Stages {
		d[st.Stage].add(st.End - st.Start)
		if st.Src == assemble.Measured {
			s.measured[k][st.Stage]++
		}
	}
	d[assemble.NumStages].add(j.End - j.Start)
}

// reasonClass drops the per-job detail of a reason — every parenthesised part — so the
// table groups like reasons; the parts of a compound reason ("a (…); b (…)") stay, so
// "a; b" is not counted as "a".
func reasonClass(r string) string {
	if r == "" {
		return "unspecified"
	}
	if !strings.Contains(r, " (") {
		return r
	}
	var b strings.Builder
	depth := 0
	for i := 0; i < len(r); i++ {
		switch {
		case depth == 0 && r[i] == ' ' && i+1 < len(r) && r[i+1] == '(':
			depth = 1
			i++
		case depth > 0 && r[i] == '(':
			depth++
		case depth > 0 && r[i] == ')':
			depth--
		case depth == 0:
			b.WriteByte(r[i])
		}
	}
	return b.String()
}

// Write prints the summary table, then outcomes, then the source's counters.
func (s *Summary) Write(w io.Writer, src event.SourceStats) {
	keys := make([]ringKey, 0, len(s.stages))
	for k := range s.stages {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.driver != b.driver {
			return a.driver < b.driver
		}
		if a.device != b.device {
			return a.device < b.device
		}
		return a.ring < b.ring
	})
	fmt.Fprintf(w, "%-10s %-14s %-18s %7s %9s %12s %12s\n", "DRIVER", "RING", "STAGE", "COUNT", "MEASURED", "P50", "P99")
	for _, k := range keys {
		ring := k.ring
		if k.device != "" {
			ring = k.device + "/" + k.ring
		}
		for st := 0; st <= assemble.NumStages; st++ {
			d := &s.stages[k][st]
			if d.n == 0 {
				continue
			}
			name, meas := "job", "-"
			if st < assemble.NumStages {
				name = assemble.Stage(st).String()
				meas = fmt.Sprintf("%d", s.measured[k][st])
			}
			p50, p99 := fmtDur(d.percentile(50)), fmtDur(d.percentile(99))
			if d.approx() {
				p50, p99 = "≈"+p50, "≈"+p99
			}
			fmt.Fprintf(w, "%-10s %-14s %-18s %7d %9s %12s %12s\n", k.driver, ring, name, d.n, meas, p50, p99)
		}
	}
	fmt.Fprintf(w, "\njobs: %d completed, %d incomplete, %d evicted\n",
		s.jobs[assemble.Completed], s.jobs[assemble.Incomplete], s.jobs[assemble.Evicted])
	reasons := make([]string, 0, len(s.outcomes))
	for r := range s.outcomes {
		reasons = append(reasons, r)
	}
	sort.Strings(reasons)
	for _, r := range reasons {
		fmt.Fprintf(w, "  %6d  %s\n", s.outcomes[r], r)
	}
	drivers := make([]string, 0, len(s.byDriver))
	for d, n := range s.byDriver {
		if n[1] == 0 && len(eventdef.JobEvents(d)) > 0 {
			drivers = append(drivers, d)
		}
	}
	sort.Strings(drivers)
	for _, d := range drivers {
		fmt.Fprintf(w, "no %s job completed: %s\n", d, eventdef.RecordHint(d))
	}
	fmt.Fprintf(w, "\nevents decoded:")
	var total uint64
	for _, k := range event.Kinds() {
		if n := src.EventsOf(k); n > 0 {
			fmt.Fprintf(w, " %s=%d", k, n)
			total += n
		}
	}
	fmt.Fprintf(w, " (total %d)\n", total)
	if len(src.Unknown) > 0 {
		names := make([]string, 0, len(src.Unknown))
		for n := range src.Unknown {
			names = append(names, n)
		}
		sort.Strings(names)
		fmt.Fprintf(w, "events skipped (not decoded):")
		for _, n := range names {
			fmt.Fprintf(w, " %s=%d", n, src.Unknown[n])
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "malformed lines: %d\n", src.Malformed)
	if src.SortedRuns > 1 {
		fmt.Fprintf(w, "input not in time order: merged from %d sorted runs (per-CPU files concatenated?)\n", src.SortedRuns)
	}
	if src.Truncated > 0 {
		fmt.Fprintf(w, "input cut inside its last line (not decoded): %d\n", src.Truncated)
	}
	for _, m := range src.MalformedSamples {
		fmt.Fprintf(w, "  %s\n", m)
	}
	if src.Lost > 0 {
		fmt.Fprintf(w, "events lost before decoding: %d", src.Lost)
		if src.LostSkipped > 0 || src.LostAtStop > 0 {
			// the live source's kinds: a full ring, runs the kernel did not make, and records
			// the stop had no time for
			fmt.Fprintf(w, " (ring buffer full: %d, program runs the kernel skipped: %d", src.Lost-src.LostSkipped-src.LostAtStop, src.LostSkipped)
			if src.LostAtStop > 0 {
				fmt.Fprintf(w, ", left in the ring at the stop: %d", src.LostAtStop)
			}
			fmt.Fprint(w, ")")
		}
		fmt.Fprintln(w)
	}
	// The live source's kernel side: what it counted instead of sending (ioctls without a
	// job, fences passed over) and what it could not keep (ghostdriver.source.kernel_drops).
	if kd := kindCounts(src.KernelDrops, ""); len(kd) > 0 {
		fmt.Fprintf(w, "counted in the kernel, not sent: %s\n", strings.Join(kd, " "))
	}
}

// WriteAssembly prints what the assembler met that a job's spans may show only as a
// fallback rule: events that came after the reorder window had passed their time, job
// events seen twice, clock jumps, jobs output without their submit ioctl's exit, and events of job kinds that matched no job (fence
// signals are left out: most fences are no job's). Nothing is printed when all are zero.
func WriteAssembly(w io.Writer, a assemble.Stats) {
	orphans := kindCounts(a.Orphans, "fence_")
	if a.Late == 0 && a.Duplicates == 0 && a.ClockJumps == 0 && a.IoctlExitsNotSeen == 0 && len(orphans) == 0 {
		return
	}
	fmt.Fprintf(w, "assembly: %d late events", a.Late)
	if late := kindCounts(a.LateByKind, ""); len(late) > 0 {
		fmt.Fprintf(w, " (%s; at most %s behind, %d only behind a bound event times had moved past the watermark)",
			strings.Join(late, " "), a.LateMaxBehind, a.LatePastWatermark)
	}
	fmt.Fprintf(w, ", %d duplicate job events, %d clock jumps, %d jobs without their submit ioctl's exit",
		a.Duplicates, a.ClockJumps, a.IoctlExitsNotSeen)
	if len(orphans) > 0 {
		fmt.Fprintf(w, "; job events that matched no job: %s", strings.Join(orphans, " "))
	}
	fmt.Fprintln(w)
}

// kindCounts is "kind=n" for each kind counted, sorted by kind, leaving out the kinds that
// start with skip (when not "").
func kindCounts(m map[string]uint64, skip string) []string {
	var out []string
	for k, n := range m {
		if n > 0 && (skip == "" || !strings.HasPrefix(k, skip)) {
			out = append(out, fmt.Sprintf("%s=%d", k, n))
		}
	}
	sort.Strings(out)
	return out
}

// Percentile returns the nearest-rank p-th percentile of d (sorted in place).
func Percentile(d []int64, p float64) int64 {
	if len(d) == 0 {
		return 0
	}
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	rank := int(math.Ceil(p/100*float64(len(d)))) - 1
	if rank < 0 {
		rank = 0
	}
	if rank >= len(d) {
		rank = len(d) - 1
	}
	return d[rank]
}

func fmtDur(ns int64) string {
	return time.Duration(ns).String()
}

// WriteSampling prints what the sampler (internal/sample) decided: jobs and submissions
// whose spans were kept and sampled out, by reason, and the probability share's last
// probability. Every one of them is in the metrics and the table above either way.
func WriteSampling(w io.Writer, st sample.Stats) {
	for k := range sample.NumKinds {
		var kept, dropped uint64
		var why []string
		for r := range sample.NumReasons {
			kept += st.Kept[k][r]
			dropped += st.Dropped[k][r]
			if n := st.Kept[k][r]; n > 0 {
				why = append(why, fmt.Sprintf("%s=%d", sample.ReasonNames[r], n))
			}
			if n := st.Dropped[k][r]; n > 0 {
				why = append(why, fmt.Sprintf("%s(out)=%d", sample.ReasonNames[r], n))
			}
		}
		if kept+dropped == 0 {
			continue
		}
		fmt.Fprintf(w, "sampling %s: %d kept, %d sampled out (%s); probability now %g (th:%s)\n",
			sample.KindNames[k], kept, dropped, strings.Join(why, " "), st.Probability, st.Threshold)
	}
}
