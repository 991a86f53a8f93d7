// The JobEncoder's string attributes of its own (driver, device, ring, thread name,
// outcome, context tier, stage source and rule, dependency wait), encoded once per value:
// the same few values come back on every job and every stage span, and copying a
// KeyValue's bytes costs less than writing its lengths, its escaping and its key again.

package emit

import (
	"unsafe"

	"github.com/ghostdriver/ghostdriver/internal/assemble"
)

// The caches' sizes: a few dozen values and (source, rule) pairs are in use at a time.
const (
	kvSlotBits    = 8
	stageSlotBits = 6
)

// kvCache holds recent (key, string value) pairs in one format. Direct-mapped: a slot
// is chosen by the value's address (the decoder and the assembler hand out one string per
// value) and checked by content, so a value met at another address is only a miss, and
// memory reused for other bytes never brings back a stale encoding.
type kvCache struct {
	format Format
	slots  [1 << kvSlotBits]kvSlot
}

type kvSlot struct {
	k   *attrKey
	val []byte // a copy of the value
	enc []byte // protobuf: the KeyValue's length and content (no tag); JSON: the object
}

// get returns the encoded KeyValue of key k and value s.
func (c *kvCache) get(k *attrKey, s string) []byte {
	e := &c.slots[slotOf(uintptr(unsafe.Pointer(k)), s, kvSlotBits)]
	if e.k == k && string(e.val) == s {
		return e.enc
	}
	e.k, e.val = k, append(e.val[:0], s...)
	if c.format == FormatProto {
		a := strAttr(k, s)
		e.enc = appendOwnAttrProto(e.enc[:0], &a)
	} else {
		e.enc = append(appendString(append(append(e.enc[:0], k.json...), `{"stringValue":`...), s), '}', '}')
	}
	return e.enc
}

// stageAttrs holds the attributes of recent stage spans, which depend on a stage's
// stageKey only (spanmodel.go): the whole attributes field(s) of a key, encoded once.
type stageAttrs struct {
	format Format
	slots  [1 << stageSlotBits]stageAttrsSlot
	key    stageKey // scratch: the key being encoded (a pointer to it does not escape)
}

type stageAttrsSlot struct {
	src  assemble.Provenance
	rule []byte // a copy
	enc  []byte // protobuf: the KeyValue fields; JSON: `,"attributes":[…]`
	set  bool
}

// holds reports whether the slot holds key k (every field of stageKey compared).
func (e *stageAttrsSlot) holds(k *stageKey) bool {
	return e.set && e.src == k.src && string(e.rule) == k.rule
}

// get returns the encoded attributes of a stage span of key k.
func (c *stageAttrs) get(k stageKey) []byte {
	e := &c.slots[slotOf(uintptr(k.src), k.rule, stageSlotBits)]
	if e.holds(&k) {
		return e.enc
	}
	e.set, e.src, e.rule = true, k.src, append(e.rule[:0], k.rule...)
	var buf [len(stageAttributes)]spanAttr
	c.key = k
	attrs := appendOwnAttrs(buf[:0], stageAttributes[:], &c.key)
	if c.format == FormatProto {
		e.enc = e.enc[:0]
		for i := range attrs {
			e.enc = appendSpanAttrProto(e.enc, 0x4a, &attrs[i], nil)
		}
	} else {
		e.enc = appendSpanAttrsJSON(append(e.enc[:0], `,"attributes":`...), attrs, nil)
	}
	return e.enc
}

// slotOf is the slot, of 2^bits, of value s with key k: the top bits of a
// multiplicative hash of s's address and length and of k.
func slotOf(k uintptr, s string, bits uint) uintptr {
	h := uint64(uintptr(unsafe.Pointer(unsafe.StringData(s)))) ^ uint64(len(s))<<48 ^ uint64(k)*0xff51afd7ed558ccd
	return uintptr((h * 0x9e3779b97f4a7c15) >> (64 - bits))
}
