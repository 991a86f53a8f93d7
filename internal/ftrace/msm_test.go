// msm (Adreno) submit events: the decoder's reading of the GPU stamps and the submitter
// checked against the kernel's own formats per version (testdata/gpu-stamps, extracted
// from the kernel trees), and real-format lines as tracefs and trace-cmd print them.
package ftrace

import (
	"os"
	"strings"
	"testing"

	"github.com/ghostdriver/ghostdriver/internal/event"
)

const stampEventsFile = "testdata/gpu-stamps/stamp_events_by_version.txt"

// stampEvent is one "--- version name" block of the stamp events file.
type stampEvent struct {
	version, name string
	printk        string   // the format string
	args          []string // the printk arguments, "__entry->" removed
}

func readStampEvents(t *testing.T) []stampEvent {
	t.Helper()
	b, err := os.ReadFile(stampEventsFile)
	if err != nil {
		t.Fatal(err)
	}
	var out []stampEvent
	var cur *stampEvent
	for _, l := range strings.Split(string(b), "\n") {
		switch {
		case strings.HasPrefix(l, "--- "):
			f := strings.Fields(l)
			out = append(out, stampEvent{version: f[1], name: f[2]})
			cur = &out[len(out)-1]
		case strings.HasPrefix(l, "printk: \"") && cur != nil:
			rest := strings.TrimPrefix(l, "printk: \"")
			end := strings.Index(rest, "\", ")
			cur.printk = rest[:end]
			for _, a := range strings.Split(rest[end+3:], ", ") {
				cur.args = append(cur.args, strings.TrimPrefix(strings.TrimSpace(a), "__entry->"))
			}
		}
	}
	return out
}

// The kernel field each of our argument names must print, whatever its position.
var msmArgField = map[string]string{
	"id": "id", "submitter": "pid", "ring": "ringid", "fseq": "seqno",
	"gputicks": "ticks", "gpustart": "start_ticks", "gpuend": "end_ticks",
}

// Every msm format of every version read from the kernel is one of the table's, and the
// table names each kept argument after the kernel field printed at that position.
func TestMsmFormatsPerVersion(t *testing.T) {
	seen := map[string]int{}
	for _, se := range readStampEvents(t) {
		if !strings.HasPrefix(se.name, "msm_gpu_submit") || se.printk == "" {
			continue
		}
		seen[se.version]++
		checkFormat(t, se.version, se.name, se.printk)
		var ours []string
		for _, f := range famMsm.formats {
			if shapeOf(t, f.printk) == shapeOf(t, se.printk) {
				ours = strings.Fields(f.args)
			}
		}
		if len(ours) != len(se.args) {
			t.Errorf("%s %s: table args %v, kernel args %v", se.version, se.name, ours, se.args)
			continue
		}
		for i, a := range ours {
			if want, ok := msmArgField[a]; ok && se.args[i] != want {
				t.Errorf("%s %s: argument %d is %q in the table but the kernel prints %q there", se.version, se.name, i, a, se.args[i])
			}
		}
	}
	for _, v := range []string{"6.1", "6.12", "7.2", "7.3"} {
		if seen[v] != 3 {
			t.Errorf("version %s: %d msm submit formats in %s, want 3", v, seen[v], stampEventsFile)
		}
	}
}

// Lines as tracefs prints them with the TGID column (options/record-tgid; systrace and
// Perfetto's text export) and as trace-cmd report prints them. The flush runs on the
// drm_sched worker (≥5.19), so its line's thread is not the submitter: pid= is.
func TestMsmRealFormatLines(t *testing.T) {
	sub := event.Event{Kind: event.MsmSubmit, Time: 1234_567890_000, CPU: 2, PID: 1440, TID: 1453, Comm: "RenderThread",
		Name: "msm_gpu_submit", Driver: "msm", JobID: 2081, Ring: "0", Submitter: 1453}
	flush := event.Event{Kind: event.MsmSubmitFlush, Time: 1234_567990_000, CPU: 0, PID: 310, TID: 310, Comm: "gpu-worker",
		Name: "msm_gpu_submit_flush", Driver: "msm", JobID: 2081, Ring: "0", Fence: fk(0, 16665), Submitter: 1453,
		GPUTicks: 1083423501}
	ret := event.Event{Kind: event.MsmSubmitRetired, Time: 1234_568300_000, CPU: 0, PID: 310, TID: 311, Comm: "retire",
		Name: "msm_gpu_submit_retired", Driver: "msm", JobID: 2081, Ring: "0", Fence: fk(0, 16665), Submitter: 1453,
		GPUStart: 1083423660, GPUEnd: 1083425922}
	checkOutcome(t, "submit tgid", "    RenderThread-1453    (   1440) [002] .....  1234.567890: msm_gpu_submit: id=2081 pid=1453 ring=0 bos=12 cmds=2", ev(sub))
	checkOutcome(t, "flush tgid", "      gpu-worker-310     (    310) [000] d..1.  1234.567990: msm_gpu_submit_flush: id=2081 pid=1453 ring=0:16665 ticks=1083423501", ev(flush))
	checkOutcome(t, "retired tgid", "          retire-311     (    310) [000] .....  1234.568300: msm_gpu_submit_retired: id=2081 pid=1453 ring=0:16665 elapsed=117812 ns mhz=587 start=1083423660 end=1083425922", ev(ret))

	// trace-cmd report: no TGID column, so no process.
	noPID := ret
	noPID.PID = 0
	checkOutcome(t, "retired trace-cmd", "          retire-311   [000]  1234.568300: msm_gpu_submit_retired:   id=2081 pid=1453 ring=0:16665 elapsed=117812 ns mhz=587 start=1083423660 end=1083425922", ev(noPID))

	// A counter from 2^63 prints negative through %lld: kept as the unsigned value.
	neg := flush
	neg.PID = 0
	neg.GPUTicks = 1<<64 - 5
	checkOutcome(t, "ticks past 2^63", "      gpu-worker-310   [000] d..1.  1234.567990: msm_gpu_submit_flush: id=2081 pid=1453 ring=0:16665 ticks=-5", ev(neg))

	// a2xx..a5xx write no stamps: zeros, decoded as such (the assembler ignores them).
	zero := noPID
	zero.GPUStart, zero.GPUEnd = 0, 0
	checkOutcome(t, "retired no stamps", "          retire-311   [000]  1234.568300: msm_gpu_submit_retired:   id=2081 pid=1453 ring=0:16665 elapsed=0 ns mhz=0 start=0 end=0", ev(zero))
}
