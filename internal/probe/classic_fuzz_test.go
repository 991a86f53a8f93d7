// Fuzzing of the classic-tracepoint rung's user-space half: tracefs format files (kernel
// text, parsed and compiled once per event) and the raw trace entries decoded against
// them. Whatever the bytes, nothing panics, and what decodes is an event with a kind and
// valid UTF-8 strings (they become OTLP attributes).
package probe

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ghostdriver/ghostdriver/internal/event"
)

func FuzzClassicRecord(f *testing.F) {
	// Seeds: every real format of the testdata files, each with an entry of zeros and
	// one of 0xff (data_loc past the copy, negative numbers).
	files, _ := filepath.Glob(filepath.Join("testdata", "formats", "*.txt"))
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		for _, blk := range strings.Split(string(b), "## system: ")[1:] {
			system, text, _ := strings.Cut(blk, "\n")
			f.Add(strings.TrimSpace(system), text, make([]byte, rawMax))
			f.Add(strings.TrimSpace(system), text, []byte(strings.Repeat("\xff", rawMax)))
		}
	}
	f.Fuzz(func(t *testing.T, system, text string, raw []byte) {
		name := ""
		for _, l := range strings.Split(text, "\n") {
			if v, ok := strings.CutPrefix(strings.TrimSpace(l), "name:"); ok {
				name = strings.TrimSpace(v)
			}
		}
		hook, ok := classicHook(name)
		if !ok {
			// Not one of our events: the format must still parse or fail cleanly.
			if pf, err := parseFormat(system, name, text); err == nil {
				_, _ = compilePrinter(pf)
			}
			return
		}
		ce, err := newClassicEvent(system, name, text)
		if err != nil {
			return
		}
		var events classicEvents
		events.add(hook, ce)
		d := decoder{classic: newClassicDecoder(&events)}
		var ev, viaText event.Event
		sample := rawSample(hook, 1_000_000_123, 42<<32|43, 1, "fuzz", raw)
		err = d.decode(sample, &ev)
		if terr := newTextReading().decode(ce, sample, &viaText); terr == nil && err == nil && !reflect.DeepEqual(ev, viaText) {
			t.Fatalf("direct decode %+v\ntext reading  %+v", ev, viaText)
		}
		if err != nil {
			return
		}
		if ev.Kind == event.KindUnknown || ev.Name == "" {
			t.Fatalf("decoded without a kind: %+v", ev)
		}
		if ev.Time != 1_000_000_123 || ev.PID != 42 || ev.TID != 43 {
			t.Fatalf("time/pid/tid not the record's: %+v", ev)
		}
		for _, s := range []string{ev.Comm, ev.Ring, ev.Device, ev.Driver, ev.Timeline, ev.Name} {
			if !utf8.ValidString(s) {
				t.Fatalf("invalid UTF-8 %q in %+v", s, ev)
			}
		}
	})
}
