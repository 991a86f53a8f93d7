// Direct-mapped caches in front of the decoder's two per-line map lookups: the event name
// → spec, and the intern table (comm, driver, timeline, ring, device: two to four per
// line). A capture repeats a few dozen names and values, so a slot chosen from the
// length and the first and last eight bytes almost always holds the one asked for, and a
// hit costs one compare instead of hashing every byte and probing a map. A miss falls
// back to the map and takes the slot over; what the decoder returns is the same either way.

package ftrace

import "encoding/binary"

// recentBits is log2 of each cache's size.
const recentBits = 9

const recentSlots = 1 << recentBits

// recentSlot picks the cache slot of b.
func recentSlot(b []byte) int {
	n := len(b)
	var first, last uint64
	if n >= 8 {
		first, last = binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint64(b[n-8:])
	} else {
		for i, c := range b {
			first |= uint64(c) << (8 * i)
		}
	}
	h := (first*0x9e3779b97f4a7c15 ^ last ^ uint64(n)) * 0xff51afd7ed558ccd
	return int(h >> (64 - recentBits))
}

type recentSpec struct {
	name string // as printed: the key of specs
	spec *spec
}

// lookupSpec returns the spec of the event name printed as b.
func (d *Decoder) lookupSpec(b []byte) (*spec, bool) {
	c := &d.recentSpecs[recentSlot(b)]
	if c.spec != nil && c.name == string(b) {
		return c.spec, true
	}
	s, ok := specs[string(b)]
	if ok {
		*c = recentSpec{name: s.eventSpec.name, spec: s}
	}
	return s, ok
}

// intern returns b as a string, the same string for the same bytes while the table has room.
func (d *Decoder) intern(b []byte) string {
	c := &d.recentStrs[recentSlot(b)]
	if *c == string(b) && len(b) > 0 {
		return *c
	}
	s := d.internSlow(b)
	if s == string(b) { // not an invalid comm replaced by its valid form
		*c = s
	}
	return s
}
