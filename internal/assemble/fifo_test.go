// The lookaside FIFOs: eviction order, and agreement with the plain definition.
package assemble

import (
	"math/rand/v2"
	"testing"
)

// A fifoMap forgets its oldest insertion first; a replaced key keeps its place, and a
// removed key's slot evicts nothing when it comes round.
func TestFIFOMapOrder(t *testing.T) {
	f := newFIFOMap[int](3)
	f.put(1, 10)
	f.put(2, 20)
	f.put(3, 30)
	f.put(1, 11) // replaced: still the oldest
	f.remove(2)
	f.put(4, 40) // overwrites key 1's slot
	if _, ok := f.get(1); ok {
		t.Fatal("oldest key 1 not evicted")
	}
	f.put(5, 50) // overwrites removed key 2's slot: evicts nothing
	f.put(2, 21) // overwrites key 3's slot
	f.put(6, 60) // overwrites key 4's slot
	for k, want := range map[uint64]int{5: 50, 2: 21, 6: 60} {
		if v, ok := f.get(k); !ok || v != want {
			t.Fatalf("key %d: %d %v, want %d", k, v, ok, want)
		}
	}
	for _, k := range []uint64{3, 4} {
		if _, ok := f.get(k); ok {
			t.Fatalf("key %d not evicted", k)
		}
	}
	if f.len() != 3 {
		t.Fatalf("len %d", f.len())
	}
}

// fifoModel is the plain definition a fifoMap must agree with: a Go map and the insertion
// sequence of each key.
type fifoModel struct {
	m    map[uint64][2]int // key → value, sequence
	ring [][2]uint64       // key, sequence, in insertion order
	cap  int
	next int
	seq  int
}

func (f *fifoModel) put(k uint64, v int) {
	if e, ok := f.m[k]; ok {
		f.m[k] = [2]int{v, e[1]}
		return
	}
	f.seq++
	if len(f.ring) < f.cap {
		f.ring = append(f.ring, [2]uint64{k, uint64(f.seq)})
	} else {
		old := f.ring[f.next]
		if e, ok := f.m[old[0]]; ok && uint64(e[1]) == old[1] {
			delete(f.m, old[0])
		}
		f.ring[f.next] = [2]uint64{k, uint64(f.seq)}
		f.next = (f.next + 1) % f.cap
	}
	f.m[k] = [2]int{v, f.seq}
}

func TestFIFOMapMatchesModel(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, capacity := range []int{1, 7, 64, 1000} {
		f := newFIFOMap[int](capacity)
		ref := &fifoModel{m: map[uint64][2]int{}, cap: capacity}
		keys := 3 * capacity
		for i := 0; i < 100_000; i++ {
			k := uint64(r.IntN(keys)) << 32 // 0 is a key too
			switch r.IntN(5) {
			case 0:
				f.remove(k)
				delete(ref.m, k)
			case 1:
				f.putFirst(k, i)
				if _, ok := ref.m[k]; !ok {
					ref.put(k, i)
				}
			default:
				f.put(k, i)
				ref.put(k, i)
			}
			if f.len() != len(ref.m) {
				t.Fatalf("cap %d op %d: len %d, model %d", capacity, i, f.len(), len(ref.m))
			}
			if i%97 == 0 {
				for k := 0; k < keys; k++ {
					v, ok := f.get(uint64(k) << 32)
					e, want := ref.m[uint64(k)<<32]
					if ok != want || v != e[0] {
						t.Fatalf("cap %d op %d: key %d = %d %v, model %d %v", capacity, i, k, v, ok, e[0], want)
					}
				}
			}
		}
		f.reset()
		if f.len() != 0 {
			t.Fatal("reset left entries")
		}
	}
}
