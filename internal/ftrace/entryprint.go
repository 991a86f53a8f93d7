// A tracefs print fmt bound to the raw entry it prints: each conversion of the format
// (read by scanPrintk) tied to the field its argument names, with the casts the argument
// applies, so that a value can be read from an entry as the conversion prints it
// (entry.go) and, for the digits of a number that fills a text field and for the tests,
// printed as the kernel prints it.
//
// Only what the GPU events' TP_printk use is supported: arguments REC->field and
// __get_str(field) (__get_rel_str for __rel_loc), optionally parenthesised or cast to a
// C integer or pointer type, and the conversions scanPrintk reads. Anything else
// (__print_flags, ternaries, arithmetic, %p extensions, '*' widths) is refused at
// compile time with the reason, so an event is never decoded from a guess.
//
// Two renderings differ from the kernel's own output on purpose:
//   - %p prints the raw pointer as 16 hex digits, where the kernel prints a hashed one
//     (also 16 digits): the text decoder reads both the same way, and a pointer is the
//     same object throughout one run, which is all the joins by pointer need.
//   - %s of a `char *` field (amdgpu <= 5.4 ring_name) prints the pointer as 16 hex
//     digits, as trace-cmd does (the kernel would dereference it; the copy cannot). The
//     text decoder knows that case (doc.go).

package ftrace

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// conv is one conversion of a print fmt with its argument.
type conv struct {
	printkConv
	// The argument: a field, read as a number or a string.
	fld *Field
	// casts: the C casts applied to the field's value, outermost first.
	casts  []cast
	ptrHex bool // %s of a pointer: its value as 16 hex digits (trace-cmd)
}

type cast struct {
	bits   uint8
	signed bool
}

type printSeg struct {
	lit string
	c   conv
}

// Printer is one event's print fmt with its conversions bound to the entry's fields.
type Printer struct {
	format   *Format
	segs     []printSeg
	trailing string
}

// CompilePrinter compiles f's print fmt; an expression or conversion outside the
// supported subset is an ErrUnsupported error naming it.
func CompilePrinter(f *Format) (*Printer, error) {
	p := &Printer{format: f}
	argi := 0
	trailing, err := scanPrintk(f.PrintFmt, func(lit string, pc printkConv) error {
		c := conv{printkConv: pc}
		if argi >= len(f.Args) {
			return unsupported("more conversions than arguments")
		}
		if err := bindArg(f, &c, f.Args[argi]); err != nil {
			return fmt.Errorf("argument %d (%s) of %q: %w", argi+1, f.Args[argi], pc.text, err)
		}
		argi++
		p.segs = append(p.segs, printSeg{lit: lit, c: c})
		return nil
	})
	if err != nil {
		return nil, err
	}
	if argi != len(f.Args) {
		return nil, unsupported("%d conversions for %d arguments", argi, len(f.Args))
	}
	p.trailing = trailing
	return p, nil
}

// Format is the format file the printer was compiled from.
func (p *Printer) Format() *Format { return p.format }

// NumArgs is the number of the print fmt's conversions.
func (p *Printer) NumArgs() int { return len(p.segs) }

// AppendPayload renders raw (a copy of the entry's first bytes) into dst: the payload
// the kernel prints for the entry (but for the two renderings above).
func (p *Printer) AppendPayload(dst, raw []byte) ([]byte, error) {
	for i := range p.segs {
		s := &p.segs[i]
		dst = append(dst, s.lit...)
		var err error
		if dst, err = s.c.append(dst, raw); err != nil {
			return dst, err
		}
	}
	return append(dst, p.trailing...), nil
}

