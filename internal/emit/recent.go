// A bounded map of recent entries, evicting the oldest insertion first.
//
// Used for "ids of recently emitted jobs" (links) and "names of recently seen processes"
// (resources). Entries are written once and read while still recent, so eviction by
// insertion order serves as well as least-recently-used and costs no bookkeeping on reads.
//
// It is written for the span builder's hot path (one put per job): the entries live in
// the insertion ring, which puts and evictions walk in order, and a small open-addressed
// index (linear probing, backward-shift deletion, at most half full, 8 bytes a slot)
// holds a fingerprint of each key and its ring position, so a probe reads the ring only
// on a fingerprint match and a deletion needs no ring read at all. A Go map of the same
// size costs a lookup, a delete and an insert, each on cold memory.

package emit

import "github.com/ghostdriver/ghostdriver/internal/event"

// recent holds at most cap(ring) entries. The zero value holds nothing.
type recent[K comparable, V any] struct {
	hash  func(K) uint64
	ring  []recentEntry[K, V] // insertion order; grows to capacity, then wraps
	next  int                 // next slot of ring to overwrite once full
	index []recentSlot        // len a power of two
	bits  uint8               // log2(len(index))
}

type recentEntry[K comparable, V any] struct {
	key K
	v   V
}

// recentSlot is an index slot: the key's fingerprint (the high half of its mixed hash;
// its home slot is the top bits of that) and its ring position + 1 (0: free).
type recentSlot struct {
	fp  uint32
	pos uint32
}

func newRecent[K comparable, V any](capacity int, hash func(K) uint64) *recent[K, V] {
	r := &recent[K, V]{hash: hash}
	if capacity <= 0 {
		return r
	}
	r.bits = 1
	for 1<<r.bits < 2*capacity {
		r.bits++
	}
	r.ring = make([]recentEntry[K, V], 0, capacity)
	r.index = make([]recentSlot, 1<<r.bits)
	return r
}

func (r *recent[K, V]) fingerprint(k K) uint32 {
	return uint32((r.hash(k) * 0x9e3779b97f4a7c15) >> 32)
}

func (r *recent[K, V]) home(fp uint32) int { return int(fp >> (32 - r.bits)) }

// find returns the index slot holding k, or the free slot where k's probe ends.
func (r *recent[K, V]) find(k K, fp uint32) (slot int, found bool) {
	mask := len(r.index) - 1
	for i := r.home(fp); ; i = (i + 1) & mask {
		s := r.index[i]
		if s.pos == 0 {
			return i, false
		}
		if s.fp == fp && r.ring[s.pos-1].key == k {
			return i, true
		}
	}
}

// get returns the value stored for k.
func (r *recent[K, V]) get(k K) (V, bool) {
	if len(r.ring) > 0 {
		if i, ok := r.find(k, r.fingerprint(k)); ok {
			return r.ring[r.index[i].pos-1].v, true
		}
	}
	var zero V
	return zero, false
}

// put stores v for k, evicting the oldest key when full. Re-putting a key updates its
// value in place without refreshing its age.
func (r *recent[K, V]) put(k K, v V) {
	if cap(r.ring) == 0 {
		return
	}
	fp := r.fingerprint(k)
	i, ok := r.find(k, fp)
	if ok {
		r.ring[r.index[i].pos-1].v = v
		return
	}
	at := len(r.ring)
	if at < cap(r.ring) {
		r.ring = append(r.ring, recentEntry[K, V]{key: k, v: v})
	} else {
		at = r.next
		old := r.ring[at].key
		if j, ok := r.find(old, r.fingerprint(old)); ok {
			r.unindex(j)
			i, _ = r.find(k, fp) // the shift may have freed an earlier slot of k's run
		}
		r.ring[at] = recentEntry[K, V]{key: k, v: v}
		r.next = (r.next + 1) % len(r.ring)
	}
	r.index[i] = recentSlot{fp, uint32(at + 1)}
}

// unindex frees slot i, shifting back the later entries of its probe run.
func (r *recent[K, V]) unindex(i int) {
	mask := len(r.index) - 1
	for j := (i + 1) & mask; r.index[j].pos != 0; j = (j + 1) & mask {
		if h := r.home(r.index[j].fp); (j > i && (h <= i || h > j)) || (j < i && h <= i && h > j) {
			r.index[i] = r.index[j]
			i = j
		}
	}
	r.index[i] = recentSlot{}
}

// len is the number of entries held.
func (r *recent[K, V]) len() int { return len(r.ring) }

// hashFence and hashPID are the index hashes of the two kinds of key.
func hashFence(f event.FenceKey) uint64 { return f.Context*0xff51afd7ed558ccd ^ f.Seqno }

func hashPID(pid uint32) uint64 { return uint64(pid) }
