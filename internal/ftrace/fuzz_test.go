// FuzzDecode: any bytes in, a counted outcome out, never a panic. Seeds: the committed
// corpus in testdata/fuzz/FuzzDecode plus the rendered format lines.
package ftrace

import (
	"testing"

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
	})
}
