// The ioctl-pair shortcut (pairs.go) must not change any job or count: real captures, the
// rig's captures when present, and a generated 6.17 capture with ioctls that queue nothing
// are assembled with the shortcut and without it (every event through the reorder buffer,
// the code as it was), and the outputs compared whole.
package assemble

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"reflect"
	"sort"
	"testing"

	"github.com/ghostdriver/ghostdriver/internal/event"
	"github.com/ghostdriver/ghostdriver/internal/ftrace"
	"github.com/ghostdriver/ghostdriver/internal/testcapture"
	"github.com/ghostdriver/ghostdriver/internal/testreq"
)

// decodeText decodes a capture's text with the ftrace decoder.
func decodeText(t *testing.T, raw []byte) []event.Event {
	t.Helper()
	d := ftrace.NewDecoder()
	var evs []event.Event
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		var ev event.Event
		if d.Decode(sc.Bytes(), n, &ev) {
			evs = append(evs, ev)
		}
	}
	return evs
}

// inThreadOrder marks events as a time-merged capture delivers them: in each thread's order.
func inThreadOrder(evs []event.Event) []event.Event {
	out := slicesClone(evs)
	for i := range out {
		out[i].InThreadOrder = true
	}
	return out
}

func slicesClone(evs []event.Event) []event.Event { return append([]event.Event(nil), evs...) }

// assembleBoth runs evs (in batches of 64, like a reader's polls) with and without the
// shortcut and returns both outputs and the shortcut's pair count.
func assembleBoth(evs []event.Event) (with, without *collector, pairs uint64) {
	return assembleBothBatch(evs, 64)
}

func assembleBothBatch(evs []event.Event, batch int) (with, without *collector, pairs uint64) {
	run := func(noPairs bool) *collector {
		c := newCollector(DefaultConfig())
		c.a.noPairs = noPairs
		for i := 0; i < len(evs); i += batch {
			c.a.Consume(evs[i:min(i+batch, len(evs))])
			if i%4096 == 0 {
				c.a.Watermark(evs[i].Time) // what the live reader sends after each poll
			}
		}
		c.a.Flush()
		return c
	}
	with, without = run(false), run(true)
	return with, without, with.a.pairsApplied
}

func sameOutput(t *testing.T, name string, with, without *collector) {
	t.Helper()
	if len(with.jobs) != len(without.jobs) {
		t.Fatalf("%s: %d jobs with the shortcut, %d without", name, len(with.jobs), len(without.jobs))
	}
	for i := range with.jobs {
		if !reflect.DeepEqual(with.jobs[i], without.jobs[i]) {
			t.Fatalf("%s: job %d differs:\nwith:    %+v\nwithout: %+v", name, i, *with.jobs[i], *without.jobs[i])
		}
	}
	sw, so := with.a.Stats(), without.a.Stats()
	if !reflect.DeepEqual(sw, so) {
		t.Fatalf("%s: stats differ:\nwith:    %+v\nwithout: %+v", name, sw, so)
	}
}

// withJoblessIoctls adds, after every submit ioctl's exit, two ioctls of the same thread
// that queue nothing (1 µs long, 2 µs apart), one every 50 µs on a thread that never
// submits, and one long ioctl (30 ms, past the reorder window) every 1000th submit; the
// result is sorted by time, as a merged capture is.
func withJoblessIoctls(evs []event.Event) []event.Event {
	out := slicesClone(evs)
	var first, last int64
	n := 0
	for _, e := range evs {
		if first == 0 {
			first = e.Time
		}
		last = e.Time
		if e.Kind != event.IoctlExit || e.TID == 0 {
			continue
		}
		n++
		for k := int64(1); k <= 2; k++ {
			enter := event.Event{Kind: event.IoctlEnter, Name: "sys_enter_ioctl", Time: e.Time + 2000*k, CPU: e.CPU,
				PID: e.PID, TID: e.TID, Comm: e.Comm, Fd: 3, Cmd: 0xc0106440}
			exit := enter
			exit.Kind, exit.Name, exit.Time, exit.Ret = event.IoctlExit, "sys_exit_ioctl", enter.Time+1000, 0
			out = append(out, enter, exit)
		}
		if n%1000 == 0 {
			enter := event.Event{Kind: event.IoctlEnter, Name: "sys_enter_ioctl", Time: e.Time + 500, CPU: 1 - e.CPU%2,
				PID: 77, TID: 77, Comm: "waiter", Fd: 4, Cmd: 0xc0186441}
			exit := enter
			exit.Kind, exit.Name, exit.Time = event.IoctlExit, "sys_exit_ioctl", enter.Time+30_000_000
			out = append(out, enter, exit)
		}
	}
	for t := first; t < last; t += 50_000 {
		enter := event.Event{Kind: event.IoctlEnter, Name: "sys_enter_ioctl", Time: t + 7, CPU: 1, PID: 99, TID: 99, Comm: "poller", Fd: 5, Cmd: 0x5401}
		exit := enter
		exit.Kind, exit.Name, exit.Time = event.IoctlExit, "sys_exit_ioctl", t+7+800
		out = append(out, enter, exit)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Time < out[j].Time })
	return out
}

