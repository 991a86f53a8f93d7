// What the JobEncoder's JSON spans repeat, encoded once: the job's trace id and span id
// in hex (a job's stage spans carry both again), string values that come back as the
// same string (stage rules, ring and thread names, outcomes: the assembler and the
// decoder hand out one string for each), and recent timestamps (a stage often starts
// where the one before it ended).
package emit

import (
	"strconv"
	"unsafe"
)

// jsonCache belongs to one JobEncoder.
type jsonCache struct {
	strs  [64]cachedString
	times [8]cachedTime
	next  int // next times slot to replace
}

// cachedString is a string and its JSON form. Keeping s keeps its memory from being
// reused for another string at the same address while the entry lives.
type cachedString struct {
	s   string
	enc []byte
}

type cachedTime struct {
	v   uint64
	enc []byte // "digits" with the quotes
}

// appendString appends s as appendString does, from the cache when s is the very string
// (same address and length) seen last in its slot.
func (c *jsonCache) appendString(dst []byte, s string) []byte {
	if len(s) < 8 || c == nil {
		return appendString(dst, s)
	}
	p := unsafe.StringData(s)
	e := &c.strs[(uintptr(unsafe.Pointer(p))>>3^uintptr(len(s)))&(uintptr(len(c.strs))-1)]
	if len(e.s) != len(s) || unsafe.StringData(e.s) != p {
		e.s, e.enc = s, appendString(e.enc[:0], s)
	}
	return append(dst, e.enc...)
}

// appendQuotedUint appends v as appendQuotedUint does, from the recent values.
func (c *jsonCache) appendQuotedUint(dst []byte, v uint64) []byte {
	if c == nil {
		return appendQuotedUint(dst, v)
	}
	for i := range c.times {
		if t := &c.times[i]; t.v == v && t.enc != nil {
			return append(dst, t.enc...)
		}
	}
	t := &c.times[c.next]
	c.next = (c.next + 1) % len(c.times)
	t.v = v
	t.enc = append(strconv.AppendUint(append(t.enc[:0], '"'), v, 10), '"')
	return append(dst, t.enc...)
}
