// idWindow against a plain model (a Go map and the insertion queue): after every insertion
// both hold the same ids, for random ids from a small domain (repeats, evictions, ring
// wraps) and for ids built to share one home slot (long probe runs that wrap around the
// table's end, deletions from their middle).
package emit

import (
	"math/rand/v2"
	"testing"
)

type idModel struct {
	held  map[uint64]bool
	order []uint64
	cap   int
}

func (m *idModel) insert(id uint64) {
	if m.held[id] {
		return
	}
	if len(m.order) == m.cap {
		delete(m.held, m.order[0])
		m.order = m.order[1:]
	}
	m.held[id] = true
	m.order = append(m.order, id)
}

func TestIDWindowMatchesModel(t *testing.T) {
	const capacity = 64
	// colliding: ids whose multiplicative hash has the same top bits (home slot) or
	// neighbouring ones near the table's end; inv is the inverse of the hash multiplier.
	const inv = 0xf1de83e19937733d
	if mult := uint64(0x9e3779b97f4a7c15); mult*inv != 1 {
		t.Fatal("inverse multiplier wrong")
	}
	w := newIDWindow(capacity)
	homes := len(w.table)
	for name, draw := range map[string]func(r *rand.Rand) uint64{
		"random": func(r *rand.Rand) uint64 { return 1 + r.Uint64N(300) },
		"colliding": func(r *rand.Rand) uint64 {
			home := uint64(homes - 1 - r.IntN(3)) // the last slots: runs wrap to slot 0
			low := r.Uint64N(40)                  // below the home bits: same home
			return (home<<w.shift | low) * inv
		},
	} {
		t.Run(name, func(t *testing.T) {
			w := newIDWindow(capacity)
			m := &idModel{held: map[uint64]bool{}, cap: capacity}
			r := rand.New(rand.NewPCG(1, 2))
			var seen []uint64
			for step := 0; step < 20000; step++ {
				id := draw(r)
				if id == 0 {
					continue
				}
				if name == "colliding" && w.home(id) < homes-3 {
					t.Fatalf("id %#x has home %d, not one of the last 3 of %d", id, w.home(id), homes)
				}
				seen = append(seen, id)
				w.insert(id)
				m.insert(id)
				if w.len() != len(m.order) {
					t.Fatalf("step %d: %d ids held, model %d", step, w.len(), len(m.order))
				}
				for _, x := range seen[max(0, len(seen)-400):] {
					if w.contains(x) != m.held[x] {
						t.Fatalf("step %d: contains(%#x) = %v, model %v", step, x, w.contains(x), m.held[x])
					}
				}
			}
		})
	}
}
