// Loss windows on the real capture: a finished-fence signal line is replaced by the note
// tracefs would print in its place ("CPU:N [LOST 7 EVENTS]"); the window is read from
// the raw lines (CPU N's lines before and after the note), independently of loss.go.
package assemble

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ghostdriver/ghostdriver/internal/event"
)

var rawLine = regexp.MustCompile(`^.*?-\d+ +\[(\d{3})\] (\d+)\.(\d{6}): (\S+):\s+(.*)$`)

func rawTime(m [][]byte) int64 {
	s, _ := strconv.ParseInt(string(m[2]), 10, 64)
	u, _ := strconv.ParseInt(string(m[3]), 10, 64)
	return s*1_000_000_000 + u*1000
}

func TestLossWindowOnCapture(t *testing.T) {
	lines := bytes.Split(readCapture(t), []byte("\n"))
	// a finished-fence signal in the middle of the capture
	victim, cpu := -1, ""
	var ctx, seq uint64
	for i := len(lines) / 2; i < len(lines); i++ {
		m := rawLine.FindSubmatch(lines[i])
		if m != nil && string(m[4]) == "dma_fence_signaled" && bytes.Contains(m[5], []byte("driver=amd_sched")) {
			fmt.Sscanf(string(m[5][bytes.Index(m[5], []byte("context=")):]), "context=%d seqno=%d", &ctx, &seq)
			victim, cpu = i, string(m[1])
			break
		}
	}
	if victim < 0 {
		t.Fatal("no finished-fence signal found")
	}
	// the window from the raw lines: CPU's last line before, first line after
	var from, to int64 = -1, -1
	for i := victim - 1; i >= 0 && from < 0; i-- {
		if m := rawLine.FindSubmatch(lines[i]); m != nil && string(m[1]) == cpu {
			from = rawTime(m)
		}
	}
	for i := victim + 1; i < len(lines) && to < 0; i++ {
		if m := rawLine.FindSubmatch(lines[i]); m != nil && string(m[1]) == cpu {
			to = rawTime(m)
		}
	}
	if from < 0 || to < 0 {
		t.Fatal("window bounds not found")
	}
	n, _ := strconv.Atoi(cpu)
	withNote := bytes.Join(append(append(append([][]byte{}, lines[:victim]...), []byte(fmt.Sprintf("CPU:%d [LOST 7 EVENTS]", n))), lines[victim+1:]...), []byte("\n"))
	withoutNote := bytes.Join(append(append([][]byte{}, lines[:victim]...), lines[victim+1:]...), []byte("\n"))

	jobs := newCollector(testConfig()).run(decodeCapture(t, withNote)...)
	lost := find(t, jobs, fk(ctx, seq))
	if lost.Outcome == Completed || !strings.HasPrefix(lost.Reason, reasonLost) || lost.Loss != (LossInfo{Windows: 1, Events: 7, Counted: true}) {
		t.Errorf("job %d:%d: %v %q %+v", ctx, seq, lost.Outcome, lost.Reason, lost.Loss)
	}
	marked := 0
	for _, j := range jobs {
		end := j.End
		if !j.Points[PointFinished].Known() {
			end = 1<<63 - 1
		}
		want := j.Start <= to && from <= end
		if got := j.Loss.Windows == 1; got != want {
			t.Errorf("job %v [%d, %d] %v: marked %v, window [%d, %d]", j.Finished, j.Start, j.End, j.Outcome, got, from, to)
		}
		if want {
			marked++
		}
		if j.Loss.Windows == 0 && strings.Contains(j.Reason, reasonLost) {
			t.Errorf("job %v: reason %q without a window", j.Finished, j.Reason)
		}
	}
	if marked < 2 {
		t.Errorf("%d jobs overlap the window: the test shows little", marked)
	}
	// the same capture without the note: the job's reason is the old one, nothing marked
	jobs = newCollector(testConfig()).run(decodeCapture(t, withoutNote)...)
	plain := find(t, jobs, fk(ctx, seq))
	if plain.Loss.Windows != 0 || strings.Contains(plain.Reason, reasonLost) || plain.Reason == "" {
		t.Errorf("without the note: %q %+v", plain.Reason, plain.Loss)
	}
	t.Logf("window [%d, %d] on CPU %s: %d jobs marked; the job's reason %q (without the note: %q)", from, to, cpu, marked, lost.Reason, plain.Reason)
}

// A note before a CPU's first event opens a window from the start of the input; a note
// that names no CPU is not a window (decoded as a header, counted in Lost).
func TestLossWindowBeforeFirstEvent(t *testing.T) {
	var l lossTracker
	lostEv := evLost(3, T(5), 2)
	if !l.see(&lostEv) {
		t.Fatal("EventsLost not consumed")
	}
	other := evOnCPU(1, T(6))
	l.see(&other) // another CPU does not close it
	j := &Job{Start: T(1), End: T(2), Outcome: Completed}
	l.mark(j)
	if j.Loss.Windows != 1 {
		t.Errorf("job before CPU 3's first event: %+v", j.Loss)
	}
	closing := evOnCPU(3, T(10))
	l.see(&closing)
	late := &Job{Start: T(11), End: T(12), Outcome: Completed}
	l.mark(late)
	if late.Loss.Windows != 0 {
		t.Errorf("job after the window: %+v", late.Loss)
	}
	unknownCount := evLost(1, T(20), 0)
	l.see(&unknownCount)
	inc := &Job{Start: T(15), End: T(16), Outcome: Incomplete, Reason: reasonNotFinished}
	l.mark(inc)
	if inc.Loss != (LossInfo{Windows: 1, Events: 0, Counted: false}) || inc.Reason != reasonLost+"; "+reasonNotFinished {
		t.Errorf("incomplete job running into an open window: %+v %q", inc.Loss, inc.Reason)
	}
}

func evLost(cpu int32, t int64, n uint64) event.Event {
	return event.Event{Kind: event.EventsLost, CPU: cpu, Time: t, Arg: n}
}

func evOnCPU(cpu int32, t int64) event.Event {
	return event.Event{Kind: event.FenceSignaled, CPU: cpu, Time: t}
}
