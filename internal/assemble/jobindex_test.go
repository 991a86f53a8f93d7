// The job index against a Go map.
package assemble

import (
	"math/rand/v2"
	"testing"
)

// The job index agrees with a Go map under any mix of puts, replaces and deletes,
// including keys that share their probe runs and runs that wrap around the end.
func TestJobIndexMatchesMap(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	jobs := make([]job, 1000)
	var tab jobIndex
	ref := map[uint64]*job{}
	for i := 0; i < 200_000; i++ {
		// few distinct keys, so that runs collide and deletes hit present keys; 0 is a key too
		k := uint64(r.IntN(300)) << 32
		switch r.IntN(3) {
		case 0, 1:
			v := &jobs[r.IntN(len(jobs))]
			tab.put(k, v)
			ref[k] = v
		case 2:
			tab.del(k)
			delete(ref, k)
		}
		if i%1000 == 0 || tab.len() != len(ref) {
			if tab.len() != len(ref) {
				t.Fatalf("op %d: len %d, map %d", i, tab.len(), len(ref))
			}
			for k := uint64(0); k < 300; k++ {
				if got, want := tab.get(k<<32), ref[k<<32]; got != want {
					t.Fatalf("op %d: key %#x: %p, map %p", i, k<<32, got, want)
				}
			}
		}
	}
	tab.reset()
	if tab.len() != 0 || tab.get(0) != nil {
		t.Fatal("reset left entries")
	}
}
