// Known answers for the id derivation, computed outside Go (coreutils' sha256sum over the
// byte layout written out by hand, printf '...' | sha256sum, the commands are in each case;
// SplitMix64's published outputs), so the test does not restate the code; and the
// properties the emitters rely on.
package ids

import (
	"encoding/hex"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestKnownAnswers(t *testing.T) {
	// printf 'F\x00\x00\x00\x00\x00\x00\x00\x00\xd2\x04\x00\x00\x00\x00\x00\x00\x38\x00\x00\x00\x00\x00\x00\x00' | sha256sum
	// (tag F, salt 0, fence context 1234, seqno 56, each little-endian 64-bit)
	const fence = "2c5a3b35eaf7385e7ee0f361c5c6a296f9961fdf54c1f2c59af7b04019873377"
	var buf [32]byte
	id := New(buf[:], TagFence).U64(0).U64(1234).U64(56).Identity()
	if got := hex.EncodeToString(id[:]); got != fence {
		t.Fatalf("fence identity %s, sha256sum says %s", got, fence)
	}
	if tr, want := id.TraceID(), mustHex(t, fence[:32]); string(tr[:]) != string(want) {
		t.Errorf("trace id %x, want the digest's first 16 bytes %x", tr, want)
	}
	if sp, want := id.SpanID(), mustHex(t, fence[32:48]); string(sp[:]) != string(want) {
		t.Errorf("span id %x, want the digest's bytes 16-23 %x", sp, want)
	}

	// Children: SplitMix64's mix. Its reference generator seeded with 0 outputs
	// 0xe220a8397b1dcdaf, 0x6e789e6aa1b965f4 first (mix of 1 and 2 times 0x9e3779b97f4a7c15, mod 2^64);
	// the call child was computed with Python's integers from the same published constants.
	if mix64(0x9e3779b97f4a7c15) != 0xe220a8397b1dcdaf || mix64(0x3c6ef372fe94f82a) != 0x6e789e6aa1b965f4 {
		t.Errorf("mix64 is not SplitMix64's output function")
	}
	if got, want := Child(id.SpanID(), TagOp, 7), mustHex(t, "778ecdab4b792e9a"); string(got[:]) != string(want) {
		t.Errorf("call child %x, want %x", got, want)
	}

	// printf 'o<the 32 digest bytes above>\x01\x00\x00\x00\x00\x00\x00\x00' | sha256sum
	occ := id.Occurrence(1)
	if got, want := hex.EncodeToString(occ[:]), "217369de41c43d621bf5a051a3664977503c88dab3c207362881aa7c6358988b"; got != want {
		t.Errorf("occurrence 1 %s, want %s", got, want)
	}

	// printf 'Jamd\x03\x00\x00\x00\x00\x00\x00\x00' | sha256sum (a string and its length)
	str := New(nil, TagJob).Str("amd").Identity()
	if got, want := hex.EncodeToString(str[:]), "3d7dc69715890be2354bdd991e1e2a6a7ae6948c664d3a6a7d5d395bc024cc97"; got != want {
		t.Errorf("string field %s, want %s", got, want)
	}
}

// The trace id carries 128 bits of the input: identities that differ anywhere differ in
// both halves of the trace id (not one 64-bit value spread over 16 bytes).
func TestTraceIDHalvesIndependent(t *testing.T) {
	hi := map[[8]byte]bool{}
	lo := map[[8]byte]bool{}
	for seq := uint64(0); seq < 1<<16; seq++ {
		tr := New(nil, TagFence).U64(7).U64(1).U64(seq).Identity().TraceID()
		var h, l [8]byte
		copy(h[:], tr[:8])
		copy(l[:], tr[8:])
		if hi[h] || lo[l] {
			t.Fatalf("seqno %d: a trace id half repeats", seq)
		}
		hi[h], lo[l] = true, true
	}
}

// Tags keep the derivations apart, strings cannot run into each other, and nothing is
// ever the all-zero "absent" id.
func TestSeparation(t *testing.T) {
	a := New(nil, TagFence).U64(1).U64(2).U64(3).Identity()
	b := New(nil, TagSubmission).U64(1).U64(2).U64(3).Identity()
	if a == b || a.TraceID() == b.TraceID() || a.SpanID() == b.SpanID() {
		t.Error("two tags over the same fields give the same ids")
	}
	if New(nil, TagJob).Str("ab").Str("c").Identity() == New(nil, TagJob).Str("a").Str("bc").Identity() {
		t.Error("adjacent strings run into each other")
	}
	p := a.SpanID()
	if Child(p, TagOp, 0) == Child(p, TagSync, 0) || Child(p, TagOp, 0) == Child(p, TagOp, 1) {
		t.Error("children of one parent share an id")
	}
	var zero Identity
	if zero.TraceID() == (pcommon.TraceID{}) || zero.SpanID() == (pcommon.SpanID{}) {
		t.Error("an all-zero digest gives an absent id")
	}
}

func TestNoAllocations(t *testing.T) {
	var sink pcommon.SpanID
	n := testing.AllocsPerRun(100, func() {
		var buf [64]byte
		id := New(buf[:], TagFence).U64(1).U64(2).U64(3).Identity()
		sink = Child(id.Occurrence(1).SpanID(), TagOp, 3)
	})
	_ = sink
	if n != 0 {
		t.Errorf("%v allocations per derivation", n)
	}
}
