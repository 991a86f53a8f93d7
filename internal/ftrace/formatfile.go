// A tracefs event format file (events/<system>/<event>/format) parsed: the layout of the
// event's raw entry (each field's offset, size, sign and C type) and its `print fmt` split
// into the format string and the argument expressions. entryprint.go binds the
// arguments to the fields; entry.go decodes raw entries with both.

package ftrace

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Field is one field line of a format file: where a value lies in the event's raw entry.
type Field struct {
	Name   string
	CType  string // the declared C type without the name ("__data_loc char[]", "char[16]", "u64")
	Offset int
	Size   int
	Signed bool
	// DataLoc: a u32 at Offset holding len<<16 | offset of the data from the entry start;
	// RelLoc: the same, offset from the end of this field (__rel_loc, 5.18+).
	DataLoc, RelLoc bool
	// Array: a fixed array ("char comm[16]"); Pointer: a pointer type ("char *").
	Array, Pointer bool
}

// IsString reports whether %s prints the field's bytes: a dynamic char[] or a char array.
func (f *Field) IsString() bool {
	if f.DataLoc || f.RelLoc {
		return strings.Contains(f.CType, "char")
	}
	return f.Array && strings.HasPrefix(strings.TrimPrefix(f.CType, "unsigned "), "char")
}

// IsScalar reports whether the field is a number that fits a conversion.
func (f *Field) IsScalar() bool {
	return !f.Array && !f.DataLoc && !f.RelLoc && (f.Size == 1 || f.Size == 2 || f.Size == 4 || f.Size == 8)
}

// Format is a parsed format file.
type Format struct {
	System, Name string
	// ID is the common_type of the event's entries (a BPF program's copy of an entry
	// has the kernel's pt_regs pointer there instead: internal/probe/classic.go).
	ID       uint16
	Fields   []Field
	PrintFmt string   // the format string, C escapes resolved
	Args     []string // the argument expressions, verbatim
}

// Field is the field called name, nil when there is none.
func (f *Format) Field(name string) *Field {
	for i := range f.Fields {
		if f.Fields[i].Name == name {
			return &f.Fields[i]
		}
	}
	return nil
}

// ParseFormat parses the text of events/<system>/<name>/format.
func ParseFormat(system, name string, text string) (*Format, error) {
	f := &Format{System: system, Name: name}
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
			f.ID, haveID = uint16(id), true
		case strings.HasPrefix(line, "field:"):
			fld, err := parseField(line)
			if err != nil {
				return nil, fmt.Errorf("format of %s/%s: %w", system, name, err)
			}
			f.Fields = append(f.Fields, fld)
		case strings.HasPrefix(line, "print fmt:"):
			s, args, err := parsePrintFmt(strings.TrimSpace(line[len("print fmt:"):]))
			if err != nil {
				return nil, fmt.Errorf("format of %s/%s: print fmt: %w", system, name, err)
			}
			f.PrintFmt, f.Args, havePrint = s, args, true
		}
	}
	if !haveID || !havePrint || len(f.Fields) == 0 {
		return nil, fmt.Errorf("format of %s/%s: no ID, fields or print fmt", system, name)
	}
	return f, nil
}

// parseField parses "field:TYPE NAME;\toffset:N;\tsize:N;\tsigned:N;".
func parseField(line string) (Field, error) {
	var fld Field
	parts := strings.Split(line, ";")
	if len(parts) < 4 {
		return fld, fmt.Errorf("field line %q", line)
	}
	decl := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(parts[0]), "field:"))
	sp := strings.LastIndexAny(decl, " \t*")
	if sp < 0 || sp == len(decl)-1 {
		return fld, fmt.Errorf("field declaration %q", decl)
	}
	fld.Name, fld.CType = decl[sp+1:], strings.TrimSpace(decl[:sp+1])
	if i := strings.IndexByte(fld.Name, '['); i >= 0 {
		fld.CType += fld.Name[i:]
		fld.Name = fld.Name[:i]
		fld.Array = true
	}
	fld.Pointer = strings.HasSuffix(fld.CType, "*")
	fld.DataLoc = strings.HasPrefix(fld.CType, "__data_loc ")
	fld.RelLoc = strings.HasPrefix(fld.CType, "__rel_loc ")
	if fld.DataLoc || fld.RelLoc {
		fld.Array = false
	}
	for _, p := range parts[1:] {
		k, v, ok := strings.Cut(strings.TrimSpace(p), ":")
		if !ok {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			return fld, fmt.Errorf("field %s: %s:%q", fld.Name, k, v)
		}
		switch k {
		case "offset":
			fld.Offset = n
		case "size":
			fld.Size = n
		case "signed":
			fld.Signed = n != 0
		}
	}
	if fld.Offset < 0 || fld.Size < 0 {
		return fld, fmt.Errorf("field %s: offset %d size %d", fld.Name, fld.Offset, fld.Size)
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
