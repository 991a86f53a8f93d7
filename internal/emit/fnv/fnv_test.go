package fnv

import (
	"hash/fnv"
	"testing"
)

// The hand-rolled state agrees with the standard library's FNV-1a 64.
func TestMatchesStdlib(t *testing.T) {
	std := fnv.New64a()
	std.Write([]byte{'J', 1, 0, 0, 0, 0, 0, 0, 0, 'a', 'b', 2, 0, 0, 0, 0, 0, 0, 0})
	got := New().Byte('J').U64(1).Str("ab")
	if uint64(got) != std.Sum64() {
		t.Fatalf("got %x, want %x", uint64(got), std.Sum64())
	}
}
