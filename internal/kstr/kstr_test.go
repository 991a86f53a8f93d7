package kstr

import (
	"math/rand/v2"
	"testing"
)

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

func TestInternerMatchesFromC(t *testing.T) {
	var in Interner
	inputs := [][]int8{nil, {0}, {'g', 'f', 'x', 0, 'z'}, {'a', -1, 'b', 0}, {'a', -1, 'b', 0}, {'g', 'f', 'x', 0}, {'c', 'o', 'm', 'p'}}
	for round := 0; round < 2; round++ { // the second round hits the cache
		for _, b := range inputs {
			if got, want := in.FromC(b), FromC(b); got != want {
				t.Errorf("Interner.FromC(%v) = %q, want %q", b, got, want)
			}
		}
	}
	// Colliding names never come back for each other.
	for i := 0; i < 4*internSlots; i++ {
		name := []int8{'t', int8('a' + i%26), int8('a' + (i/26)%26), int8('0' + i%10), 0}
		want := FromC(name)
		if got := in.FromC(name); got != want {
			t.Fatalf("%q came back as %q", want, got)
		}
	}
	if a := testing.AllocsPerRun(100, func() { in.FromC([]int8{'g', 'f', 'x', 0}) }); a != 0 {
		t.Errorf("a cached name allocates %.0f times", a)
	}
}

// TestInternerWordsAgreeWithBytes: the 16-byte fast path returns what FromC returns, for
// a NUL at every position, bytes after it, invalid UTF-8, and repeats (cache hits).
func TestInternerWordsAgreeWithBytes(t *testing.T) {
	var in Interner
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 200000; i++ {
		var a [16]int8
		for k := range a {
			a[k] = int8('a' + rng.IntN(4))
			if rng.IntN(40) == 0 {
				a[k] = int8(-1 - rng.IntN(100)) // bytes ≥ 0x80: invalid UTF-8 alone
			}
		}
		if nul := rng.IntN(18); nul < 16 {
			a[nul] = 0
		}
		if got, want := in.FromC(a[:]), FromC(a[:]); got != want {
			t.Fatalf("%v: Interner.FromC = %q, FromC = %q", a, got, want)
		}
	}
}