// bindArg resolves one argument expression for conversion c.
func bindArg(f *Format, c *conv, expr string) error {
	e := strings.TrimSpace(expr)
	isStr := false
	for {
		if inner, ok := parens(e); ok {
			// "(REC->x)" or "(type)expr".
			if rest := strings.TrimSpace(e[len(inner)+2:]); rest != "" {
				bits, signed, ok := castType(inner)
				if !ok {
					return unsupported("cast to %q", inner)
				}
				c.casts = append(c.casts, cast{bits, signed})
				e = rest
				continue
			}
			e = strings.TrimSpace(inner)
			continue
		}
		break
	}
	var name string
	switch {
	case strings.HasPrefix(e, "REC->"):
		name = e[len("REC->"):]
	case strings.HasPrefix(e, "__get_str(") && strings.HasSuffix(e, ")"):
		name, isStr = strings.TrimSpace(e[len("__get_str("):len(e)-1]), true
	case strings.HasPrefix(e, "__get_rel_str(") && strings.HasSuffix(e, ")"):
		name, isStr = strings.TrimSpace(e[len("__get_rel_str("):len(e)-1]), true
	default:
		return unsupported("expression %q", e)
	}
	if !isIdent(name) {
		return unsupported("expression %q", e)
	}
	fld := f.Field(name)
	if fld == nil {
		return fmt.Errorf("no field %q in the format", name)
	}
	if strings.HasPrefix(name, "common_") {
		// A BPF program's copy has the kernel's pt_regs pointer in their place.
		return unsupported("common field %s (not in a BPF program's copy of the entry)", name)
	}
	c.fld = fld
	switch {
	case c.verb == 's' && len(c.casts) != 0:
		return unsupported("%%s of a cast value")
	case (fld.DataLoc || fld.RelLoc) && !isStr:
		return unsupported("REC->%s of a dynamic field (%s)", name, fld.CType)
	case c.verb == 's' && fld.IsString():
	case c.verb == 's' && fld.Pointer && fld.Size == 8 && !isStr:
		c.ptrHex = true
	case c.verb == 's':
		return unsupported("%%s of field %s (%s)", name, fld.CType)
	case isStr || !fld.IsScalar():
		return unsupported("%%%c of field %s (%s)", c.verb, name, fld.CType)
	}
	if isStr && !fld.IsString() {
		return unsupported("__get_str of field %s (%s)", name, fld.CType)
	}
	return nil
}

