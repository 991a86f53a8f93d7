package kstr

import "testing"

func TestFromC(t *testing.T) {
	cases := []struct {
		in   []int8
		want string
	}{
		{nil, ""},
		{[]int8{0, 'x'}, ""},
		{[]int8{'g', 'f', 'x', 0, 'z'}, "gfx"},
		{[]int8{'a', 'b'}, "ab"},
		{[]int8{'a', -1, 'b', 0}, "a\uFFFDb"},
	}
	for _, c := range cases {
		if got := FromC(c.in); got != c.want {
			t.Errorf("FromC(%v) = %q, want %q", c.in, got, c.want)
		}
	}
}
