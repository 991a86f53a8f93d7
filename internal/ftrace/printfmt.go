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
	trailing, err := scanPrintk(s, func(lit string, c printkConv) error {
		v, ok := c.class()
		if !ok {
			return ErrUnsupported
		}
		b.WriteString(lit)
		b.WriteString(v.shape())
		return nil
	})
	if err != nil {
		return "", false
	}
	b.WriteString(trailing)
	return b.String(), true
}
