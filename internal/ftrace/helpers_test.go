// Test helpers shared by the decoder tests: reading captures, decoding many lines,
// and comparing events field by field.
package ftrace

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/ghostdriver/ghostdriver/internal/event"
)

// capturesDir is the repository's testdata/captures (real captures, see its files' headers).
var capturesDir = filepath.Join("..", "..", "testdata", "captures")

// readLines returns the lines of a capture file, gunzipping *.gz.
func readLines(t testing.TB, name string) [][]byte {
	t.Helper()
	f, err := os.Open(filepath.Join(capturesDir, name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var r io.Reader = f
	if filepath.Ext(name) == ".gz" {
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		r = zr
	}
	var lines [][]byte
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		lines = append(lines, bytes.Clone(sc.Bytes()))
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return lines
}

// decodeAll decodes lines with a fresh decoder and returns the decoded events.
func decodeAll(lines [][]byte) ([]event.Event, *Decoder) {
	d := NewDecoder()
	var out []event.Event
	var ev event.Event
	for i, l := range lines {
		if d.Decode(l, i+1, &ev) {
			out = append(out, ev)
		}
	}
	return out, d
}

// decodeOne decodes a single line with a fresh decoder.
func decodeOne(line string) (event.Event, bool, *Decoder) {
	d := NewDecoder()
	var ev event.Event
	ok := d.Decode([]byte(line), 1, &ev)
	return ev, ok, d
}

// countsByKind returns the non-zero per-kind counts of s.
func countsByKind(s event.SourceStats) map[event.Kind]uint64 {
	m := map[event.Kind]uint64{}
	for _, k := range event.Kinds() {
		if n := s.EventsOf(k); n > 0 {
			m[k] = n
		}
	}
	return m
}

// familyOf is the decoder's family of the event printed as name.
func familyOf(name string) *family {
	for _, e := range events {
		if e.name == name {
			return e.fam
		}
	}
	return nil
}

// famMsm is msm's submit family (msm_test.go reads its formats).
var famMsm = familyOf("msm_gpu_submit")
