// Perfetto traces in text form (TracePacket textproto, as Perfetto's own test data and
// `traceconv text` write them), read as the ftrace text the kernel would have printed: each
// ftrace_events bundle's events, their fields laid out in a raw entry by the event's
// tracefs format file (perfettoformats/, the kernels' own layouts) and printed with its
// print fmt (entryprint.go), so the text decoder reads them as it reads any capture.
//
// Supported: packets whose only message is ftrace_events; in a bundle, cpu and events;
// in an event, timestamp, pid and one event message of scalar fields. Perfetto names an
// event's fields as the kernel's format file does. An event with a format here whose
// fields all fit one of its formats is printed with it; an event no format here knows is
// printed with its name only, which the decoder counts as an unknown event. Anything else
// (another packet message, a field no format of its event has, a line the reader does not
// understand) is an error naming it and its line.

package ftrace

import (
	"bufio"
	"embed"
	"encoding/binary"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
)

//go:embed perfettoformats/*.txt
var perfettoFormatFiles embed.FS

// perfettoFormats are the format files by event name, every layout known per name.
var perfettoFormats = func() map[string][]*Printer {
	out := map[string][]*Printer{}
	files, err := perfettoFormatFiles.ReadDir("perfettoformats")
	if err != nil {
		panic(err)
	}
	for _, f := range files {
		b, err := perfettoFormatFiles.ReadFile("perfettoformats/" + f.Name())
		if err != nil {
			panic(err)
		}
		// "## system: S" lines, then each event's format file from its "name:" line on.
		var system, name string
		var text strings.Builder
		add := func() {
			if name == "" {
				return
			}
			ff, err := ParseFormat(system, name, text.String())
			var p *Printer
			if err == nil {
				p, err = CompilePrinter(ff)
			}
			if err != nil {
				panic(fmt.Sprintf("ftrace: perfettoformats/%s %s: %v", f.Name(), name, err))
			}
			out[name] = append(out[name], p)
			name = ""
			text.Reset()
		}
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "## system: "); ok {
				add()
				system = strings.TrimSpace(v)
				continue
			}
			if v, ok := strings.CutPrefix(l, "name: "); ok {
				add()
				name = v
			}
			if name != "" {
				text.WriteString(l + "\n")
			}
		}
		add()
	}
	return out
}()

// LooksLikePerfettoText reports whether head (a file's first bytes) is a Perfetto textproto
// trace: its first line other than comments and blank lines opens a packet.
func LooksLikePerfettoText(head []byte) bool {
	for _, l := range strings.Split(string(head), "\n") {
		l = strings.TrimSpace(l)
		if l == "" || l[0] == '#' {
			continue
		}
		return l == "packet {"
	}
	return false
}

// pfEvent is one ftrace event of the textproto.
type pfEvent struct {
	line     int // where its event message opens
	ts       int64
	pid, cpu int64
	name     string
	fields   []pfField
}

type pfField struct {
	name  string
	text  string // quoted string, unquoted
	num   uint64 // integer (two's complement when negative)
	isStr bool
}

// TranscodePerfetto reads a Perfetto textproto trace from r and writes its ftrace events to
// w as tracefs text lines, in time order (the bundles are per CPU). It returns the number
// of events written.
func TranscodePerfetto(r io.Reader, w io.Writer) (int, error) {
	evs, err := parsePerfettoText(r)
	if err != nil {
		return 0, err
	}
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].ts < evs[j].ts })
	bw := bufio.NewWriter(w)
	var payload, raw []byte
	for i := range evs {
		e := &evs[i]
		payload = payload[:0]
		if ps := perfettoFormats[e.name]; len(ps) > 0 {
			p, err := fitFormat(ps, e)
			if err != nil {
				return 0, err
			}
			raw = entryOf(p.Format(), e, raw[:0])
			if payload, err = p.AppendPayload(payload, raw); err != nil {
				return 0, fmt.Errorf("perfetto textproto line %d: %s: %w", e.line, e.name, err)
			}
		}
		fmt.Fprintf(bw, "%16s-%-7d [%03d] %d.%09d: %s: %s\n", "<...>", e.pid, e.cpu, e.ts/1e9, e.ts%1e9, e.name, payload)
	}
	return len(evs), bw.Flush()
}

// fitFormat is the format of e's event that has every field e gives, leaving the fewest
// of its own unset.
func fitFormat(ps []*Printer, e *pfEvent) (*Printer, error) {
	var best *Printer
	bestUnset := 0
	for _, p := range ps {
		f := p.Format()
		fits := true
		for _, x := range e.fields {
			if fl := f.Field(x.name); fl == nil || fl.IsString() != x.isStr {
				fits = false
				break
			}
		}
		if !fits {
			continue
		}
		unset := 0
		for _, fl := range f.Fields {
			if !strings.HasPrefix(fl.Name, "common_") && !slices.ContainsFunc(e.fields, func(x pfField) bool { return x.name == fl.Name }) {
				unset++
			}
		}
		if best == nil || unset < bestUnset {
			best, bestUnset = p, unset
		}
	}
	if best == nil {
		names := make([]string, len(e.fields))
		for i, x := range e.fields {
			names[i] = x.name
		}
		return nil, fmt.Errorf("perfetto textproto line %d: %s with fields %v: no format of it known here has them all (perfettoformats: %d layouts of %s)",
			e.line, e.name, names, len(ps), e.name)
	}
	return best, nil
}

