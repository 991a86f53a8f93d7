// jobIndex: the job indexes by fence (finished fence key, hardware fence, fence pointer),
// looked up several times per event. Open addressing with linear probing and
// backward-shift deletion: a lookup is one multiply and, almost always, one cache line,
// where a Go map probes control words and slots apart. A nil job marks a free slot.

package assemble

import "math/bits"

// minTableSlots is the size of a table's first allocation; it doubles at half load.
const minTableSlots = 16

type jobIndex struct {
	slots []jobSlot
	n     int
	shift uint8 // 64 − log2(len(slots))
}

type jobSlot struct {
	key uint64
	j   *job
}

// home is the slot where k's probe starts (Fibonacci hashing: fence keys are
// sequential in both halves, the multiply spreads them).
func (t *jobIndex) home(k uint64) int {
	return int((k * 0x9e3779b97f4a7c15) >> t.shift)
}

// get returns the job stored for k, or nil.
func (t *jobIndex) get(k uint64) *job {
	if t.n == 0 {
		return nil
	}
	mask := len(t.slots) - 1
	for i := t.home(k); ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.j == nil {
			return nil
		}
		if s.key == k {
			return s.j
		}
	}
}

// put stores j (not nil) for k, replacing any job.
func (t *jobIndex) put(k uint64, j *job) {
	if 2*(t.n+1) > len(t.slots) {
		t.grow()
	}
	mask := len(t.slots) - 1
	for i := t.home(k); ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.j == nil {
			s.key, s.j = k, j
			t.n++
			return
		}
		if s.key == k {
			s.j = j
			return
		}
	}
}

// del removes k, shifting back the entries of its probe run so that no tombstone is left.
func (t *jobIndex) del(k uint64) {
	if i := t.find(k); i >= 0 {
		t.remove(i)
	}
}

// find returns the slot holding k, or −1.
func (t *jobIndex) find(k uint64) int {
	if t.n == 0 {
		return -1
	}
	mask := len(t.slots) - 1
	for i := t.home(k); ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.j == nil {
			return -1
		}
		if s.key == k {
			return i
		}
	}
}

// remove empties slot i, shifting back the entries of its probe run.
func (t *jobIndex) remove(i int) {
	mask := len(t.slots) - 1
	// i is the hole. Move back any later entry of the run whose home is not in (i, j].
	for j := (i + 1) & mask; ; j = (j + 1) & mask {
		s := &t.slots[j]
		if s.j == nil {
			break
		}
		h := t.home(s.key)
		if (j > i && (h <= i || h > j)) || (j < i && h <= i && h > j) {
			t.slots[i] = *s
			i = j
		}
	}
	t.slots[i] = jobSlot{}
	t.n--
}

// delIf removes k when it maps to j: an index entry is removed only by its owner.
func (t *jobIndex) delIf(k uint64, j *job) {
	if i := t.find(k); i >= 0 && t.slots[i].j == j {
		t.remove(i)
	}
}

func (t *jobIndex) len() int { return t.n }

// reset empties the table, keeping its storage.
func (t *jobIndex) reset() {
	clear(t.slots)
	t.n = 0
}

func (t *jobIndex) grow() {
	old := t.slots
	size := max(minTableSlots, 2*len(old))
	t.slots = make([]jobSlot, size)
	t.shift = uint8(64 - bits.TrailingZeros(uint(size)))
	t.n = 0
	for i := range old {
		if old[i].j != nil {
			t.put(old[i].key, old[i].j)
		}
	}
}
