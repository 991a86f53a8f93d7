// W3C traceparent, the spec's own examples and its rejection rules.
package appctx

import (
	"errors"
	"testing"
)

func TestParseTraceParent(t *testing.T) {
	valid := []struct {
		in      string
		want    string // String() of the result
		sampled bool
	}{
		// The spec's example (https://www.w3.org/TR/trace-context/#examples-of-http-traceparent-headers).
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", true},
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00", false},
		// Level 2 random flag.
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-03", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-03", true},
		// A future version may append fields after a dash.
		{"cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-what-the-future-will-be-like", "cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", true},
		// Environment values sometimes carry stray whitespace.
		{" 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\t", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", true},
	}
	for _, c := range valid {
		tp, err := ParseTraceParent(c.in)
		if err != nil {
			t.Errorf("ParseTraceParent(%q): %v", c.in, err)
			continue
		}
		if tp.String() != c.want || tp.Sampled() != c.sampled {
			t.Errorf("ParseTraceParent(%q) = %s sampled=%v, want %s sampled=%v", c.in, tp, tp.Sampled(), c.want, c.sampled)
		}
	}

	invalid := map[string]string{
		"uppercase trace-id": "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
		"uppercase version":  "0A-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
		"all-zero trace-id":  "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
		"all-zero parent-id": "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
		"version ff":         "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
		"short trace-id":     "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",
		"long span-id":       "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7a-01",
		"v00 trailing data":  "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
		"future no dash":     "cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01x",
		"bad flags":          "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0g",
		"underscores":        "00_4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7_01",
		"empty":              "",
		"non-hex trace":      "00-4bf92f3577b34da6a3ce929d0e0e473z-00f067aa0ba902b7-01",
	}
	for name, in := range invalid {
		if tp, err := ParseTraceParent(in); !errors.Is(err, ErrTraceParent) {
			t.Errorf("%s: ParseTraceParent(%q) = %v, %v; want ErrTraceParent", name, in, tp, err)
		}
	}
}

func TestValidTraceState(t *testing.T) {
	for in, want := range map[string]bool{
		"rojo=00f067aa0ba902b7,congo=t61rcWkgMzE": true,
		"":                        true,
		"a=1,,b=2":                true,
		"novalue":                 false,
		"k=v\n":                   false,
		string(make([]byte, 600)): false,
	} {
		if got := ValidTraceState(in); got != want {
			t.Errorf("ValidTraceState(%q) = %v, want %v", in, got, want)
		}
	}
}
