package ctxtier

import (
	"strings"
	"testing"
)

// The names are the strings of the receiver configuration (context.tiers) and of the
// ghostdriver.context.tier attribute as telemetry-extra.yaml lists them; the numbers are those of
// enum ctx_tier (bpf/include/ctx_tier.h), plus 3 for TRACEPARENT.
func TestNames(t *testing.T) {
	for tier, want := range map[uint8]string{0: "none", 1: "otep4947", 2: "obi", 3: "traceparent", 4: "unknown", 255: "unknown"} {
		if got := Name(tier); got != want {
			t.Errorf("Name(%d) = %q, want %q", tier, got, want)
		}
	}
	for name, want := range map[string]uint8{"otep4947": 1, "obi": 2, "traceparent": 3} {
		if got, ok := Parse(name); !ok || got != want {
			t.Errorf("Parse(%q) = %d, %v; want %d", name, got, ok, want)
		}
	}
	for _, name := range []string{"none", "unknown", "", "OBI"} {
		if got, ok := Parse(name); ok {
			t.Errorf("Parse(%q) = %d, want an error", name, got)
		}
	}
}

func TestKernelOrder(t *testing.T) {
	for _, c := range []struct {
		in   []string
		want [MaxKernel]uint8
		err  string
	}{
		{nil, [MaxKernel]uint8{0, 0}, ""},
		{[]string{"otep4947", "obi"}, [MaxKernel]uint8{1, 2}, ""},
		{[]string{"obi"}, [MaxKernel]uint8{2, 0}, ""},
		{[]string{"obi", "otep4947"}, [MaxKernel]uint8{2, 1}, ""},
		{[]string{"traceparent"}, [MaxKernel]uint8{}, `unknown in-kernel context tier (want otep4947 or obi): "traceparent"`},
		{[]string{"otep"}, [MaxKernel]uint8{}, `unknown in-kernel context tier`},
		{[]string{"obi", "obi"}, [MaxKernel]uint8{}, `context tier listed twice: "obi"`},
	} {
		got, err := KernelOrder(c.in)
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%v: %v", c.in, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%v: error %v, want %q", c.in, err, c.err)
		case c.err == "" && got != c.want:
			t.Errorf("%v: %v, want %v", c.in, got, c.want)
		}
	}
}
