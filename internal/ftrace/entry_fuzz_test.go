// Fuzzing of raw-entry decoding: tracefs format files (kernel text, parsed and compiled
// once per event) and the raw trace entries decoded against them. Whatever the bytes,
// nothing panics, the direct decode agrees with the text reading where both succeed, and
// what decodes is an event with a kind and valid UTF-8 strings (they become OTLP
// attributes).

package ftrace

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ghostdriver/ghostdriver/internal/event"
)

func FuzzDecodeEntry(f *testing.F) {
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
			f.Add(strings.TrimSpace(system), text, make([]byte, entrySize))
			f.Add(strings.TrimSpace(system), text, []byte(strings.Repeat("\xff", entrySize)))
		}
	}
	f.Fuzz(func(t *testing.T, system, text string, raw []byte) {
		name := ""
		for _, l := range strings.Split(text, "\n") {
			if v, ok := strings.CutPrefix(strings.TrimSpace(l), "name:"); ok {
				name = strings.TrimSpace(v)
			}
		}
		ef, err := NewEntryFormat(system, name, text)
		if err != nil {
			// Not one the decoder reads: the format must still parse or fail cleanly.
			if pf, err := ParseFormat(system, name, text); err == nil {
				_, _ = CompilePrinter(pf)
			}
			return
		}
		// What the live source hands over: a copy of the entry's first bytes.
		entry := make([]byte, entrySize)
		copy(entry, raw)
		var ev, viaText event.Event
		err = NewDecoder().DecodeEntry(ef, entry, &ev)
		if terr := newTextReading().decode(ef, entry, &viaText); terr == nil && err == nil && !reflect.DeepEqual(ev, viaText) {
			t.Fatalf("direct decode %+v\ntext reading  %+v", ev, viaText)
		}
		if err != nil {
			return
		}
		if ev.Kind == event.KindUnknown || ev.Name == "" {
			t.Fatalf("decoded without a kind: %+v", ev)
		}
		for _, s := range []string{ev.Comm, ev.Ring, ev.Device, ev.Driver, ev.Timeline, ev.Name} {
			if !utf8.ValidString(s) {
				t.Fatalf("invalid UTF-8 %q in %+v", s, ev)
			}
		}
	})
}
