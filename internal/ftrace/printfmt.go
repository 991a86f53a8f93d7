// What the live source's classic-tracepoint rung asks of the table when it loads an
// event: is the kernel's print format one we read (values.go decodes its values)?
package ftrace

import "strings"

// KnowsPrintFormat reports whether the TP_printk format printk of event name (as a
// tracefs format file's `print fmt` gives it, C escapes resolved) prints text one of
// the decoder's formats of that event reads: the same literals and the same kinds of
// conversion (widths and length modifiers aside, as the templates ignore them).
func KnowsPrintFormat(name, printk string) bool {
	_, ok := FormatOf(name, printk)
	return ok
}

// printkShape is template.shape of a format string, without compiling it: false when
// it has a conversion the templates do not read.
func printkShape(s string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '%' {
			b.WriteByte(c)
			continue
		}
		if i+1 < len(s) && s[i+1] == '%' {
			b.WriteByte('%')
			i++
			continue
		}
		j := i + 1
		for j < len(s) && strings.IndexByte("-0+ #.123456789", s[j]) >= 0 {
			j++
		}
		for j < len(s) && strings.IndexByte("lLhzjt", s[j]) >= 0 {
			j++
		}
		if j >= len(s) {
			return "", false
		}
		switch s[j] {
		case 's':
			b.WriteString("%s")
		case 'd', 'i', 'u':
			b.WriteString("%d")
		case 'x', 'X':
			b.WriteString("%x")
		case 'p':
			b.WriteString("%p")
		default:
			return "", false
		}
		i = j
	}
	return b.String(), true
}
