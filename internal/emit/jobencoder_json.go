// What the JobEncoder's JSON spans repeat, encoded once: the seconds of recent timestamps
// (a job's spans start and end within the same few seconds, so only their last nine
// digits need formatting).

package emit

import "strconv"

// jsonCache belongs to one JobEncoder.
type jsonCache struct {
	sec    uint64 // the seconds (value / 1e9) that secEnc holds; 0: none
	secEnc []byte // `"` and sec's digits
}

// digitPairs are "00" to "99", two bytes each.
const digitPairs = "00010203040506070809101112131415161718192021222324252627282930313233343536373839" +
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879" +
	"8081828384858687888990919293949596979899"

// appendQuotedUint appends v as appendQuotedUint does: v's digits are its seconds' digits
// (from the cache) followed by its nanoseconds' nine, zero-padded.
func (c *jsonCache) appendQuotedUint(dst []byte, v uint64) []byte {
	sec, ns := v/1e9, uint32(v%1e9)
	if c == nil || sec == 0 {
		return appendQuotedUint(dst, v)
	}
	if sec != c.sec {
		c.sec = sec
		c.secEnc = strconv.AppendUint(append(c.secEnc[:0], '"'), sec, 10)
	}
	dst = append(dst, c.secEnc...)
	n := len(dst)
	dst = append(dst, `000000000"`...)
	b := dst[n : n+10]
	for i := 8; i > 0; i -= 2 {
		q := ns / 100
		r := (ns - q*100) * 2
		b[i-1], b[i] = digitPairs[r], digitPairs[r+1]
		ns = q
	}
	b[0] = byte('0' + ns)
	return dst
}
