// The per-job record mode on the virtual GPU rig. The guest runs two receivers side by
// side on the main phase's workload (testdata/vgpu/guest/init): events mode (spans.json)
// and jobs mode (spans-jobs.json), and the host replays the guest's tracefs capture
// (spans-replay.json). The three must give the same jobs with the same stages and
// outcomes, and the two live receivers the same rules. Each
// receiver stamps every kernel event with its own program run (two programs on one
// tracepoint run one after the other, and an interrupt can come between them), so their
// times are compared by distribution, and a stage whose rule differs is accepted only when
// the two sides' bounds of it differ by more than the other side's own stamps could: it is
// logged with both rules. The hardware's log checks each side on its own
// (TestVirtualGPUSpansMatchGroundTruth, TestVirtualGPUDependencyWaits).
package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"
)

// jobsVsEventsMedianNs bounds the median |Δ| of stage bounds between the two receivers: the
// same kernel event stamped by two programs in a row (measured on the rig: 10 µs median
// under TCG).
const jobsVsEventsMedianNs = 100_000

func TestVirtualGPUJobsModeMatchesEvents(t *testing.T) {
	dir := vgpuDir(t)
	rigPhase(t, dir, "spans-jobs.json", "GHOSTDRIVER_JOBS_ARGS")
	jobs := readJobSpans(t, filepath.Join(dir, "spans-jobs.json"))
	lost := reportedLostIn(t, filepath.Join(dir, "ghostdriver-jobs.log")) + reportedLostIn(t, filepath.Join(dir, "ghostdriver.log"))
	for _, other := range []struct{ name, file, clock string }{
		{"events", "spans.json", "clock.txt"},
		{"replay", "spans-replay.json", ""},
	} {
		t.Run(other.name, func(t *testing.T) {
			path := filepath.Join(dir, other.file)
			if _, err := os.Stat(path); err != nil {
				t.Fatalf("%s: %v", other.file, err)
			}
			ref := readJobSpans(t, path)
			// Span times are wall clock: CLOCK_MONOTONIC + each receiver's offset; the
			// replay's are the capture's CLOCK_MONOTONIC (--epoch 0).
			jOff := readClockOffset(t, filepath.Join(dir, "clock-jobs.txt"))
			var rOff int64
			if other.clock != "" {
				rOff = readClockOffset(t, filepath.Join(dir, other.clock))
			}
			damage := &jobDamage{}
			var deltas []int64
			ruleDiffs := 0
			keys := sortedKeys(ref)
			for _, k := range keys {
				damage.endJob()
				r := ref[k]
				j, ok := jobs[k]
				if !ok {
					damage.errorf("job %s: in %s, not in spans-jobs.json", k, other.file)
					continue
				}
				if a, b := stageNames(r), stageNames(j); !slices.Equal(a, b) {
					damage.errorf("job %s: stages %v in %s, %v in jobs mode", k, a, other.file, b)
				}
				if a, b := attrStr(r.job, "ghostdriver.job.outcome"), attrStr(j.job, "ghostdriver.job.outcome"); a != b {
					damage.errorf("job %s: outcome %q in %s, %q in jobs mode", k, a, other.file, b)
				}
				// In stage order: a stamp of this job that the two receivers took far apart
				// (one program preempted between the tracepoint and its clock read: both
				// receivers run on the same tracepoints, one after the other) can put two
				// events in the other order for one of them, and so change the rule of the
				// stage it starts and of the next one; diverged says where that happened.
				diverged := ""
				for _, name := range stagesInTimeOrder(r) {
					rs := r.stages[name]
					js, ok := j.stages[name]
					if !ok {
						continue
					}
					ds := int64(js.StartTimestamp()) - jOff - (int64(rs.StartTimestamp()) - rOff)
					de := int64(js.EndTimestamp()) - jOff - (int64(rs.EndTimestamp()) - rOff)
					deltas = append(deltas, abs(ds), abs(de))
					// The replay has other hooks for the ioctl side (syscall tracepoints, no
					// fentry): its rules name them; only the live receivers share hooks.
					if a, b := attrStr(rs, "ghostdriver.stage.rule"), attrStr(js, "ghostdriver.stage.rule"); a != b && other.name == "events" {
						ruleDiffs++
						t.Logf("job %s %s: rule %q in %s, %q in jobs mode (bounds differ by %d / %d ns)", k, name, a, other.file, b, ds, de)
						switch {
						case abs(ds) >= jobsVsEventsMedianNs || abs(de) >= jobsVsEventsMedianNs:
							// the receivers saw this stage's events at other times
						case diverged != "":
							t.Logf("job %s %s: explained by %s", k, name, diverged)
						default:
							damage.errorf("job %s %s: rule %q in %s, %q in jobs mode with the same bounds", k, name, a, other.file, b)
						}
					}
					if diverged == "" && (abs(ds) >= jobsVsEventsMedianNs || abs(de) >= jobsVsEventsMedianNs) {
						diverged = fmt.Sprintf("%s's bounds, %d / %d ns apart in the two receivers", name, ds, de)
					}
				}
			}
			for k := range jobs {
				if _, ok := ref[k]; !ok {
					damage.errorf("job %s: in spans-jobs.json, not in %s", k, other.file)
				}
			}
			damage.report(t, lost)
			if len(ref) == 0 || len(jobs) == 0 {
				t.Fatalf("%d jobs in %s, %d in jobs mode", len(ref), other.file, len(jobs))
			}
			sort.Slice(deltas, func(a, b int) bool { return deltas[a] < deltas[b] })
			med := median(deltas)
			if other.name == "events" && med > jobsVsEventsMedianNs {
				t.Errorf("median |Δ| of stage bounds jobs vs events mode %d ns > %d", med, jobsVsEventsMedianNs)
			}
			t.Logf("%d jobs; %d stage bounds, |Δ| median %d ns p99 %d ns max %d ns; %d stages with another rule",
				len(ref), len(deltas), med, deltas[len(deltas)*99/100], maxOf(deltas), ruleDiffs)
		})
	}
}

// stagesInTimeOrder is the job's stage names by start (then end) time: the order in which
// their events happened.
func stagesInTimeOrder(sj *spanJob) []string {
	names := stageNames(sj)
	sort.SliceStable(names, func(a, b int) bool {
		x, y := sj.stages[names[a]], sj.stages[names[b]]
		if x.StartTimestamp() != y.StartTimestamp() {
			return x.StartTimestamp() < y.StartTimestamp()
		}
		return x.EndTimestamp() < y.EndTimestamp()
	})
	return names
}
