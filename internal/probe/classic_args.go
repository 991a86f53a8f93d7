// The classic-tracepoint rung's direct decode: each argument of the kernel's print format
// read from the raw trace entry as the conversion would print it, with the field's offset,
// size and sign from the event's tracefs format file (tpformat.go) — a number, or a
// string's bytes — and handed to internal/ftrace's table reading of that print format
// (ftrace.DecodeValues). Nothing is printed and parsed again: the only text made is the
// digits of a number that fills a text field of the Event (the i915 device and engine,
// msm's ring), as the event prints them.
package probe

import "github.com/ghostdriver/ghostdriver/internal/ftrace"

// maxClassicArgs bounds a classic event's print arguments (the table's formats have at
// most ftrace's 12 conversions; compilePrinter's formats are checked against it at load).
const maxClassicArgs = 12

// classicArgs reads every print argument of ce from raw into args (len(ce.printer.segs)
// of them); text holds the digits of numbers that fill text fields.
func classicArgs(ce *classicEvent, raw []byte, args *[maxClassicArgs]ftrace.Arg, text []byte) ([]ftrace.Arg, []byte, error) {
	segs := ce.printer.segs
	out := args[:len(segs)]
	for i := range segs {
		c := &segs[i].c
		a := &out[i]
		*a = ftrace.Arg{}
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
		if ce.format.TextArg(i) {
			at := len(text)
			if text, err = c.append(text, raw); err != nil {
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
		return truncate(v, c.bits, true), nil
	}
	return truncate(v, c.bits, false), nil
}
