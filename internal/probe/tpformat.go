// A tracefs event format file (events/<system>/<event>/format) parsed, and its
// `print fmt` compiled: each conversion bound to the field it prints, with the casts and
// length the kernel applies. The classic-tracepoint rung (classic.go) copies raw entries
// and reads each argument's value through these bindings (classic_args.go); a conversion
// can also print its value as the kernel would (conv.append: the digits of a number that
// fills a text field, and the tests' rendering of whole payloads).
//
// Only what the GPU events' TP_printk use is supported: arguments REC->field and
// __get_str(field) (__get_rel_str for __rel_loc), optionally parenthesised or cast to a
// C integer or pointer type, and the conversions %d %i %u %x %X %o %c %s %p with flags
// (- 0 + space #), width, precision and the length modifiers hh h l ll L z t j. Anything
// else (__print_flags, ternaries, arithmetic, %p extensions, '*' widths) is refused at
// compile time with the reason, so an event is never decoded from a guess.
//
// Two renderings differ from the kernel's own output on purpose:
//   - %p prints the raw pointer as 16 hex digits, where the kernel prints a hashed one
//     (also 16 digits): the text decoder reads both the same way, and a pointer is the
//     same object throughout one run, which is all the joins by pointer need.
//   - %s of a `char *` field (amdgpu <= 5.4 ring_name) prints the pointer as 16 hex
//     digits, as trace-cmd does (the kernel would dereference it; the copy cannot). The
//     text decoder knows that case (internal/ftrace/doc.go).
package probe

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// tpField is one field line of a format file.
type tpField struct {
	name   string
	ctype  string // the declared C type without the name ("__data_loc char[]", "char[16]", "u64")
	offset int
	size   int
	signed bool
	// dataLoc: a u32 at offset holding len<<16 | offset of the data from the entry start;
	// relLoc: the same, offset from the end of this field (__rel_loc, 5.18+).
	dataLoc, relLoc bool
	// array: a fixed array ("char comm[16]"); pointer: a pointer type ("char *").
	array, pointer bool
}

// isString reports whether %s prints the field's bytes: a dynamic char[] or a char array.
func (f *tpField) isString() bool {
	if f.dataLoc || f.relLoc {
		return strings.Contains(f.ctype, "char")
	}
	return f.array && strings.HasPrefix(strings.TrimPrefix(f.ctype, "unsigned "), "char")
}

// isScalar reports whether the field is a number that fits a conversion.
func (f *tpField) isScalar() bool {
	return !f.array && !f.dataLoc && !f.relLoc && (f.size == 1 || f.size == 2 || f.size == 4 || f.size == 8)
}

// tpFormat is a parsed format file.
type tpFormat struct {
	system, name string
	id           uint16 // common_type of the event's entries (not in a BPF copy: see classic.go)
	fields       []tpField
	printFmt     string   // the format string, C escapes resolved
	args         []string // the argument expressions, verbatim
}

func (f *tpFormat) field(name string) *tpField {
	for i := range f.fields {
		if f.fields[i].name == name {
			return &f.fields[i]
		}
	}
	return nil
}

// parseFormat parses the text of events/<system>/<name>/format.
func parseFormat(system, name string, text string) (*tpFormat, error) {
	f := &tpFormat{system: system, name: name}
	haveID, havePrint := false, false
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "name:"):
			if n := strings.TrimSpace(line[len("name:"):]); n != name {
				return nil, fmt.Errorf("format of %s/%s names event %q", system, name, n)
			}
		case strings.HasPrefix(line, "ID:"):
			id, err := strconv.ParseUint(strings.TrimSpace(line[len("ID:"):]), 10, 16)
			if err != nil {
				return nil, fmt.Errorf("format of %s/%s: bad ID line %q", system, name, line)
			}
			f.id, haveID = uint16(id), true
		case strings.HasPrefix(line, "field:"):
			fld, err := parseField(line)
			if err != nil {
				return nil, fmt.Errorf("format of %s/%s: %w", system, name, err)
			}
			f.fields = append(f.fields, fld)
		case strings.HasPrefix(line, "print fmt:"):
			s, args, err := parsePrintFmt(strings.TrimSpace(line[len("print fmt:"):]))
			if err != nil {
				return nil, fmt.Errorf("format of %s/%s: print fmt: %w", system, name, err)
			}
			f.printFmt, f.args, havePrint = s, args, true
		}
	}
	if !haveID || !havePrint || len(f.fields) == 0 {
		return nil, fmt.Errorf("format of %s/%s: no ID, fields or print fmt", system, name)
	}
	return f, nil
}