// entryOf lays e's fields out as the kernel's raw entry of format f (unset fields zero;
// strings as __data_loc data after the fixed fields, NUL-terminated, as __string writes
// them).
func entryOf(f *Format, e *pfEvent, raw []byte) []byte {
	size := 0
	for _, fl := range f.Fields {
		size = max(size, fl.Offset+fl.Size)
	}
	raw = append(raw, make([]byte, size)...)
	for _, x := range e.fields {
		fl := f.Field(x.name)
		switch {
		case fl.DataLoc || fl.RelLoc:
			off := len(raw)
			raw = append(append(raw, x.text...), 0)
			loc := off
			if fl.RelLoc {
				loc -= fl.Offset + 4
			}
			binary.LittleEndian.PutUint32(raw[fl.Offset:], uint32(len(x.text)+1)<<16|uint32(loc))
		case x.isStr:
			copy(raw[fl.Offset:fl.Offset+fl.Size-1], x.text)
		default:
			for i := 0; i < fl.Size && i < 8; i++ {
				raw[fl.Offset+i] = byte(x.num >> (8 * i))
			}
		}
	}
	return raw
}

// parsePerfettoText reads the textproto's structure: packet { ftrace_events { cpu event {
// timestamp pid <name> { fields } } } }.
func parsePerfettoText(r io.Reader) ([]pfEvent, error) {
	var (
		out    []pfEvent
		stack  []string // open messages
		bundle []int    // indexes in out of the open bundle's events
		cpu    int64
		ev     *pfEvent
	)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for n := 1; sc.Scan(); n++ {
		l := strings.TrimSpace(sc.Text())
		if l == "" || l[0] == '#' {
			continue
		}
		bad := func(why string) error { return fmt.Errorf("perfetto textproto line %d: %q: %s", n, l, why) }
		where := strings.Join(stack, ".")
		if l == "}" {
			if len(stack) == 0 {
				return nil, bad("closes no message")
			}
			switch strings.Join(stack, ".") {
			case "packet.ftrace_events":
				for _, i := range bundle {
					out[i].cpu = cpu
				}
				bundle, cpu = bundle[:0], 0
			case "packet.ftrace_events.event":
				if ev.name == "" {
					return nil, fmt.Errorf("perfetto textproto line %d: an ftrace event without its event message", ev.line)
				}
				bundle = append(bundle, len(out))
				out = append(out, *ev)
				ev = nil
			}
			stack = stack[:len(stack)-1]
			continue
		}
		if name, ok := strings.CutSuffix(l, " {"); ok {
			switch {
			case where == "" && name == "packet",
				where == "packet" && name == "ftrace_events":
			case where == "packet.ftrace_events" && name == "event":
				ev = &pfEvent{line: n}
			case where == "packet.ftrace_events.event" && ev.name == "" && isIdent(name):
				ev.name = name
			case where == "":
				return nil, bad("a top-level message other than packet: not a Perfetto trace")
			case where == "packet":
				return nil, bad("packet content other than ftrace_events: not supported (ghostdriver reads the ftrace events of a trace)")
			case where == "packet.ftrace_events":
				return nil, bad("ftrace_events content other than event (compact or other encodings): not supported")
			default:
				return nil, bad("a message inside " + where + ": not supported")
			}
			stack = append(stack, name)
			continue
		}
		key, val, ok := strings.Cut(l, ": ")
		if !ok || !isIdent(key) {
			return nil, bad("not a field or message line this reader understands")
		}
		var x pfField
		x.name = key
		if strings.HasPrefix(val, "\"") {
			s, err := strconv.Unquote(val)
			if err != nil {
				return nil, bad("string: " + err.Error())
			}
			x.text, x.isStr = s, true
		} else if v, err := strconv.ParseInt(val, 10, 64); err == nil {
			x.num = uint64(v)
		} else if u, err := strconv.ParseUint(val, 10, 64); err == nil {
			x.num = u
		} else if len(stack) == 4 {
			return nil, bad("an event field that is neither an integer nor a string")
		}
		switch {
		case len(stack) == 0:
			return nil, bad("a field outside any packet")
		case where == "packet.ftrace_events" && key == "cpu":
			cpu = int64(x.num)
		case where == "packet.ftrace_events.event" && key == "timestamp":
			ev.ts = int64(x.num)
		case where == "packet.ftrace_events.event" && key == "pid":
			ev.pid = int64(x.num)
		case len(stack) == 4:
			ev.fields = append(ev.fields, x)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(stack) != 0 {
		return nil, fmt.Errorf("perfetto textproto: ends inside %s", strings.Join(stack, "."))
	}
	return out, nil
}
