// FuzzDecode: any bytes in, a counted outcome out, never a panic, and the same outcome
// from a decoder that has seen the line before. Seeds: the committed
// corpus in testdata/fuzz/FuzzDecode plus the rendered format lines and latency-format lines.
package ftrace

import (
	"reflect"
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
	// the latency format, plain, verbose and in the kernel log, and loss notes
	f.Add([]byte(latPlain("kworker/u16:3", 215, 3, "d.h2.", 1234, ' ', "dma_fence_signaled", "driver=amdgpu timeline=gfx_0.0.0 context=12 seqno=99081")))
	f.Add([]byte("<0>[  812.512345][    C3] " + latVerbose("sdma0", 199, 0, 1, 0, 7, 5689000, 1, 0, "dma_fence_signaled", "driver=a timeline=b context=1 seqno=2")))
	f.Add([]byte("CPU:7 [LOST 12 EVENTS]"))
	f.Add([]byte("[   46.129062] Dumping ftrace buffer:"))
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
		// The decoder now remembers the line (recent.go): decoding it again changes nothing.
		var again event.Event
		if ok2 := d.Decode(line, 2, &again); ok2 != ok || ok && !reflect.DeepEqual(again, e) {
			t.Fatalf("%q: again %v %+v, first %v %+v", line, ok2, again, ok, e)
		}
	})
}