func TestIoctlPairsChangeNoJob(t *testing.T) {
	t.Run("gpuvis 4.11 gpu_only", func(t *testing.T) {
		evs := inThreadOrder(decodeCapture(t, readCapture(t)))
		with, without, _ := assembleBoth(evs)
		sameOutput(t, "gpu_only", with, without)
	})
	t.Run("gpuvis 4.11 full", func(t *testing.T) {
		f, err := os.Open("../../testdata/captures/gpuvis_amdgpu_4.11_full.trace-cmd-report.txt.gz")
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		z, err := gzip.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := io.ReadAll(z)
		if err != nil {
			t.Fatal(err)
		}
		evs := inThreadOrder(decodeText(t, raw))
		with, without, pairs := assembleBoth(evs)
		sameOutput(t, "full", with, without)
		t.Logf("%d events, %d jobs, %d pairs took the shortcut", len(evs), len(with.jobs), pairs)
	})
	for _, k := range []string{"6.1", "7.3"} {
		t.Run("rig "+k, func(t *testing.T) {
			raw, err := os.ReadFile("../../testdata/vgpu/out/" + k + "/tracefs.txt")
			if err != nil {
				testreq.Skip(t, testreq.VGPU, "the rig's capture of "+k+" is not here (testdata/vgpu/run.sh writes it; it is not committed): "+err.Error())
			}
			evs := inThreadOrder(decodeText(t, raw))
			with, without, pairs := assembleBoth(evs)
			sameOutput(t, "rig "+k, with, without)
			if pairs == 0 {
				t.Errorf("no ioctl pair took the shortcut: the capture's ioctls that queue nothing (%d ioctl exits) should", countKind(evs, event.IoctlExit))
			}
			t.Logf("%d events, %d jobs, %d pairs took the shortcut", len(evs), len(with.jobs), pairs)
		})
	}
	t.Run("generated 6.17 with jobless ioctls", func(t *testing.T) {
		var b bytes.Buffer
		if err := testcapture.Write(&b, testcapture.Options{Style: "6.17", Jobs: 5000, Rings: 4, Procs: 8, Seed: 3}); err != nil {
			t.Fatal(err)
		}
		base := decodeText(t, b.Bytes())
		evs := inThreadOrder(withJoblessIoctls(base))
		with, without, pairs := assembleBoth(evs)
		sameOutput(t, "generated", with, without)
		if len(with.jobs) < 5000 {
			t.Errorf("%d jobs, want the capture's 5000", len(with.jobs))
		}
		// Every added ioctl queues nothing: two per submit, the poller's, the long ones.
		added := (len(evs) - len(base)) / 2
		if st := with.a.Stats(); st.IoctlsWithoutJob < uint64(added) {
			t.Errorf("IoctlsWithoutJob = %d, want at least the %d ioctls added", st.IoctlsWithoutJob, added)
		}
		// All but the long ones (held past the window) and the first few (CPUs not yet seen)
		// take the shortcut.
		if pairs < uint64(added)*9/10 {
			t.Errorf("%d of %d jobless ioctls took the shortcut", pairs, added)
		}
		t.Logf("%d events, %d jobs, %d of %d jobless ioctls took the shortcut", len(evs), len(with.jobs), pairs, added)
	})
}

func countKind(evs []event.Event, k event.Kind) int {
	n := 0
	for i := range evs {
		if evs[i].Kind == k {
			n++
		}
	}
	return n
}

// A thread's event inside its ioctl sends the held enter through the reorder buffer: the
// job queued there keeps its ioctl bracket, and an ioctl without exit is still counted.
func TestIoctlPairsHeldEnterGoesFirst(t *testing.T) {
	k := fk(1<<33|5, 1)
	mark := func(evs ...event.Event) []event.Event { return inThreadOrder(evs) }
	// tid 9's ioctl is processed (its CPU seen) once the stream is a window past it.
	warm := []event.Event{ioctlEnter(0, 9), ioctlExit(1, 9)}
	evs := mark(append(warm,
		ioctlEnter(30100, 7), boEnd(30105, 7), queue617(30110, 7, k), ioctlExit(30120, 7),
		ioctlEnter(30200, 7), ioctlExit(30201, 7), // a pair: the shortcut
		ioctlEnter(30300, 8), ioctlEnter(30400, 8), ioctlExit(30401, 8), // an enter without exit, then a pair
		run617(30500, k), done617(30600, k))...)
	with, without, pairs := assembleBothBatch(evs, 1)
	sameOutput(t, "held enter", with, without)
	j := find(t, with.jobs, k)
	wantPoint(t, j, PointIoctlEnter, 30100, Measured, "sys_enter_ioctl")
	wantPoint(t, j, PointIoctlExit, 30120, Measured, "sys_exit_ioctl")
	if pairs < 2 {
		t.Errorf("%d pairs took the shortcut, want 2 (tid 7's second ioctl, tid 8's second)", pairs)
	}
	if st := with.a.Stats(); st.IoctlsWithoutJob != 4 {
		t.Errorf("IoctlsWithoutJob = %d, want 4 (tid 9's, tid 7's second, tid 8's two)", st.IoctlsWithoutJob)
	}
}