// parseField parses "field:TYPE NAME;\toffset:N;\tsize:N;\tsigned:N;".
func parseField(line string) (tpField, error) {
	var fld tpField
	parts := strings.Split(line, ";")
	if len(parts) < 4 {
		return fld, fmt.Errorf("field line %q", line)
	}
	decl := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(parts[0]), "field:"))
	sp := strings.LastIndexAny(decl, " \t*")
	if sp < 0 || sp == len(decl)-1 {
		return fld, fmt.Errorf("field declaration %q", decl)
	}
	fld.name, fld.ctype = decl[sp+1:], strings.TrimSpace(decl[:sp+1])
	if i := strings.IndexByte(fld.name, '['); i >= 0 {
		fld.ctype += fld.name[i:]
		fld.name = fld.name[:i]
		fld.array = true
	}
	fld.pointer = strings.HasSuffix(fld.ctype, "*")
	fld.dataLoc = strings.HasPrefix(fld.ctype, "__data_loc ")
	fld.relLoc = strings.HasPrefix(fld.ctype, "__rel_loc ")
	if fld.dataLoc || fld.relLoc {
		fld.array = false
	}
	for _, p := range parts[1:] {
		k, v, ok := strings.Cut(strings.TrimSpace(p), ":")
		if !ok {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			return fld, fmt.Errorf("field %s: %s:%q", fld.name, k, v)
		}
		switch k {
		case "offset":
			fld.offset = n
		case "size":
			fld.size = n
		case "signed":
			fld.signed = n != 0
		}
	}
	if fld.offset < 0 || fld.size < 0 {
		return fld, fmt.Errorf("field %s: offset %d size %d", fld.name, fld.offset, fld.size)
	}
	return fld, nil
}

// parsePrintFmt splits `"fmt", arg, arg` into the unescaped format and the arguments.
func parsePrintFmt(s string) (string, []string, error) {
	if len(s) == 0 || s[0] != '"' {
		return "", nil, errors.New("does not start with a string literal")
	}
	var b strings.Builder
	i := 0
	// One literal, or adjacent ones ("a" "b") as a TP_printk split over lines prints.
	for i < len(s) && s[i] == '"' {
		for i++; i < len(s) && s[i] != '"'; i++ {
			c := s[i]
			if c != '\\' {
				b.WriteByte(c)
				continue
			}
			i++
			if i >= len(s) {
				break
			}
			switch s[i] {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case '\\', '"', '\'':
				b.WriteByte(s[i])
			default:
				return "", nil, fmt.Errorf("escape \\%c not supported", s[i])
			}
		}
		if i >= len(s) {
			return "", nil, errors.New("unterminated string literal")
		}
		i++
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
	}
	rest := strings.TrimSpace(s[i:])
	if rest == "" {
		return b.String(), nil, nil
	}
	if rest[0] != ',' {
		return "", nil, fmt.Errorf("unexpected %q after the format string", rest)
	}
	args, err := splitArgs(rest[1:])
	return b.String(), args, err
}

// splitArgs splits at the commas outside parentheses, brackets, braces and literals.
func splitArgs(s string) ([]string, error) {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			depth--
		case '"', '\'':
			j := i + 1
			for j < len(s) && s[j] != c {
				if s[j] == '\\' {
					j++
				}
				j++
			}
			i = j
		case ',':
			if depth == 0 {
				out = append(out, strings.TrimSpace(s[start:i]))
				start = i + 1
			}
		}
	}
	if depth != 0 {
		return nil, errors.New("unbalanced parentheses in the arguments")
	}
	return append(out, strings.TrimSpace(s[start:])), nil
}

// Conversion flags.
const (
	flagLeft  = 1 << iota // -
	flagZero              // 0
	flagPlus              // +
	flagSpace             // ' '
	flagAlt               // #
)

