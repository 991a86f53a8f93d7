// The Decoder: one line in, one event.Event out, and the counts of everything else.

package ftrace

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/ghostdriver/ghostdriver/internal/event"
)

// MaxLineLen is the longest line the decoder parses; longer lines are malformed. Real
// event lines are bounded by the trace ring buffer's page (a few KiB).
const MaxLineLen = 64 << 10

// maxSamples is how many malformed lines are kept as examples.
const maxSamples = 10

// maxInterned bounds the intern table, so hostile input cannot grow it without limit.
const maxInterned = 8192

// spec is an eventSpec with its formats compiled.
type spec struct {
	eventSpec
	name      string // Event.Name
	templates []*template
	idx       int // index into Decoder.lastHit
}

var (
	specs     map[string]*spec
	templates []*template // every compiled format, by id
	nSpecs    int
)

func init() { loadSpecs(events) }

// loadSpecs compiles the table's entries (events; a test may add rows of its own).
func loadSpecs(events []eventSpec) {
	specs, templates, nSpecs = make(map[string]*spec, len(events)), nil, 0
	compiled := map[*family][]*template{}
	for _, e := range events {
		if _, dup := specs[e.name]; dup {
			panic("ftrace table: duplicate event " + e.name)
		}
		s := &spec{eventSpec: e, name: e.name, idx: nSpecs}
		nSpecs++
		if e.tracepoint != "" {
			s.name = e.tracepoint
		}
		if e.fam != nil {
			ts, ok := compiled[e.fam]
			if !ok {
				for i := range e.fam.formats {
					t := compile(&e.fam.formats[i])
					t.fam, t.id = e.fam, len(templates)
					templates = append(templates, t)
					ts = append(ts, t)
				}
				compiled[e.fam] = ts
			}
			s.templates = ts
		}
		specs[e.name] = s
	}
}

// Known reports whether name (as printed in a trace line) is in the table, and the Kind it
// decodes to. KindUnknown with true means known but deliberately not decoded.
func Known(name string) (event.Kind, bool) {
	s, ok := specs[name]
	if !ok {
		return event.KindUnknown, false
	}
	return s.kind, true
}

// Decoder decodes trace lines. It is not safe for concurrent use.
type Decoder struct {
	stats      event.SourceStats
	unknown    map[string]*uint64
	headers    uint64
	strs       map[string]string
	lastHit    []int    // per spec: index of the template that matched last
	formatHits []uint64 // per template id
	caps       [maxCaptures]capture
	vals       []byte // DecodeValues' text arguments (values.go)
	entryArgs  [maxCaptures]Arg
	digits     []byte // DecodeEntry's numbers that fill text fields, as printed (entry.go)
	h          header
	task       taskColumns // line.go
	// lastTS is the timestamp of the last line that had one: a "[LOST n EVENTS]" note
	// takes it as its time (the note has none).
	lastTS int64

	recentSpecs [recentSlots]recentSpec // recent.go
	recentStrs  [recentSlots]string
}

// NewDecoder returns a Decoder with empty counts.
func NewDecoder() *Decoder {
	return &Decoder{
		unknown:    map[string]*uint64{},
		strs:       map[string]string{},
		lastHit:    make([]int, nSpecs),
		formatHits: make([]uint64, len(templates)),
	}
}

// Decode parses one line (without trailing newline). lineNo is 1-based for error samples.
// It returns true and fills *ev when the line is a decoded event; false for headers,
// unknown events and malformed lines (each counted in Stats()).
func (d *Decoder) Decode(line []byte, lineNo int, ev *event.Event) bool {
	for n := len(line); n > 0 && (line[n-1] == '\n' || line[n-1] == '\r'); n = len(line) {
		line = line[:n-1]
	}
	if len(line) > MaxLineLen {
		d.malformed(lineNo, reasonTooLong, line)
		return false
	}
	h := &d.h
	reason, noTS := splitAny(&d.task, line, h)
	if noTS {
		return d.nonEvent(line, lineNo, ev)
	}
	if reason != "" {
		d.malformed(lineNo, reason, line)
		return false
	}
	d.lastTS = h.ts
	s, ok := d.lookupSpec(h.name)
	if !ok {
		d.countUnknown(h.name)
		return false
	}
	if s.kind == event.KindUnknown {
		d.countUnknown(h.name)
		return false
	}
	payload := trimBlankRight(h.payload)
	*ev = event.Event{
		Kind:   s.kind,
		Time:   h.ts,
		CPU:    h.cpu,
		PID:    h.tgid,
		TID:    h.tid,
		Name:   s.name,
		Driver: s.driver,
	}
	if len(h.comm) > 0 && string(h.comm) != "<...>" {
		ev.Comm = d.intern(h.comm)
	}
	if s.kind == event.Marker {
		ev.Text = markerText(payload)
		d.stats.Events[s.kind]++
		return true
	}
	t := d.matchSpec(s, payload)
	if t == nil {
		d.malformed(lineNo, "payload matches no known format of "+s.name, line)
		return false
	}
	switch d.apply(ev, t, payload) {
	case notOurs:
		d.countUnknown(h.name)
		return false
	case badValues:
		d.malformed(lineNo, "impossible value in "+s.name, line)
		return false
	}
	d.formatHits[t.id]++
	d.stats.Events[s.kind]++
	return true
}

