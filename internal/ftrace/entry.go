// Decoding a raw trace entry (the bytes the kernel stores for one event, as a BPF
// program on a classic tracepoint copies them) without printing it: each argument of the
// event's print fmt read from its field as the conversion would print it — a number, or
// a string's bytes — and handed to the table's reading of that print fmt (values.go:
// DecodeValues). The only text made is the digits of a number that fills a text field
// of the Event (the i915 device and engine, msm's ring), as the event prints them.

package ftrace

import (
	"fmt"

	"github.com/ghostdriver/ghostdriver/internal/event"
)

// EntryFormat is one event's tracefs format file compiled for decoding its raw entries:
// the print arguments bound to their fields, and the table's reading of the print fmt.
type EntryFormat struct {
	printer *Printer
	values  *ValueFormat
}

// NewEntryFormat compiles the format file text of system/name and checks that what it
// prints is text the decoder reads for the event. The error says why it cannot be used
// (ErrUnsupported for a print fmt the printer does not do).
func NewEntryFormat(system, name, formatText string) (*EntryFormat, error) {
	f, err := ParseFormat(system, name, formatText)
	if err != nil {
		return nil, err
	}
	p, err := CompilePrinter(f)
	if err != nil {
		return nil, fmt.Errorf("print fmt %q: %w", f.PrintFmt, err)
	}
	vf, ok := FormatOf(name, f.PrintFmt)
	if !ok {
		return nil, fmt.Errorf("print fmt %q is not one the text decoder reads for %s", f.PrintFmt, name)
	}
	if len(p.segs) != vf.NumArgs() || len(p.segs) > maxCaptures {
		return nil, fmt.Errorf("print fmt %q: %d arguments, the table's format of %s has %d", f.PrintFmt, len(p.segs), name, vf.NumArgs())
	}
	for i := range p.segs {
		if p.segs[i].c.ptrHex && !vf.PointerTextOK(i) {
			// ivpu's job step: a const char * the kernel dereferences when it prints; the
			// entry holds only the pointer.
			return nil, fmt.Errorf("%w: print fmt %q: argument %d is a char * field (%s) the decoder needs as text; the entry holds only its pointer",
				ErrUnsupported, f.PrintFmt, i+1, p.segs[i].c.fld.Name)
		}
	}
	return &EntryFormat{printer: p, values: vf}, nil
}

// Printer is the format's print fmt bound to the entry's fields.
func (e *EntryFormat) Printer() *Printer { return e.printer }

// DecodeEntry fills ev from raw, an entry of e's event (its first bytes, as many as its
// fields and strings need), as DecodeValues does from the arguments' values: the caller
// sets Time, CPU, PID, TID and Comm. A field or string beyond raw is ErrShortEntry.
func (d *Decoder) DecodeEntry(e *EntryFormat, raw []byte, ev *event.Event) error {
	args, digits, err := e.args(raw, &d.entryArgs, d.digits[:0])
	d.digits = digits
	if err != nil {
		return err
	}
	return d.DecodeValues(e.values, args, ev)
}

// args reads every print argument of e from raw into args (len(e.printer.segs) of
// them); text holds the digits of numbers that fill text fields.
func (e *EntryFormat) args(raw []byte, args *[maxCaptures]Arg, text []byte) ([]Arg, []byte, error) {
	segs := e.printer.segs
	out := args[:len(segs)]
	for i := range segs {
		c := &segs[i].c
		a := &out[i]
		*a = Arg{}
		if c.verb == 's' && !c.ptrHex {
			s, err := c.fld.str(raw)
			if err != nil {
				return nil, text, err
			}
			if c.prec >= 0 && len(s) > c.prec {
				s = s[:c.prec]
			}
			a.Text = s
			continue
		}
		v, err := c.value(raw)
		if err != nil {
			return nil, text, err
		}
		a.N = v
		if e.values.TextArg(i) {
			// the digits as the text reading of the printed line takes them: a width's
			// space padding is whitespace there, skipped (as a %s's width is here); zero
			// padding is digits, kept
			cc := c
			if c.width > 0 && (c.flags&flagZero == 0 || c.flags&flagLeft != 0) {
				w := *c
				w.width = 0
				cc = &w
			}
			at := len(text)
			if text, err = cc.append(text, raw); err != nil {
				return nil, text, err
			}
			a.Text = text[at:]
		}
	}
	return out, text, nil
}

// value is the number conversion c prints for its field: the field read with its size
// and sign, the casts applied, then the conversion's length (%d sign-extends, %u %x %o
// zero-extend); a pointer (%p, or %s of a char *) whole.
func (c *conv) value(raw []byte) (uint64, error) {
	v, err := c.fld.scalar(raw)
	if err != nil {
		return 0, err
	}
	for i := len(c.casts) - 1; i >= 0; i-- {
		v = truncate(v, c.casts[i].bits, c.casts[i].signed)
	}
	switch c.verb {
	case 'p', 's':
		return v, nil
	case 'd':
		return truncate(v, c.bits(), true), nil
	}
	return truncate(v, c.bits(), false), nil
}