// conv is one compiled printf conversion with its argument.
type conv struct {
	verb  byte // d u x X o c s p
	flags uint8
	width int
	prec  int // -1: none
	bits  uint8
	// The argument: a field, read as a number or a string.
	fld *tpField
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

// tpPrinter is one event's print fmt with its conversions bound to the entry's fields.
type tpPrinter struct {
	format   *tpFormat
	segs     []printSeg
	trailing string
}

// errUnsupported marks a print fmt the printer refuses (the classic rung is then
// unavailable for the event, with this reason).
var errUnsupported = errors.New("unsupported")

func unsupported(format string, a ...any) error {
	return fmt.Errorf("%w: %s", errUnsupported, fmt.Sprintf(format, a...))
}

// compilePrinter compiles f's print fmt; an expression or conversion outside the
// supported subset is an errUnsupported error naming it.
func compilePrinter(f *tpFormat) (*tpPrinter, error) {
	p := &tpPrinter{format: f}
	s := f.printFmt
	var lit strings.Builder
	argi := 0
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
		c := conv{prec: -1, bits: 32}
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
			return nil, unsupported("'*' width or precision in %q", s[start:min(j+2, len(s))])
		}
		switch {
		case strings.HasPrefix(s[j:], "hh"):
			c.bits, j = 8, j+2
		case strings.HasPrefix(s[j:], "ll"):
			c.bits, j = 64, j+2
		case j < len(s) && s[j] == 'h':
			c.bits, j = 16, j+1
		case j < len(s) && strings.IndexByte("lLztj", s[j]) >= 0:
			c.bits, j = 64, j+1
		}
		if j >= len(s) {
			return nil, unsupported("truncated conversion %q", s[start:])
		}
		c.verb = s[j]
		switch c.verb {
		case 'i':
			c.verb = 'd'
		case 'd', 'u', 'x', 'X', 'o', 'c', 's':
		case 'p':
			if j+1 < len(s) && isAlnum(s[j+1]) {
				return nil, unsupported("%%p extension %q", s[start:j+2])
			}
		default:
			return nil, unsupported("conversion %q", s[start:j+1])
		}
		if argi >= len(f.args) {
			return nil, unsupported("more conversions than arguments")
		}
		if err := bindArg(f, &c, f.args[argi]); err != nil {
			return nil, fmt.Errorf("argument %d (%s) of %q: %w", argi+1, f.args[argi], s[start:j+1], err)
		}
		argi++
		p.segs = append(p.segs, printSeg{lit: lit.String(), c: c})
		lit.Reset()
		i = j
	}
	if argi != len(f.args) {
		return nil, unsupported("%d conversions for %d arguments", argi, len(f.args))
	}
	p.trailing = lit.String()
	return p, nil
}

func isAlnum(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

// bindArg resolves one argument expression for conversion c.
func bindArg(f *tpFormat, c *conv, expr string) error {
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
	fld := f.field(name)
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
	case (fld.dataLoc || fld.relLoc) && !isStr:
		return unsupported("REC->%s of a dynamic field (%s)", name, fld.ctype)
	case c.verb == 's' && fld.isString():
	case c.verb == 's' && fld.pointer && fld.size == 8 && !isStr:
		c.ptrHex = true
	case c.verb == 's':
		return unsupported("%%s of field %s (%s)", name, fld.ctype)
	case isStr || !fld.isScalar():
		return unsupported("%%%c of field %s (%s)", c.verb, name, fld.ctype)
	}
	if isStr && !fld.isString() {
		return unsupported("__get_str of field %s (%s)", name, fld.ctype)
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

// errShortEntry: a field or string lies beyond the bytes copied from the entry.
var errShortEntry = errors.New("field beyond the copied entry")

// scalar reads the field as a number (sign-extended when the field is signed).
func (f *tpField) scalar(raw []byte) (uint64, error) {
	if f.offset+f.size > len(raw) {
		return 0, errShortEntry
	}
	b := raw[f.offset : f.offset+f.size]
	var v uint64
	for i := len(b) - 1; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	if f.signed && f.size < 8 {
		shift := 64 - 8*uint(f.size)
		v = uint64(int64(v<<shift) >> shift)
	}
	return v, nil
}

// str returns the field's string bytes (up to the first NUL).
func (f *tpField) str(raw []byte) ([]byte, error) {
	var b []byte
	switch {
	case f.dataLoc || f.relLoc:
		if f.offset+4 > len(raw) {
			return nil, errShortEntry
		}
		loc := uint32(raw[f.offset]) | uint32(raw[f.offset+1])<<8 | uint32(raw[f.offset+2])<<16 | uint32(raw[f.offset+3])<<24
		off, n := int(loc&0xffff), int(loc>>16)
		if f.relLoc {
			off += f.offset + 4
		}
		if off+n > len(raw) {
			return nil, errShortEntry
		}
		b = raw[off : off+n]
	default:
		if f.offset+f.size > len(raw) {
			return nil, errShortEntry
		}
		b = raw[f.offset : f.offset+f.size]
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
		n := int64(truncate(v, c.bits, true))
		switch {
		case n < 0:
			sign, v = '-', uint64(-n)
		case c.flags&flagPlus != 0:
			sign = '+'
		case c.flags&flagSpace != 0:
			sign = ' '
		}
	} else {
		v = truncate(v, c.bits, false)
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
