// Perfetto textproto traces through TranscodePerfetto and the text decoder, against the
// textproto read a second way (a regular expression per line, here): every event decodes,
// in time order, to the values its fields carry, by what each kernel field means.

package ftrace

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/ghostdriver/ghostdriver/internal/event"
)

// rawPerfettoEvent is one event as the test reads the textproto.
type rawPerfettoEvent struct {
	name         string
	ts, pid, cpu int64
	fields       map[string]string // unquoted
}

var (
	pfOpenLine  = regexp.MustCompile(`^\s*([a-z_0-9]+) \{$`)
	pfFieldLine = regexp.MustCompile(`^\s*([a-z_0-9]+): (.*)$`)
)

// readPerfettoRaw reads the events of a textproto: the message opened inside an event,
// its fields, the event's timestamp and pid and its bundle's cpu.
func readPerfettoRaw(t *testing.T, path string) []rawPerfettoEvent {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []rawPerfettoEvent
	var cur *rawPerfettoEvent
	var bundle []int
	depth, cpu := 0, int64(0)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := sc.Text()
		switch {
		case strings.TrimSpace(l) == "}":
			depth--
			if depth == 1 { // a bundle ends
				for _, i := range bundle {
					out[i].cpu = cpu
				}
				bundle = nil
			}
			if depth == 2 && cur != nil {
				bundle = append(bundle, len(out))
				out = append(out, *cur)
				cur = nil
			}
		case pfOpenLine.MatchString(l):
			depth++
			m := pfOpenLine.FindStringSubmatch(l)
			if depth == 3 && m[1] == "event" {
				cur = &rawPerfettoEvent{fields: map[string]string{}}
			} else if depth == 4 {
				cur.name = m[1]
			}
		case pfFieldLine.MatchString(l):
			m := pfFieldLine.FindStringSubmatch(l)
			v := m[2]
			if u, err := strconv.Unquote(v); err == nil {
				v = u
			}
			n, _ := strconv.ParseInt(v, 10, 64)
			switch depth {
			case 2:
				if m[1] == "cpu" {
					cpu = n
				}
			case 3:
				if m[1] == "timestamp" {
					cur.ts = n
				} else if m[1] == "pid" {
					cur.pid = n
				}
			case 4:
				cur.fields[m[1]] = v
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].ts < out[j].ts })
	return out
}

// want is what the kernel's fields of each event mean in an Event.
func (r rawPerfettoEvent) want() event.Event {
	u := func(k string) uint64 { v, _ := strconv.ParseUint(r.fields[k], 10, 64); return v }
	e := event.Event{Name: r.name, Time: r.ts, TID: uint32(r.pid), CPU: int32(r.cpu)}
	switch {
	case r.name == "drm_sched_job" || r.name == "drm_run_job":
		e.JobID, e.Ring, e.FencePtr, e.Entity = u("id"), r.fields["name"], u("fence"), u("entity")
	case r.name == "drm_sched_process_job":
		e.FencePtr = u("fence")
	case strings.HasPrefix(r.name, "drm_sched_job_"):
		e.Fence = event.FenceKey{Context: u("fence_context"), Seqno: u("fence_seqno")}
		e.Ring, e.Device, e.ClientID = r.fields["name"], r.fields["dev"], u("client_id")
	case strings.HasPrefix(r.name, "dma_fence_"):
		e.Fence = event.FenceKey{Context: u("context"), Seqno: u("seqno")}
		e.Driver, e.Timeline = r.fields["driver"], r.fields["timeline"]
	case strings.HasPrefix(r.name, "virtio_gpu_cmd_"):
		e.Device, e.Ring, e.Cmd = r.fields["dev"], r.fields["vq"], uint32(u("type"))
		e.Fence.Seqno, e.JobID = u("fence_id"), u("seqno")
	}
	return e
}

// got keeps of a decoded event what want sets.
func got(e event.Event, w event.Event) event.Event {
	g := event.Event{Name: e.Name, Time: e.Time, TID: e.TID, CPU: e.CPU, JobID: e.JobID, FencePtr: e.FencePtr, Entity: e.Entity,
		Fence: e.Fence, Ring: e.Ring, Device: e.Device, ClientID: e.ClientID, Timeline: e.Timeline, Cmd: e.Cmd}
	if w.Driver != "" {
		g.Driver = e.Driver
	}
	return g
}

func TestPerfettoCapturesDecodeToTheirFields(t *testing.T) {
	paths, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "captures", "perfetto_*.textproto"))
	if len(paths) != 4 {
		t.Fatalf("%d Perfetto textproto captures, want the 4 bundled", len(paths))
	}
	for _, p := range paths {
		t.Run(filepath.Base(p), func(t *testing.T) {
			raw := readPerfettoRaw(t, p)
			f, err := os.Open(p)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			var text bytes.Buffer
			n, err := TranscodePerfetto(f, &text)
			if err != nil {
				t.Fatal(err)
			}
			if n != len(raw) || n == 0 {
				t.Fatalf("%d events transcoded, the textproto has %d", n, len(raw))
			}
			d := NewDecoder()
			for i, line := range strings.Split(strings.TrimSuffix(text.String(), "\n"), "\n") {
				var ev event.Event
				if !d.Decode([]byte(line), i+1, &ev) {
					t.Fatalf("line %d not decoded: %q (%+v)", i+1, line, d.Stats())
				}
				w := raw[i].want()
				if g := got(ev, w); g != w {
					t.Errorf("event %d (%s):\n got %+v\nwant %+v\nline %q", i, raw[i].name, g, w, line)
				}
			}
		})
	}
}

func TestPerfettoUnsupportedContent(t *testing.T) {
	ev := func(body string) string {
		return "# a comment\npacket {\n  ftrace_events {\n    cpu: 2\n    event {\n      timestamp: 1000\n      pid: 7\n" + body + "    }\n  }\n}\n"
	}
	for _, tc := range []struct{ name, in, err string }{
		{"other packet content", "packet {\n  track_event {\n    type: 1\n  }\n}\n", `line 2: "track_event {": packet content other than ftrace_events`},
		{"a field no format has", ev("      drm_sched_job_done {\n        fence_context: 1\n        colour: 3\n      }\n"),
			"drm_sched_job_done with fields [fence_context colour]: no format of it known here has them all"},
		{"a line not understood", "packet {\n  ftrace_events <\n}\n", `line 2: "ftrace_events <": not a field or message line`},
		{"cut short", "packet {\n  ftrace_events {\n", "ends inside packet.ftrace_events"},
	} {
		_, err := TranscodePerfetto(strings.NewReader(tc.in), &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: got %v, want an error with %q", tc.name, err, tc.err)
		}
	}
	// An event no format here knows is printed by name: the decoder counts it unknown.
	var text bytes.Buffer
	in := ev("      sched_switch {\n        prev_pid: 1\n      }\n")
	if !LooksLikePerfettoText([]byte(in)) {
		t.Fatal("not recognised as a Perfetto textproto")
	}
	if n, err := TranscodePerfetto(strings.NewReader(in), &text); err != nil || n != 1 {
		t.Fatalf("%d, %v", n, err)
	}
	d := NewDecoder()
	var e event.Event
	if d.Decode(bytes.TrimSuffix(text.Bytes(), []byte("\n")), 1, &e) || d.Stats().Unknown["sched_switch"] != 1 {
		t.Errorf("%q: decoded or not counted unknown: %+v", text.String(), d.Stats())
	}
}
