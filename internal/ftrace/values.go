// Decoding an event from its print arguments' values instead of its text. A raw trace
// entry's arguments are read straight from its fields with the event's tracefs format
// file (entry.go); this file fills the Event from those values with the same table
// (internal/eventdef, flattened by table.go) and the same rules (fields.go: apply) as a
// text line, so that no entry is printed and parsed again.

package ftrace

import (
	"errors"

	"github.com/ghostdriver/ghostdriver/internal/event"
)

// ValueFormat is the table's reading of one event printed with one print format.
type ValueFormat struct {
	spec *spec
	t    *template
}

// FormatOf is the table's reading of event name printed with printk (a tracefs format
// file's `print fmt`, C escapes resolved): the decoder's format of that event with the
// same literals and the same kinds of conversion (KnowsPrintFormat), the first in the
// table's order. false when there is none.
func FormatOf(name, printk string) (*ValueFormat, bool) {
	s, ok := specs[name]
	if !ok || s.kind == event.KindUnknown || s.kind == event.Marker || len(s.templates) == 0 {
		return nil, false
	}
	want, ok := printkShape(printk)
	if !ok {
		return nil, false
	}
	for _, t := range s.templates {
		if t.shape() == want {
			return &ValueFormat{spec: s, t: t}, true
		}
	}
	return nil, false
}

// NumArgs is the number of print arguments.
func (f *ValueFormat) NumArgs() int { return len(f.t.segs) }

// TextArg reports whether argument i fills a text field of the Event (a device, ring,
// driver or timeline name): the caller gives its printed text, not only its value.
func (f *ValueFormat) TextArg(i int) bool {
	switch f.t.segs[i].arg {
	case argDev, argRing, argRingName, argClass, argInst, argDriver, argTimeline, argReason, argIRQName, argIRQRet:
		return true
	}
	return false
}

// PointerTextOK reports whether argument i may be a `char *` printed as its pointer (the
// raw entry holds the pointer, not the text): only amdgpu's ring name, which the decoder
// then takes from the timeline, and arguments it skips.
func (f *ValueFormat) PointerTextOK(i int) bool {
	switch f.t.segs[i].arg {
	case argSkip, argRingName:
		return true
	}
	return false
}

// Arg is one print argument: N is the number the conversion prints (truncated to the
// conversion's length; a negative %d as two's complement; a %p as the pointer), Text
// what it prints when TextArg (a %s's bytes, or the number's digits as printed).
type Arg struct {
	N    uint64
	Text []byte
}

// Errors of DecodeValues, also counted in the Decoder's Stats (unknown, malformed).
var (
	ErrNotOurs    = errors.New("not an event the decoder follows") // a raw syscall other than ioctl
	ErrImpossible = errors.New("impossible value")
)

// DecodeValues fills ev (Kind, Name, Driver and what the arguments carry) from the
// values of f's arguments, in order; the caller sets Time, CPU, PID, TID and Comm, which
// a raw entry's program records itself. Strings are interned by d, as for text lines.
func (d *Decoder) DecodeValues(f *ValueFormat, args []Arg, ev *event.Event) error {
	s, t := f.spec, f.t
	if len(args) != len(t.segs) {
		return errors.New("ftrace: " + s.name + ": argument count differs from its print format")
	}
	*ev = event.Event{Kind: s.kind, Name: s.name, Driver: s.driver}
	// apply reads numbers from the captures and text from spans of a payload: the text
	// arguments are laid end to end in d.vals, with the literal before an i915 engine
	// instance (":") so that class and instance read as the one "class:instance" span.
	p := d.vals[:0]
	for i := range t.segs {
		c := &d.caps[i]
		if t.segs[i].arg == argInst {
			p = append(p, t.segs[i].lit...)
		}
		c.start = len(p)
		p = append(p, args[i].Text...)
		c.end, c.n = len(p), args[i].N
	}
	d.vals = p
	switch d.apply(ev, t, p) {
	case notOurs:
		d.countUnknown([]byte(s.eventSpec.name))
		return ErrNotOurs
	case badValues:
		d.stats.Malformed++
		return ErrImpossible
	}
	d.formatHits[t.id]++
	d.stats.Events[s.kind]++
	return nil
}