// parens returns the text inside a leading "(...)" group of e.
func parens(e string) (string, bool) {
	if len(e) == 0 || e[0] != '(' {
		return "", false
	}
	depth := 0
	for i := 0; i < len(e); i++ {
		switch e[i] {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return e[1:i], true
			}
		}
	}
	return "", false
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || isAlnum(c)) || (i == 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// castType reads a C type name of a cast: integer widths of x86-64; a pointer is an
// unsigned 64-bit value.
func castType(t string) (bits uint8, signed, ok bool) {
	t = strings.TrimSpace(t)
	if strings.HasSuffix(t, "*") {
		return 64, false, true
	}
	var words []string
	for _, w := range strings.Fields(t) {
		if w != "const" && w != "volatile" {
			words = append(words, w)
		}
	}
	n := strings.Join(words, " ")
	switch n {
	case "char", "signed char", "s8", "__s8", "int8_t":
		return 8, true, true
	case "unsigned char", "u8", "__u8", "uint8_t", "bool", "_Bool":
		return 8, false, true
	case "short", "short int", "signed short", "signed short int", "s16", "__s16", "int16_t":
		return 16, true, true
	case "unsigned short", "unsigned short int", "u16", "__u16", "uint16_t":
		return 16, false, true
	case "int", "signed", "signed int", "s32", "__s32", "int32_t", "pid_t":
		return 32, true, true
	case "unsigned", "unsigned int", "u32", "__u32", "uint32_t":
		return 32, false, true
	case "long", "long int", "signed long", "long long", "long long int", "signed long long",
		"s64", "__s64", "int64_t", "ssize_t", "loff_t":
		return 64, true, true
	case "unsigned long", "unsigned long int", "unsigned long long", "unsigned long long int",
		"u64", "__u64", "uint64_t", "size_t", "uintptr_t", "dma_addr_t", "phys_addr_t", "resource_size_t":
		return 64, false, true
	}
	return 0, false, false
}

// ErrShortEntry: a field or string lies beyond the bytes copied from the entry.
var ErrShortEntry = errors.New("field beyond the copied entry")

// scalar reads the field as a number (sign-extended when the field is signed).
func (f *Field) scalar(raw []byte) (uint64, error) {
	if f.Offset+f.Size > len(raw) {
		return 0, ErrShortEntry
	}
	b := raw[f.Offset : f.Offset+f.Size]
	var v uint64
	for i := len(b) - 1; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	if f.Signed && f.Size < 8 {
		shift := 64 - 8*uint(f.Size)
		v = uint64(int64(v<<shift) >> shift)
	}
	return v, nil
}

// str returns the field's string bytes (up to the first NUL).
func (f *Field) str(raw []byte) ([]byte, error) {
	var b []byte
	switch {
	case f.DataLoc || f.RelLoc:
		if f.Offset+4 > len(raw) {
			return nil, ErrShortEntry
		}
		loc := uint32(raw[f.Offset]) | uint32(raw[f.Offset+1])<<8 | uint32(raw[f.Offset+2])<<16 | uint32(raw[f.Offset+3])<<24
		off, n := int(loc&0xffff), int(loc>>16)
		if f.RelLoc {
			off += f.Offset + 4
		}
		if off+n > len(raw) {
			return nil, ErrShortEntry
		}
		b = raw[off : off+n]
	default:
		if f.Offset+f.Size > len(raw) {
			return nil, ErrShortEntry
		}
		b = raw[f.Offset : f.Offset+f.Size]
	}
	for i, c := range b {
		if c == 0 {
			return b[:i], nil
		}
	}
	return b, nil
}

// truncate applies a C integer conversion to bits (sign-extending when signed).
func truncate(v uint64, bits uint8, signed bool) uint64 {
	if bits >= 64 {
		return v
	}
	shift := 64 - uint(bits)
	if signed {
		return uint64(int64(v<<shift) >> shift)
	}
	return v << shift >> shift
}

func (c *conv) append(dst, raw []byte) ([]byte, error) {
	if c.verb == 's' && !c.ptrHex {
		s, err := c.fld.str(raw)
		if err != nil {
			return dst, err
		}
		if c.prec >= 0 && len(s) > c.prec {
			s = s[:c.prec]
		}
		return pad(dst, s, c.width, c.flags&flagLeft != 0, ' '), nil
	}
	v, err := c.fld.scalar(raw)
	if err != nil {
		return dst, err
	}
	for i := len(c.casts) - 1; i >= 0; i-- {
		v = truncate(v, c.casts[i].bits, c.casts[i].signed)
	}
	switch c.verb {
	case 'p', 's': // 's': a char * printed as its value (trace-cmd)
		var buf [16]byte
		const hexDigits = "0123456789abcdef"
		for i := 15; i >= 0; i-- {
			buf[i] = hexDigits[v&15]
			v >>= 4
		}
		return pad(dst, buf[:], c.width, c.flags&flagLeft != 0, ' '), nil
	case 'c':
		return pad(dst, []byte{byte(v)}, c.width, c.flags&flagLeft != 0, ' '), nil
	}
	return c.number(dst, v), nil
}

// number formats v as the kernel's vsnprintf number() does.
func (c *conv) number(dst []byte, v uint64) []byte {
	var sign byte
	base := 10
	switch c.verb {
	case 'x', 'X':
		base = 16
	case 'o':
		base = 8
	}
	if c.verb == 'd' {
		n := int64(truncate(v, c.bits(), true))
		switch {
		case n < 0:
			sign, v = '-', uint64(-n)
		case c.flags&flagPlus != 0:
			sign = '+'
		case c.flags&flagSpace != 0:
			sign = ' '
		}
	} else {
		v = truncate(v, c.bits(), false)
	}
	var digits [24]byte
	d := strconv.AppendUint(digits[:0], v, base)
	if c.verb == 'X' {
		for i, ch := range d {
			if ch >= 'a' && ch <= 'f' {
				d[i] = ch - 'a' + 'A'
			}
		}
	}
	var prefix string
	if c.flags&flagAlt != 0 {
		switch base {
		case 16:
			prefix = "0x"
			if c.verb == 'X' {
				prefix = "0X"
			}
		case 8:
			if v != 0 {
				prefix = "0"
			}
		}
	}
	prec := max(c.prec, len(d))
	fill := c.width - prec - len(prefix)
	if sign != 0 {
		fill--
	}
	left, zero := c.flags&flagLeft != 0, c.flags&flagZero != 0 && c.flags&flagLeft == 0
	if !left && !zero {
		for ; fill > 0; fill-- {
			dst = append(dst, ' ')
		}
	}
	if sign != 0 {
		dst = append(dst, sign)
	}
	dst = append(dst, prefix...)
	if zero {
		for ; fill > 0; fill-- {
			dst = append(dst, '0')
		}
	}
	for i := len(d); i < prec; i++ {
		dst = append(dst, '0')
	}
	dst = append(dst, d...)
	for ; fill > 0; fill-- {
		dst = append(dst, ' ')
	}
	return dst
}

func pad(dst, s []byte, width int, left bool, fill byte) []byte {
	n := width - len(s)
	if !left {
		for ; n > 0; n-- {
			dst = append(dst, fill)
		}
	}
	dst = append(dst, s...)
	for ; n > 0; n-- {
		dst = append(dst, fill)
	}
	return dst
}
