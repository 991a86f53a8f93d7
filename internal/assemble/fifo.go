// fifoMap: the bounded lookaside tables (recent fence signals, owners of recently output
// jobs' fences, dependencies announced before their job was queued, submission streams).
//
// They hold thousands of fences each and see a new key per fence event, so they are laid
// out for the cache: the entries live in the insertion ring, which both puts and
// evictions walk in order, and the index is small (8 bytes a slot, at most half full:
// 128 KiB at 8192 entries) and holds a fingerprint of each key, so a probe reads the
// ring only on a fingerprint match and a deletion needs no ring read at all.

package assemble

import "math/bits"

// fifoMap is a map with a fixed capacity that forgets its oldest insertions first.
type fifoMap[V any] struct {
	ring  []fifoEntry[V] // insertion order; grows to capacity, then wraps
	cap   int
	next  int
	index []fifoSlot // len a power of two, or 0 before the first put
	n     int
	bits  uint8 // log2(len(index))
}

type fifoEntry[V any] struct {
	key uint64
	v   V
}

// fifoSlot is an index slot: the high half of the key's hash (its home slot is the top
// bits of that) and its ring position + 1 (0: free).
type fifoSlot struct {
	fp  uint32
	pos uint32
}

// newFIFOMap returns an empty table of the given capacity. Nothing is allocated up
// front: the table grows with what it holds (an assembler that sees few fences does
// not pay for 8192 of them).
func newFIFOMap[V any](capacity int) *fifoMap[V] {
	return &fifoMap[V]{cap: max(capacity, 1)}
}

func fingerprint(k uint64) uint32 { return uint32((k * 0x9e3779b97f4a7c15) >> 32) }

func (f *fifoMap[V]) home(fp uint32) int { return int(fp >> (32 - f.bits)) }

// find returns the index slot of k, or −1.
func (f *fifoMap[V]) find(k uint64) int {
	if f.n == 0 {
		return -1
	}
	fp := fingerprint(k)
	mask := len(f.index) - 1
	for i := f.home(fp); ; i = (i + 1) & mask {
		s := f.index[i]
		if s.pos == 0 {
			return -1
		}
		if s.fp == fp && f.ring[s.pos-1].key == k {
			return i
		}
	}
}

// at is the value of the entry in index slot i (from find), to read or replace in place.
func (f *fifoMap[V]) at(i int) *V { return &f.ring[f.index[i].pos-1].v }

// put inserts or replaces k. A replaced key keeps its place in the eviction order.
func (f *fifoMap[V]) put(k uint64, v V) {
	if i := f.find(k); i >= 0 {
		f.ring[f.index[i].pos-1].v = v
		return
	}
	f.add(k, v)
}

// putFirst inserts k unless it is there: the first value put stays.
func (f *fifoMap[V]) putFirst(k uint64, v V) {
	if f.find(k) < 0 {
		f.add(k, v)
	}
}

// add inserts k, which is not there, evicting the oldest entry when full.
func (f *fifoMap[V]) add(k uint64, v V) {
	var at int
	if len(f.ring) < f.cap {
		f.ring = append(f.ring, fifoEntry[V]{key: k, v: v})
		at = len(f.ring) - 1
	} else {
		at = f.next
		// the oldest entry, unless it was removed (and maybe put again) since
		if i := f.find(f.ring[at].key); i >= 0 && int(f.index[i].pos) == at+1 {
			f.unindex(i)
		}
		f.ring[at] = fifoEntry[V]{key: k, v: v}
		if f.next++; f.next == f.cap {
			f.next = 0
		}
	}
	f.insert(fingerprint(k), uint32(at+1))
}

func (f *fifoMap[V]) insert(fp, pos uint32) {
	if 2*(f.n+1) > len(f.index) {
		f.grow()
	}
	mask := len(f.index) - 1
	i := f.home(fp)
	for f.index[i].pos != 0 {
		i = (i + 1) & mask
	}
	f.index[i] = fifoSlot{fp, pos}
	f.n++
}

// unindex frees slot i, shifting back the later entries of its probe run (linear
// probing without tombstones).
func (f *fifoMap[V]) unindex(i int) {
	mask := len(f.index) - 1
	for j := (i + 1) & mask; f.index[j].pos != 0; j = (j + 1) & mask {
		if h := f.home(f.index[j].fp); (j > i && (h <= i || h > j)) || (j < i && h <= i && h > j) {
			f.index[i] = f.index[j]
			i = j
		}
	}
	f.index[i] = fifoSlot{}
	f.n--
}

func (f *fifoMap[V]) grow() {
	old := f.index
	size := max(minTableSlots, 2*len(old))
	f.index = make([]fifoSlot, size)
	f.bits = uint8(bits.TrailingZeros(uint(size)))
	f.n = 0
	for _, s := range old {
		if s.pos != 0 {
			f.insert(s.fp, s.pos)
		}
	}
}

func (f *fifoMap[V]) get(k uint64) (V, bool) {
	if i := f.find(k); i >= 0 {
		return f.ring[f.index[i].pos-1].v, true
	}
	var zero V
	return zero, false
}

func (f *fifoMap[V]) remove(k uint64) {
	if i := f.find(k); i >= 0 {
		f.unindex(i)
	}
}

func (f *fifoMap[V]) len() int { return f.n }

func (f *fifoMap[V]) reset() {
	clear(f.index)
	f.n = 0
	clear(f.ring) // drop the hooks and dependency slices the entries hold
	f.ring = f.ring[:0]
	f.next = 0
}
