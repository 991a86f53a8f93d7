// FuzzDecode: any bytes in, a counted outcome out, never a panic. Seeds: the committed
// corpus in testdata/fuzz/FuzzDecode plus the rendered format lines.
package ftrace

import (
	"testing"
	"unicode/utf8"

	"github.com/ghostdriver/ghostdriver/internal/event"
)

func FuzzDecode(f *testing.F) {
	for _, c := range formatCases {
		f.Add([]byte(rendered(c.name, c.payload)))
	}
	for _, c := range i915Cases {
		f.Add([]byte(rendered(c.name, c.payload)))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		d := NewDecoder()
		var e event.Event
		ok := d.Decode(line, 1, &e)
		s := d.Stats()
		n := s.Malformed + d.Headers()
		for _, v := range s.Unknown {
			n += v
		}
		for _, k := range event.Kinds() {
			n += s.EventsOf(k)
		}
		if n != 1 {
			t.Fatalf("%q: %d outcomes: %+v", line, n, s)
		}
		if ok != (s.EventsOf(e.Kind) == 1 && e.Kind != event.KindUnknown) {
			t.Fatalf("%q: ok=%v kind=%v", line, ok, e.Kind)
		}
		// Strings reach OTLP attributes: never invalid UTF-8, whatever a comm holds.
		for _, str := range []string{e.Comm, e.Name, e.Ring, e.Device, e.Timeline, e.Driver, e.Func, e.IRQName} {
			if !utf8.ValidString(str) {
				t.Fatalf("%q: invalid UTF-8 %q in the event", line, str)
			}
		}
	})
}