// matchSpec tries the format that matched this event last, then the others.
func (d *Decoder) matchSpec(s *spec, p []byte) *template {
	last := d.lastHit[s.idx]
	if t := s.templates[last]; t.match(p, &d.caps) {
		return t
	}
	for i, t := range s.templates {
		if i != last && t.match(p, &d.caps) {
			d.lastHit[s.idx] = i
			return t
		}
	}
	return nil
}

// markerText strips what the print event puts before the user's text: the caller's ip
// ("0xffffffffabf5a467: ") in trace-cmd output, or its symbol ("tracing_mark_write: ").
func markerText(p []byte) string {
	if bytes.HasPrefix(p, []byte("tracing_mark_write: ")) {
		p = p[len("tracing_mark_write: "):]
	} else if len(p) > 3 && p[0] == '0' && p[1] == 'x' {
		i := 2
		for i < len(p) && hexVal(p[i]) >= 0 {
			i++
		}
		if i > 2 && hasLit(p, i, ": ") {
			p = p[i+2:]
		}
	}
	return string(p)
}

// nonEvent classifies a line without a timestamp: a header, a lost-events note, a kernel
// log line around an ftrace dump, or garbage. It returns true with *ev filled for a
// lost-events note that names its CPU (an EventsLost event at the time of the line
// before it).
func (d *Decoder) nonEvent(line []byte, lineNo int, ev *event.Event) bool {
	t := bytes.TrimSpace(line)
	klog := false
	if rest, ok := stripPrintkPrefix(t); ok {
		t, klog = bytes.TrimSpace(rest), true
	}
	switch {
	case len(t) == 0, t[0] == '#',
		bytes.HasPrefix(t, []byte("cpus=")),
		bytes.HasPrefix(t, []byte("version = ")),
		bytes.HasPrefix(t, []byte("CPU ")) && bytes.HasSuffix(t, []byte(" is empty")),
		isDumpBanner(t):
		d.headers++
	default:
		if cpu, n, ok := lostEvents(t); ok {
			d.stats.Lost += n
			if cpu < 0 {
				d.headers++
				return false
			}
			*ev = event.Event{Kind: event.EventsLost, Time: d.lastTS, CPU: cpu, Arg: n, Name: lostEventsName}
			d.stats.Events[event.EventsLost]++
			return true
		}
		if klog {
			// the kernel log's own messages between the dump's lines: not trace data
			d.headers++
			return false
		}
		d.malformed(lineNo, reasonNoTimestamp, line)
	}
	return false
}

// lostEventsName is Event.Name of an EventsLost event.
const lostEventsName = "lost_events"

// lostEvents reads the notes of lost events that tracefs ("CPU:N [LOST n EVENTS]",
// "CPU:N [LOST EVENTS]": print_trace_line in trace.c) and trace-cmd ("CPU:N [n EVENTS
// DROPPED]", "CPU:N [EVENTS DROPPED]") print before the first event of CPU N after the
// loss. n is 0 when the note has no count; cpu is -1 when it names no CPU.
func lostEvents(t []byte) (cpu int32, n uint64, ok bool) {
	switch {
	case bytes.HasSuffix(t, []byte("[LOST EVENTS]")), bytes.HasSuffix(t, []byte("[EVENTS DROPPED]")):
		ok = true
	default:
		if i := bytes.Index(t, []byte("[LOST ")); i >= 0 {
			if _, v, good := scanDec(t, i+len("[LOST ")); good && bytes.HasPrefix(t[skipDigits(t, i+len("[LOST ")):], []byte(" EVENTS]")) {
				n, ok = v, true
			}
		}
		if i := bytes.Index(t, []byte(" EVENTS DROPPED]")); !ok && i > 0 {
			j := bytes.LastIndexByte(t[:i], '[')
			if j >= 0 {
				if end, v, good := scanDec(t, j+1); good && end == i {
					n, ok = v, true
				}
			}
		}
	}
	if !ok {
		return 0, 0, false
	}
	cpu = -1
	if bytes.HasPrefix(t, []byte("CPU:")) {
		if end, v, good := scanDec(t, len("CPU:")); good && v < 1<<20 && end < len(t) && t[end] == ' ' {
			cpu = int32(v)
		}
	}
	return cpu, n, true
}

