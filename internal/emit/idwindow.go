// The collision guard's memory: the job span ids handed out by the last idMemory jobs.
//
// It replaces a general bounded map (recent.go) on the span builder's hot path, one id a
// job (its stage spans' ids derive from it, ids.go): the table holds the ids themselves (open addressing, linear
// probing, half full at most, backward-shift deletion), so a probe compares in the
// slot without reading an entry elsewhere, an absent id is usually one cache line, and an
// insertion reuses nothing but the table. The ring keeps the insertion order for eviction.
// Zero is never a span id (derivedIDs avoids it), so it marks a free slot.

package emit

// idWindow holds the last cap(ring) distinct ids inserted.
type idWindow struct {
	table []uint64 // len a power of two, ≥ 2 × cap(ring); 0: free
	shift uint8    // 64 - log2(len(table))
	ring  []uint64 // insertion order; grows to capacity, then wraps
	next  int      // next ring slot to overwrite once full
}

func newIDWindow(capacity int) *idWindow {
	bits := uint8(2)
	for 1<<bits < 2*capacity {
		bits++
	}
	return &idWindow{table: make([]uint64, 1<<bits), shift: 64 - bits, ring: make([]uint64, 0, capacity)}
}

// home is id's first slot: the top bits of a multiplicative hash (ids are digests or
// mixes already; the multiplication spreads any structure a hostile input could give).
func (w *idWindow) home(id uint64) int { return int((id * 0x9e3779b97f4a7c15) >> w.shift) }

// contains reports whether id is among the ids held.
func (w *idWindow) contains(id uint64) bool {
	mask := len(w.table) - 1
	for i := w.home(id); ; i = (i + 1) & mask {
		switch w.table[i] {
		case id:
			return true
		case 0:
			return false
		}
	}
}

// insert adds id (nothing when it is held already), evicting the oldest id when full.
// One probe finds id or the free slot that ends its run; id goes there, and the oldest
// id is evicted after (the table has room for one more than the ring holds, and the
// eviction's backward shift keeps every run, id's included, without a gap).
func (w *idWindow) insert(id uint64) {
	if id == 0 {
		return
	}
	mask := len(w.table) - 1
	i := w.home(id)
	for {
		switch w.table[i] {
		case id:
			return
		case 0:
			w.table[i] = id
			if len(w.ring) < cap(w.ring) {
				w.ring = append(w.ring, id)
				return
			}
			w.remove(w.ring[w.next])
			w.ring[w.next] = id
			w.next = (w.next + 1) % len(w.ring)
			return
		}
		i = (i + 1) & mask
	}
}

// remove deletes id from the table, shifting back the later ids of its probe run.
func (w *idWindow) remove(id uint64) {
	mask := len(w.table) - 1
	i := w.home(id)
	for w.table[i] != id {
		if w.table[i] == 0 {
			return
		}
		i = (i + 1) & mask
	}
	for j := (i + 1) & mask; w.table[j] != 0; j = (j + 1) & mask {
		// move table[j] into the hole at i unless its home lies cyclically in (i, j]
		if h := w.home(w.table[j]); (j > i && (h <= i || h > j)) || (j < i && h <= i && h > j) {
			w.table[i] = w.table[j]
			i = j
		}
	}
	w.table[i] = 0
}

// len is the number of ids held.
func (w *idWindow) len() int { return len(w.ring) }
