// Compiles the kernel's TP_printk format strings of the event table into templates, and
// matches a payload against a template by byte scanning, capturing each conversion's
// value.

package ftrace

import (
	"bytes"
	"fmt"
	"strings"
)

// verbClass is what a printk conversion prints, as far as reading it back is concerned.
type verbClass uint8

const (
	verbNone verbClass = iota // trailing literal only
	verbStr                   // %s: up to the next literal (or the end)
	verbDec                   // %d %u %ld %llu %Ld …: optional '-', decimal digits
	verbHex                   // %x %lx %08lx %012llx …: hex digits, an optional 0x
	verbPtr                   // %p: 8 or 16 hex digits, 0x and any hex digits, or (null)/(nil)/(____ptrval____)
)

// shape is the conversion written as its class (the shape of a format, below).
func (v verbClass) shape() string { return [...]string{"", "%s", "%d", "%x", "%p"}[v] }

// segment is a literal followed by one conversion.
type segment struct {
	lit   string
	verb  verbClass
	wide  bool // ll / L length modifier: a 64-bit value
	arg   argID
	next  []byte // the literal after this conversion (for %s)
	final bool   // next is the trailing literal of the format
}

// template is one compiled format.
type template struct {
	segs     []segment
	trailing string
	id       int // index into Decoder.formatHits
	fmt      *format
	fam      *family
}

// capture is the value of one conversion: its text span in the payload and, for
// numbers, the value (negative decimals as two's complement).
type capture struct {
	start, end int
	n          uint64
}

// class is what conversion c prints as far as reading it back is concerned; false for
// the conversions the templates do not read (%c, %o).
func (c *printkConv) class() (verbClass, bool) {
	switch c.verb {
	case 's':
		return verbStr, true
	case 'd', 'u':
		return verbDec, true
	case 'x', 'X':
		return verbHex, true
	case 'p':
		return verbPtr, true
	}
	return verbNone, false
}

// compile turns a printk format and its argument names into a template. It panics on
// a table error: the table is code.
func compile(f *format) *template {
	names := strings.Fields(f.args)
	t := &template{fmt: f}
	trailing, err := scanPrintk(f.printk, func(lit string, c printkConv) error {
		v, ok := c.class()
		if !ok {
			return fmt.Errorf("conversion %q not supported", c.text)
		}
		n := len(t.segs)
		if n >= len(names) {
			return fmt.Errorf("more conversions than args %q", f.args)
		}
		a, ok := argByName[names[n]]
		if !ok {
			return fmt.Errorf("unknown arg %q", names[n])
		}
		t.segs = append(t.segs, segment{lit: lit, verb: v, wide: c.wide(), arg: a})
		return nil
	})
	if err != nil {
		panic(fmt.Sprintf("ftrace table: %q: %v", f.printk, err))
	}
	t.trailing = trailing
	if len(t.segs) != len(names) {
		panic(fmt.Sprintf("ftrace table: %q: %d conversions, %d args", f.printk, len(t.segs), len(names)))
	}
	if len(t.segs) > maxCaptures {
		panic(fmt.Sprintf("ftrace table: %q: more than %d conversions", f.printk, maxCaptures))
	}
	for i := range t.segs {
		if i+1 < len(t.segs) {
			t.segs[i].next = []byte(t.segs[i+1].lit)
		} else {
			t.segs[i].next, t.segs[i].final = []byte(t.trailing), true
		}
		if t.segs[i].verb == verbStr && len(t.segs[i].next) == 0 && !t.segs[i].final {
			panic(fmt.Sprintf("ftrace table: %q: %%s directly followed by a conversion", f.printk))
		}
	}
	return t
}

// shape is the format with conversions reduced to their class: two formats with the
// same shape print the same text.
func (t *template) shape() string {
	var b strings.Builder
	for _, s := range t.segs {
		b.WriteString(s.lit)
		b.WriteString(s.verb.shape())
	}
	b.WriteString(t.trailing)
	return b.String()
}

const maxCaptures = 12

// match reports whether p is exactly what the template prints, filling caps.
func (t *template) match(p []byte, caps *[maxCaptures]capture) bool {
	pos := 0
	for i := range t.segs {
		s := &t.segs[i]
		if !hasLit(p, pos, s.lit) {
			return false
		}
		pos += len(s.lit)
		c := &caps[i]
		c.start, c.n = pos, 0
		var ok bool
		switch s.verb {
		case verbStr:
			if s.final {
				// the last string runs to the trailing literal at the end
				if len(p)-len(s.next) < pos {
					return false
				}
				pos = len(p) - len(s.next)
			} else {
				k := bytes.Index(p[pos:], s.next)
				if k < 0 {
					return false
				}
				pos += k
			}
			ok = true
		case verbDec:
			pos, c.n, ok = scanDec(p, pos)
			if ok {
				// the span excludes padding spaces
				for c.start < pos && p[c.start] == ' ' {
					c.start++
				}
			}
		case verbHex:
			pos, c.n, ok = scanHex(p, pos)
		case verbPtr:
			pos, c.n, ok = scanPtr(p, pos)
		}
		if !ok {
			return false
		}
		c.end = pos
	}
	return len(p)-pos == len(t.trailing) && hasLit(p, pos, t.trailing)
}

func hasLit(p []byte, pos int, lit string) bool {
	return len(p)-pos >= len(lit) && string(p[pos:pos+len(lit)]) == lit
}

// scanDec reads an optionally space-padded, optionally negative decimal.
func scanDec(p []byte, pos int) (int, uint64, bool) {
	for pos < len(p) && p[pos] == ' ' {
		pos++
	}
	neg := false
	if pos < len(p) && p[pos] == '-' {
		neg = true
		pos++
	}
	start := pos
	var n uint64
	for pos < len(p) && p[pos] >= '0' && p[pos] <= '9' {
		d := uint64(p[pos] - '0')
		if n > (1<<64-1-d)/10 {
			return pos, 0, false
		}
		n = n*10 + d
		pos++
	}
	if pos == start {
		return pos, 0, false
	}
	if neg {
		n = -n
	}
	return pos, n, true
}

// scanHex reads hex digits with an optional 0x (printk's %#x, and kernels that print
// syscall arguments as 0x%lx).
func scanHex(p []byte, pos int) (int, uint64, bool) {
	if len(p)-pos > 2 && p[pos] == '0' && (p[pos+1] == 'x' || p[pos+1] == 'X') && hexVal(p[pos+2]) >= 0 {
		pos += 2
	}
	start := pos
	var n uint64
	for pos < len(p) {
		v := hexVal(p[pos])
		if v < 0 {
			break
		}
		if pos-start == 16 {
			return pos, 0, false
		}
		n = n<<4 | uint64(v)
		pos++
	}
	return pos, n, pos > start
}

// ptrWords are what vsprintf (and libtraceevent) print for pointers they do not show.
var ptrWords = []string{"(null)", "(nil)", "(____ptrval____)", "(efault)"}

func scanPtr(p []byte, pos int) (int, uint64, bool) {
	if pos < len(p) && p[pos] == '(' {
		for _, w := range ptrWords {
			if hasLit(p, pos, w) {
				return pos + len(w), 0, true
			}
		}
		return pos, 0, false
	}
	// vsprintf zero-pads %p to the pointer's width; libtraceevent prints 0x%llx.
	prefixed := len(p)-pos > 2 && p[pos] == '0' && p[pos+1] == 'x'
	end, n, ok := scanHex(p, pos)
	if w := end - pos; ok && !prefixed && w != 16 && w != 8 {
		return end, 0, false
	}
	return end, n, ok
}

func hexVal(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}
