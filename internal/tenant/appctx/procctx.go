// OTEP 4719 process context: the OTEL_CTX mapping's header and the reading protocol.
//
//	offset  size  field
//	0       8     signature "OTEL_CTX" (written last by the publisher)
//	8       4     version, host-endian; 2
//	12      4     payload_size
//	16      8     monotonic_published_at_ns (0 while the publisher is updating)
//	24      8     payload pointer (in the publisher's address space)

package appctx

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/ghostdriver/ghostdriver/internal/procfs"
)

const (
	ProcessContextHeaderSize = 32
	ProcessContextVersion    = 2
	// MaxProcessContextPayload bounds what we copy out of another process. Real payloads
	// are a few hundred bytes to a few KiB; the publishers' own limits are larger, but a
	// resource this size is not something to attach to every span.
	MaxProcessContextPayload = 64 << 10
	processContextSignature  = "OTEL_CTX"
)

// Errors of the process-context reading protocol.
var (
	ErrNoProcessContext = errors.New("no OTEL_CTX process context")
	ErrContextUpdating  = errors.New("process context is being updated")
	ErrProcessContext   = errors.New("invalid process context")
)

// ProcessContextHeader is a validated header.
type ProcessContextHeader struct {
	Version       uint32
	PayloadSize   uint32
	PublishedAtNs uint64
	Payload       uint64
}

// ParseProcessContextHeader validates the 32-byte header: signature, version 2, a payload
// pointer, payload_size ≤ MaxProcessContextPayload. A zero timestamp yields
// ErrContextUpdating (retry later); the rest wrap ErrProcessContext.
func ParseProcessContextHeader(b []byte) (ProcessContextHeader, error) {
	var h ProcessContextHeader
	if len(b) < ProcessContextHeaderSize {
		return h, fmt.Errorf("%w: header of %d bytes", ErrProcessContext, len(b))
	}
	if string(b[0:8]) != processContextSignature {
		return h, fmt.Errorf("%w: signature %q", ErrProcessContext, b[0:8])
	}
	ne := binary.NativeEndian
	h = ProcessContextHeader{
		Version:       ne.Uint32(b[8:12]),
		PayloadSize:   ne.Uint32(b[12:16]),
		PublishedAtNs: ne.Uint64(b[16:24]),
		Payload:       ne.Uint64(b[24:32]),
	}
	switch {
	case h.Version != ProcessContextVersion:
		return h, fmt.Errorf("%w: version %d, supported %d", ErrProcessContext, h.Version, ProcessContextVersion)
	case h.PublishedAtNs == 0:
		return h, ErrContextUpdating
	case h.PayloadSize > MaxProcessContextPayload:
		return h, fmt.Errorf("%w: payload of %d bytes exceeds %d", ErrProcessContext, h.PayloadSize, MaxProcessContextPayload)
	case h.Payload == 0 && h.PayloadSize > 0:
		return h, fmt.Errorf("%w: null payload pointer", ErrProcessContext)
	case h.Payload > math.MaxUint64-uint64(h.PayloadSize):
		return h, fmt.Errorf("%w: payload at %#x of %d bytes wraps the address space", ErrProcessContext, h.Payload, h.PayloadSize)
	}
	return h, nil
}

// IsProcessContextMapping reports whether a /proc/<pid>/maps pathname names an OTEL_CTX
// mapping: "[anon_shmem:OTEL_CTX]" (shared anonymous), "[anon:OTEL_CTX]" (private
// anonymous, PR_SET_VMA_ANON_NAME) or "/memfd:OTEL_CTX" (memfd, possibly " (deleted)").
func IsProcessContextMapping(path string) bool {
	switch path {
	case "[anon_shmem:OTEL_CTX]", "[anon:OTEL_CTX]":
		return true
	}
	return strings.HasPrefix(path, "/memfd:OTEL_CTX") &&
		(len(path) == len("/memfd:OTEL_CTX") || path[len("/memfd:OTEL_CTX")] == ' ')
}

// ProcessContextCandidates returns the start addresses to probe for a process context:
// the named mappings, or — on kernels without anonymous VMA names (< 5.17) — unnamed
// read-only private anonymous mappings of exactly two pages, as OTEP 4719's fallback
// says. At most 16 fallback candidates are returned; the signature check decides.
func ProcessContextCandidates(maps []procfs.Mapping, pageSize uint64) []uint64 {
	var named, unnamed []uint64
	for _, m := range maps {
		if IsProcessContextMapping(m.Path) {
			named = append(named, m.Start)
			continue
		}
		if m.Path == "" && m.Inode == 0 && m.Perms == "r--p" && m.End-m.Start == 2*pageSize && len(unnamed) < 16 {
			unnamed = append(unnamed, m.Start)
		}
	}
	if len(named) > 0 {
		return named
	}
	return unnamed
}

// ReadProcessContext runs the reading protocol against the mapping at addr: header,
// payload, header again (must be unchanged), decode. A header caught mid-update is
// retried a few times, then ErrContextUpdating is returned.
func ReadProcessContext(mem MemReader, pid uint32, addr uint64) (ProcessContext, error) {
	const attempts = 4
	var hb, hb2 [ProcessContextHeaderSize]byte
	for try := 0; try < attempts; try++ {
		if try > 0 {
			time.Sleep(time.Duration(try) * 200 * time.Microsecond)
		}
		if err := mem.ReadMemory(pid, addr, hb[:]); err != nil {
			return ProcessContext{}, err
		}
		h, err := ParseProcessContextHeader(hb[:])
		if errors.Is(err, ErrContextUpdating) {
			continue
		}
		if err != nil {
			return ProcessContext{}, err
		}
		payload := make([]byte, h.PayloadSize)
		if len(payload) > 0 {
			if err := mem.ReadMemory(pid, h.Payload, payload); err != nil {
				return ProcessContext{}, fmt.Errorf("reading process context payload: %w", err)
			}
		}
		if err := mem.ReadMemory(pid, addr, hb2[:]); err != nil {
			return ProcessContext{}, err
		}
		if !bytes.Equal(hb[:], hb2[:]) {
			continue // republished while we read: start over
		}
		return DecodeProcessContext(payload)
	}
	return ProcessContext{}, ErrContextUpdating
}
