// OTEP 4947 records as a writer lays them out, and the malformed ones a reader must refuse.
package appctx

import (
	"encoding/binary"
	"errors"
	"github.com/ghostdriver/ghostdriver/internal/attr"
	"reflect"
	"testing"
)

// record lays out an OTEP 4947 record the way the C writers do (host-endian size).
func record(valid byte, trace, span byte, flags byte, attrs []byte, declared int) []byte {
	b := make([]byte, ThreadContextHeaderSize, ThreadContextHeaderSize+len(attrs))
	for i := 0; i < 16; i++ {
		b[i] = trace
	}
	for i := 16; i < 24; i++ {
		b[i] = span
	}
	b[24], b[25] = valid, flags
	binary.NativeEndian.PutUint16(b[26:28], uint16(declared))
	return append(b, attrs...)
}

func TestParseThreadContext(t *testing.T) {
	attrs := []byte{0, 3, 'G', 'E', 'T', 1, 9, '/', 'a', 'p', 'i', '/', 'j', 'o', 'b', 's', 2, 0}
	c, err := ParseThreadContext(record(1, 0xab, 0xcd, 1, attrs, len(attrs)))
	if err != nil {
		t.Fatal(err)
	}
	want := ThreadContext{Valid: true, Flags: 1, Attrs: []ThreadAttr{{0, "GET"}, {1, "/api/jobs"}, {2, ""}}}
	for i := range want.TraceID {
		want.TraceID[i] = 0xab
	}
	for i := range want.SpanID {
		want.SpanID[i] = 0xcd
	}
	if !reflect.DeepEqual(c, want) {
		t.Fatalf("got %+v\nwant %+v", c, want)
	}
	named := c.Named([]string{"http.request.method", "http.route"})
	wantNamed := []attr.Attribute{attr.String("http.request.method", "GET"), attr.String("http.route", "/api/jobs"), attr.String("threadlocal.attr.2", "")}
	if !reflect.DeepEqual(named, wantNamed) {
		t.Errorf("Named = %+v, want %+v", named, wantNamed)
	}

	// Trailing bytes beyond attrs-data (the reader fetched 640 bytes) are ignored.
	if c, err := ParseThreadContext(append(record(1, 1, 2, 0, attrs[:5], 5), make([]byte, 100)...)); err != nil || len(c.Attrs) != 1 {
		t.Errorf("record with slack: %+v, %v", c, err)
	}
	// Invalid UTF-8 is repaired, not rejected.
	if c, err := ParseThreadContext(record(1, 1, 2, 0, []byte{4, 2, 0xff, 'x'}, 4)); err != nil || c.Attrs[0].Value != "\uFFFDx" {
		t.Errorf("invalid utf-8: %+v, %v", c, err)
	}
}

func TestParseThreadContextNoContext(t *testing.T) {
	for name, b := range map[string][]byte{
		"valid=0 (being written)": record(0, 1, 2, 0, nil, 0),
		"valid=2":                 record(2, 1, 2, 0, nil, 0),
		"all-zero ids":            record(1, 0, 0, 0, nil, 0),
	} {
		c, err := ParseThreadContext(b)
		if err != nil || c.Valid || c.Attrs != nil {
			t.Errorf("%s: %+v, %v; want no context and no error", name, c, err)
		}
	}
}

func TestParseThreadContextRejects(t *testing.T) {
	for name, b := range map[string][]byte{
		"short header":               make([]byte, 27),
		"attrs beyond what was read": record(1, 1, 2, 0, []byte{0, 1, 'x'}, 10),
		"attrs beyond 640 bytes":     append(record(1, 1, 2, 0, nil, 613), make([]byte, 613)...),
		"value runs past attrs":      record(1, 1, 2, 0, []byte{0, 5, 'a', 'b'}, 4),
		"half an attribute header":   record(1, 1, 2, 0, []byte{0, 0, 7}, 3),
		"span without trace":         record(1, 0, 2, 0, nil, 0),
	} {
		if c, err := ParseThreadContext(b); !errors.Is(err, ErrThreadContext) {
			t.Errorf("%s: %+v, %v; want ErrThreadContext", name, c, err)
		}
	}
	// Exactly at the limit is fine.
	var full []byte
	for _, n := range []int{255, 255, 96} {
		full = append(append(full, 7, byte(n)), make([]byte, n)...)
	}
	if c, err := ParseThreadContext(record(1, 1, 2, 0, full, len(full))); err != nil || len(full) != 612 || len(c.Attrs) != 3 {
		t.Errorf("640-byte record: %d attrs, %v", len(c.Attrs), err)
	}
}
