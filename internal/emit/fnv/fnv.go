// Package fnv is the FNV-1a 64 hash behind every deterministic span and trace id the
// receiver emits (DRM jobs in internal/emit, CUDA submissions in internal/emit/cudaspans):
// one definition, so the two id schemes cannot drift apart.
package fnv

const (
	offset64 = 14695981039346656037
	prime64  = 1099511628211
)

// Hash is an FNV-1a 64 state; methods return the updated state.
type Hash uint64

// New returns the initial state.
func New() Hash { return offset64 }

// Byte mixes one byte.
func (h Hash) Byte(b byte) Hash { return (h ^ Hash(b)) * prime64 }

// U64 mixes v in little-endian byte order.
func (h Hash) U64(v uint64) Hash {
	for i := 0; i < 8; i++ {
		h = h.Byte(byte(v))
		v >>= 8
	}
	return h
}

// Str mixes s followed by its length, so adjacent strings cannot run into each other.
func (h Hash) Str(s string) Hash {
	for i := 0; i < len(s); i++ {
		h = h.Byte(s[i])
	}
	return h.U64(uint64(len(s)))
}
