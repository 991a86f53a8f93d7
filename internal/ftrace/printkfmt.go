// The one reading of a kernel printk format string (TP_printk's first argument): its
// literals and conversions, with flags, width, precision and length as vsnprintf reads
// them. The table's text templates (printk.go), the shape a tracefs print fmt is matched
// to the table by (printfmt.go) and the printer bound to a raw entry's fields
// (entryprint.go) all read formats with scanPrintk.

package ftrace

import (
	"errors"
	"fmt"
	"strings"
)

// Conversion flags.
const (
	flagLeft  = 1 << iota // -
	flagZero              // 0
	flagPlus              // +
	flagSpace             // ' '
	flagAlt               // #
)

// printkConv is one conversion of a format.
type printkConv struct {
	verb   byte // d u x X o c s p ('i' is read as 'd')
	flags  uint8
	width  int
	prec   int    // -1: none
	length string // "", "hh", "h", "l", "ll", "L", "z", "t" or "j"
	text   string // the conversion as written ("%08lx")
}

// bits is the width of the value the conversion prints, on a 64-bit kernel.
func (c *printkConv) bits() uint8 {
	switch c.length {
	case "hh":
		return 8
	case "h":
		return 16
	case "":
		return 32
	}
	return 64
}

// wide reports an ll or L length: a 64-bit value whatever the kernel's word size.
func (c *printkConv) wide() bool { return c.length == "ll" || c.length == "L" }

// ErrUnsupported marks a format outside what the decoder reads: a conversion or an
// argument expression it does not do (the error says which).
var ErrUnsupported = errors.New("unsupported")

func unsupported(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrUnsupported, fmt.Sprintf(format, a...))
}

// scanPrintk reads format s and calls each with every conversion, in order, and the
// literal before it ("%%" read as '%'). It stops at the first error, the scanner's (an
// ErrUnsupported naming the conversion) or each's, and otherwise returns the literal after
// the last conversion. Supported: the conversions %d %i %u %x %X %o %c %s %p with flags
// (- 0 + space #), width, precision and the length modifiers hh h l ll L z t j; '*'
// widths and %p extensions (%pS, %pV, ...) are refused.
func scanPrintk(s string, each func(lit string, c printkConv) error) (string, error) {
	var lit strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			lit.WriteByte(s[i])
			continue
		}
		if i+1 < len(s) && s[i+1] == '%' {
			lit.WriteByte('%')
			i++
			continue
		}
		start := i
		c := printkConv{prec: -1}
		j := i + 1
	flags:
		for ; j < len(s); j++ {
			switch s[j] {
			case '-':
				c.flags |= flagLeft
			case '0':
				c.flags |= flagZero
			case '+':
				c.flags |= flagPlus
			case ' ':
				c.flags |= flagSpace
			case '#':
				c.flags |= flagAlt
			default:
				break flags
			}
		}
		for ; j < len(s) && s[j] >= '0' && s[j] <= '9'; j++ {
			c.width = c.width*10 + int(s[j]-'0')
		}
		if j < len(s) && s[j] == '.' {
			c.prec = 0
			for j++; j < len(s) && s[j] >= '0' && s[j] <= '9'; j++ {
				c.prec = c.prec*10 + int(s[j]-'0')
			}
		}
		if j < len(s) && s[j] == '*' {
			return "", unsupported("'*' width or precision in %q", s[start:min(j+2, len(s))])
		}
		switch {
		case strings.HasPrefix(s[j:], "hh"), strings.HasPrefix(s[j:], "ll"):
			c.length, j = s[j:j+2], j+2
		case j < len(s) && strings.IndexByte("hlLztj", s[j]) >= 0:
			c.length, j = s[j:j+1], j+1
		}
		if j >= len(s) {
			return "", unsupported("truncated conversion %q", s[start:])
		}
		c.verb = s[j]
		switch c.verb {
		case 'i':
			c.verb = 'd'
		case 'd', 'u', 'x', 'X', 'o', 'c', 's':
		case 'p':
			if j+1 < len(s) && isAlnum(s[j+1]) {
				return "", unsupported("%%p extension %q", s[start:j+2])
			}
		default:
			return "", unsupported("conversion %q", s[start:j+1])
		}
		c.text = s[start : j+1]
		if err := each(lit.String(), c); err != nil {
			return "", err
		}
		lit.Reset()
		i = j
	}
	return lit.String(), nil
}

func isAlnum(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}