func skipDigits(b []byte, i int) int {
	for i < len(b) && isDigit(b[i]) {
		i++
	}
	return i
}

func (d *Decoder) countUnknown(name []byte) {
	// "sys_openat(" and "sys_openat ->" count as "sys_openat"
	name = bytes.TrimSuffix(bytes.TrimSuffix(name, []byte("(")), []byte(" ->"))
	if p, ok := d.unknown[string(name)]; ok {
		*p++
		return
	}
	n := uint64(1)
	d.unknown[string(name)] = &n
}

func (d *Decoder) malformed(lineNo int, reason string, line []byte) {
	d.stats.Malformed++
	if len(d.stats.MalformedSamples) < maxSamples {
		ex := line
		if len(ex) > 80 {
			ex = ex[:80]
		}
		d.stats.MalformedSamples = append(d.stats.MalformedSamples,
			fmt.Sprintf("line %d: %s (%d bytes): %q", lineNo, reason, len(line), ex))
	}
}

// CountTruncated counts an input that ended inside its last line (n bytes without a
// newline): the line is cut short and is not decoded.
func (d *Decoder) CountTruncated(lineNo, n int) {
	d.stats.Truncated++
	if len(d.stats.MalformedSamples) < maxSamples {
		d.stats.MalformedSamples = append(d.stats.MalformedSamples,
			fmt.Sprintf("line %d: the input ends inside it (%d bytes, no newline): not decoded", lineNo, n))
	}
}

// CountMalformed counts a line the caller could not hand over (too long for its reader,
// cut off by a truncated input) as malformed, with reason in the samples.
func (d *Decoder) CountMalformed(lineNo int, reason string) {
	d.stats.Malformed++
	if len(d.stats.MalformedSamples) < maxSamples {
		d.stats.MalformedSamples = append(d.stats.MalformedSamples, fmt.Sprintf("line %d: %s", lineNo, reason))
	}
}

// internSlow is intern's table: b as a string, the same string for the same bytes while
// the table has room.
func (d *Decoder) internSlow(b []byte) string {
	if s, ok := d.strs[string(b)]; ok {
		return s
	}
	s := string(b)
	if !utf8.ValidString(s) {
		// comm is whatever a process set with prctl(PR_SET_NAME): invalid UTF-8 would
		// make the exported OTLP/JSON invalid. Cached under the raw bytes.
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	if len(d.strs) < maxInterned {
		d.strs[s] = s
	}
	return s
}

// Stats returns a copy of the counts so far.
func (d *Decoder) Stats() event.SourceStats {
	s := d.stats
	s.MalformedSamples = append([]string(nil), d.stats.MalformedSamples...)
	s.Unknown = make(map[string]uint64, len(d.unknown))
	for k, v := range d.unknown {
		s.Unknown[k] = *v
	}
	return s
}

// Headers returns how many lines were not events: headers, comments, blank lines,
// "[LOST n EVENTS]" notes.
func (d *Decoder) Headers() uint64 { return d.headers }

// splitAny splits a line in the default layouts (line.go) or, when it has no timestamp
// those read, in the latency format (latency.go), with or without the kernel log's prefix.
func splitAny(tc *taskColumns, line []byte, h *header) (reason string, noTS bool) {
	reason, noTS = tc.split(line, h)
	if !noTS && reason != reasonNoTask {
		return reason, noTS
	}
	rest := line
	if r, ok := stripPrintkPrefix(trimBlankLeft(line)); ok {
		rest = r
	}
	if r, found := splitLatency(rest, h); found {
		return r, false
	}
	return reason, noTS
}

// TimeReader reads only the timestamp of lines, in every layout the Decoder reads; the
// replay source uses it to find the sorted runs of a capture before decoding it. It is
// not safe for concurrent use.
type TimeReader struct {
	task taskColumns
	h    header
}

// Time returns the timestamp of line in nanoseconds, or false when the line has none
// that the Decoder would use (a header, a note, a malformed line).
func (r *TimeReader) Time(line []byte) (int64, bool) {
	for n := len(line); n > 0 && (line[n-1] == '\n' || line[n-1] == '\r'); n = len(line) {
		line = line[:n-1]
	}
	if len(line) > MaxLineLen {
		return 0, false
	}
	reason, noTS := splitAny(&r.task, line, &r.h)
	if noTS || reason != "" {
		return 0, false
	}
	return r.h.ts, true
}
