// A bounded map of recent entries, evicting the oldest insertion first.
//
// Used for "ids of recently emitted jobs" (links) and "names of recently seen processes"
// (resources). Entries are written once and read while still recent, so eviction by
// insertion order serves as well as least-recently-used and costs no bookkeeping on reads.
package emit

// recent holds at most cap(order) entries. The zero value holds nothing.
type recent[K comparable, V any] struct {
	m     map[K]V
	order []K // ring of keys in insertion order
	next  int // next slot of order to overwrite once full
}

func newRecent[K comparable, V any](capacity int) *recent[K, V] {
	if capacity < 0 {
		capacity = 0
	}
	return &recent[K, V]{m: make(map[K]V, capacity), order: make([]K, 0, capacity)}
}

// get returns the value stored for k.
func (r *recent[K, V]) get(k K) (V, bool) {
	v, ok := r.m[k]
	return v, ok
}

// put stores v for k, evicting the oldest key when full. Re-putting a key updates its
// value in place without refreshing its age.
func (r *recent[K, V]) put(k K, v V) {
	if cap(r.order) == 0 {
		return
	}
	if _, ok := r.m[k]; ok {
		r.m[k] = v
		return
	}
	if len(r.order) < cap(r.order) {
		r.order = append(r.order, k)
	} else {
		delete(r.m, r.order[r.next])
		r.order[r.next] = k
		r.next = (r.next + 1) % len(r.order)
	}
	r.m[k] = v
}

// len is the number of entries held.
func (r *recent[K, V]) len() int { return len(r.m) }
