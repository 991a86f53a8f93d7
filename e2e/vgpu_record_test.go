// The round trip of `ghostdriver record` on the virtual GPU rig: the guest runs `record`
// beside `ghostdriver live` for the main phase (testdata/vgpu/guest/init: record.txt,
// record.log). Replayed on the host, the capture must give one job per job the driver's
// fake hardware ran (its ground-truth log: the oracle), with the submitter's pid and tid
// the driver logged, and the same jobs as the live source's spans. Differences are
// excused only up to the events each side itself counted as lost.
package e2e

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/ghostdriver/ghostdriver/internal/assemble"
	"github.com/ghostdriver/ghostdriver/internal/pipeline"
	"github.com/ghostdriver/ghostdriver/internal/replay"
)

// recordLost reads the events the kernel lost from record.log's end line
// ("…: N events (…) in …, M lost (overrun …, dropped …); …").
func recordLost(t *testing.T, path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`, (\d+) lost \(overrun \d+, dropped \d+\)`).FindStringSubmatch(string(b))
	if m == nil {
		t.Fatalf("%s has no end line with the loss count:\n%s", path, b)
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

func TestVirtualGPURecordReplay(t *testing.T) {
	dir := vgpuDir(t)
	rigReceiverRan(t, dir) // record runs beside the receiver
	capture := filepath.Join(dir, "record.txt")
	if _, err := os.Stat(capture); err != nil {
		t.Fatalf("the guest wrote no record.txt (guest/init runs `ghostdriver record` beside the live source): %v", err)
	}
	lost := recordLost(t, filepath.Join(dir, "record.log"))

	src, err := replay.New(replay.Config{Path: capture, HasEpoch: true})
	if err != nil {
		t.Fatal(err)
	}
	type rjob struct{ pid, tid uint32 }
	replayed := map[string][]rjob{}
	p := pipeline.New(pipeline.Config{}, src, pipeline.Outputs{Job: func(j *assemble.Job) {
		replayed[j.Finished.String()] = append(replayed[j.Finished.String()], rjob{j.PID, j.TID})
	}}, nil)
	if err := p.Run(context.Background()); err != nil {
		t.Fatalf("replaying record.txt: %v", err)
	}
	st := p.Stats()
	if st.Source.Malformed != 0 {
		t.Errorf("record.txt: %d malformed lines, e.g. %q", st.Source.Malformed, st.Source.MalformedSamples)
	}

	// Against the driver's ground truth.
	gt := readGroundTruth(t, filepath.Join(dir, "groundtruth.txt"))
	missing, wrong := 0, 0
	for _, g := range gt {
		rs := replayed[g.fence]
		switch {
		case len(rs) == 0:
			missing++
			t.Logf("job %s (pid %d tid %d): not in the replayed capture", g.fence, g.pid, g.tid)
		case len(rs) > 1:
			wrong++
			t.Errorf("job %s: %d jobs in the replayed capture", g.fence, len(rs))
		case int(rs[0].pid) != g.pid || int(rs[0].tid) != g.tid:
			wrong++
			t.Errorf("job %s: replayed pid %d tid %d, the driver logged pid %d tid %d", g.fence, rs[0].pid, rs[0].tid, g.pid, g.tid)
		}
	}
	if missing > lost {
		t.Errorf("%d of %d jobs missing from the replayed capture; record counted %d events lost", missing, len(gt), lost)
	}
	if len(replayed) > len(gt) {
		t.Errorf("%d jobs replayed for %d jobs the hardware ran", len(replayed), len(gt))
	}

	// Against the live source of the same run.
	live := readJobSpans(t, filepath.Join(dir, "spans.json"))
	liveLost := reportedLost(t, dir)
	onlyLive, onlyReplay := 0, 0
	for k := range live {
		if _, ok := replayed[k]; !ok {
			onlyLive++
			t.Logf("job %s: live span, not in the replayed capture", k)
		}
	}
	for k := range replayed {
		if _, ok := live[k]; !ok {
			onlyReplay++
			t.Logf("job %s: in the replayed capture, no live span", k)
		}
	}
	if onlyLive > lost || onlyReplay > liveLost {
		t.Errorf("live and recorded jobs differ: %d only live (record lost %d events), %d only recorded (live lost %d)",
			onlyLive, lost, onlyReplay, liveLost)
	}
	t.Logf("%d ground-truth jobs, %d replayed from record.txt (%d events lost by record), %d live spans", len(gt), len(replayed), lost, len(live))
}
