// OTEP 4719: header validation, payload decoding, and the reading protocol against fake
// memory that misbehaves the ways a live publisher can.
package appctx

import (
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/ghostdriver/ghostdriver/internal/attr"
	"github.com/ghostdriver/ghostdriver/internal/procfs"
	"reflect"
	"strings"
	"testing"
)

// header lays out the 32-byte OTEL_CTX header.
func header(sig string, version, size uint32, ts, payload uint64) []byte {
	b := make([]byte, ProcessContextHeaderSize)
	copy(b, sig)
	binary.NativeEndian.PutUint32(b[8:], version)
	binary.NativeEndian.PutUint32(b[12:], size)
	binary.NativeEndian.PutUint64(b[16:], ts)
	binary.NativeEndian.PutUint64(b[24:], payload)
	return b
}

// samplePC is what an SDK with OTEP 4947 support publishes (keys as in the OTEP's example).
var samplePC = ProcessContext{
	Resource: []attr.Attribute{
		attr.String("service.name", "trainer"),
		attr.String("service.instance.id", "6f3c1f1e-1b7e-4d53-9a63-2b0e5b6c9d10"),
		attr.String("deployment.environment.name", "prod"),
		attr.Int("process.pid", 4242),
		attr.Bool("ml.distributed", true),
		{Key: "ml.lr", Value: attr.Value{Kind: attr.KindDouble, Double: 3e-4}},
		{Key: "blob", Value: attr.Value{Kind: attr.KindBytes, Bytes: []byte{0, 1, 2}}},
		{Key: "nested", Value: attr.Value{Kind: attr.KindMap, Map: []attr.Attribute{attr.String("a", "b")}}},
	},
	DroppedAttributes: 2,
	Extra: []attr.Attribute{
		attr.String(ThreadLocalSchemaKey, "tlsdesc_v1_dev"),
		{Key: ThreadLocalKeyMapKey, Value: attr.Value{Kind: attr.KindArray, Array: []attr.Value{
			{Kind: attr.KindString, Str: "http_route"}, {Kind: attr.KindString, Str: "http_method"}, {Kind: attr.KindString, Str: "user_id"}}}},
	},
}

func TestDecodeProcessContext(t *testing.T) {
	got, err := DecodeProcessContext(EncodeProcessContext(samplePC))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, samplePC) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", got, samplePC)
	}
	tl := got.ThreadLocal()
	if tl.SchemaVersion != "tlsdesc_v1_dev" || !reflect.DeepEqual(tl.KeyMap, []string{"http_route", "http_method", "user_id"}) {
		t.Errorf("ThreadLocal = %+v", tl)
	}
}

func TestDecodeProcessContextSkipsUnknownAndRejectsMalformed(t *testing.T) {
	good := EncodeProcessContext(ProcessContext{Resource: []attr.Attribute{attr.String("service.name", "x")}})
	// Unknown field 9 (varint) and Resource.entity_refs (3) must be skipped.
	withUnknown := append([]byte{9<<3 | 0, 1}, good...)
	if pc, err := DecodeProcessContext(withUnknown); err != nil || len(pc.Resource) != 1 {
		t.Errorf("unknown field: %+v, %v", pc, err)
	}
	for name, b := range map[string][]byte{
		"truncated length":   good[:len(good)-1],
		"resource as varint": {1<<3 | 0, 5},
		"group wire type":    {1<<3 | 3},
		"bad tag":            {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff},
	} {
		if _, err := DecodeProcessContext(b); !errors.Is(err, ErrProcessContext) {
			t.Errorf("%s: err = %v, want ErrProcessContext", name, err)
		}
	}
	// Nesting is bounded.
	v := attr.Value{Kind: attr.KindString, Str: "leaf"}
	for i := 0; i < 20; i++ {
		v = attr.Value{Kind: attr.KindArray, Array: []attr.Value{v}}
	}
	deep := EncodeProcessContext(ProcessContext{Resource: []attr.Attribute{{Key: "deep", Value: v}}})
	if _, err := DecodeProcessContext(deep); !errors.Is(err, ErrProcessContext) {
		t.Errorf("deep nesting: err = %v", err)
	}
}

func TestParseProcessContextHeader(t *testing.T) {
	if h, err := ParseProcessContextHeader(header("OTEL_CTX", 2, 100, 1234, 0x7f0000001000)); err != nil ||
		h != (ProcessContextHeader{Version: 2, PayloadSize: 100, PublishedAtNs: 1234, Payload: 0x7f0000001000}) {
		t.Errorf("valid header: %+v, %v", h, err)
	}
	cases := map[string]struct {
		b    []byte
		want error
	}{
		"being updated":   {header("OTEL_CTX", 2, 100, 0, 0x1000), ErrContextUpdating},
		"bad signature":   {header("OTEL_CTY", 2, 100, 1, 0x1000), ErrProcessContext},
		"not yet signed":  {header("", 2, 100, 1, 0x1000), ErrProcessContext},
		"version 1":       {header("OTEL_CTX", 1, 100, 1, 0x1000), ErrProcessContext},
		"payload too big": {header("OTEL_CTX", 2, MaxProcessContextPayload+1, 1, 0x1000), ErrProcessContext},
		"null payload":    {header("OTEL_CTX", 2, 100, 1, 0), ErrProcessContext},
		"short":           {header("OTEL_CTX", 2, 100, 1, 0x1000)[:31], ErrProcessContext},
		"payload wraps":   {header("OTEL_CTX", 2, 0x200, 1, 0xffffffffffffff00), ErrProcessContext},
	}
	for name, c := range cases {
		if _, err := ParseProcessContextHeader(c.b); !errors.Is(err, c.want) {
			t.Errorf("%s: err = %v, want %v", name, err, c.want)
		}
	}
}

func TestIsProcessContextMapping(t *testing.T) {
	for name, want := range map[string]bool{
		"[anon_shmem:OTEL_CTX]":     true,
		"[anon:OTEL_CTX]":           true,
		"/memfd:OTEL_CTX":           true,
		"/memfd:OTEL_CTX (deleted)": true,
		"/memfd:OTEL_CTXX":          false,
		"[anon:OTEL_CTX2]":          false,
		"/usr/lib/libOTEL_CTX.so":   false,
		"":                          false,
	} {
		if got := IsProcessContextMapping(name); got != want {
			t.Errorf("IsProcessContextMapping(%q) = %v", name, got)
		}
	}
}

func TestProcessContextCandidates(t *testing.T) {
	maps := mustMaps(t, `55d4c8a00000-55d4c8a21000 rw-p 00000000 00:00 0                          [heap]
7f1c2a400000-7f1c2a402000 r--p 00000000 00:00 0 
7f1c2a600000-7f1c2a602000 r--p 00000000 00:01 2051                       /memfd:OTEL_CTX (deleted)
`)
	if got := ProcessContextCandidates(maps, 4096); !reflect.DeepEqual(got, []uint64{0x7f1c2a600000}) {
		t.Errorf("named mapping wins: %#x", got)
	}
	// Kernel < 5.17: no names, so every read-only private anonymous 2-page mapping is probed.
	if got := ProcessContextCandidates(maps[:2], 4096); !reflect.DeepEqual(got, []uint64{0x7f1c2a400000}) {
		t.Errorf("fallback: %#x", got)
	}
}

// fakeMem serves reads from byte slices at fixed addresses; hook runs before each read.
type fakeMem struct {
	regions map[uint64][]byte
	reads   int
	hook    func(m *fakeMem)
}

func (m *fakeMem) ReadMemory(pid uint32, addr uint64, buf []byte) error {
	m.reads++
	if m.hook != nil {
		m.hook(m)
	}
	for base, b := range m.regions {
		// Written so that a hostile address near 2^64 cannot wrap into the region.
		if addr >= base && addr-base <= uint64(len(b)) && uint64(len(buf)) <= uint64(len(b))-(addr-base) {
			copy(buf, b[addr-base:])
			return nil
		}
	}
	return fmt.Errorf("%w at %#x", ErrShortRead, addr)
}

func TestReadProcessContext(t *testing.T) {
	const hdrAt, payloadAt = 0x7f0000000000, 0x7f0000000020
	payload := EncodeProcessContext(samplePC)
	published := header("OTEL_CTX", 2, uint32(len(payload)), 99, payloadAt)
	mapping := func(h []byte) map[uint64][]byte {
		return map[uint64][]byte{hdrAt: append(append([]byte(nil), h...), payload...)}
	}

	t.Run("published", func(t *testing.T) {
		mem := &fakeMem{regions: mapping(published)}
		pc, err := ReadProcessContext(mem, 1, hdrAt)
		if err != nil || !reflect.DeepEqual(pc, samplePC) || mem.reads != 3 {
			t.Fatalf("%+v, %v after %d reads; want the sample after header, payload, header", pc, err, mem.reads)
		}
	})
	t.Run("mid-update then published", func(t *testing.T) {
		mem := &fakeMem{regions: mapping(header("OTEL_CTX", 2, 0, 0, 0))}
		mem.hook = func(m *fakeMem) {
			if m.reads == 2 {
				m.regions = mapping(published)
			}
		}
		if pc, err := ReadProcessContext(mem, 1, hdrAt); err != nil || pc.Resource[0].Value.Str != "trainer" {
			t.Fatalf("%+v, %v", pc, err)
		}
	})
	t.Run("republished while reading", func(t *testing.T) {
		mem := &fakeMem{regions: mapping(published)}
		mem.hook = func(m *fakeMem) { // every header re-read sees a newer timestamp
			if m.reads%3 == 0 {
				m.regions = mapping(header("OTEL_CTX", 2, uint32(len(payload)), uint64(100+m.reads), payloadAt))
			}
		}
		if _, err := ReadProcessContext(mem, 1, hdrAt); !errors.Is(err, ErrContextUpdating) {
			t.Fatalf("err = %v, want ErrContextUpdating", err)
		}
	})
	t.Run("always updating", func(t *testing.T) {
		mem := &fakeMem{regions: mapping(header("OTEL_CTX", 2, 0, 0, 0))}
		if _, err := ReadProcessContext(mem, 1, hdrAt); !errors.Is(err, ErrContextUpdating) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("payload pointer into unmapped memory", func(t *testing.T) {
		mem := &fakeMem{regions: map[uint64][]byte{hdrAt: header("OTEL_CTX", 2, 10, 1, 0xdead0000)}}
		if _, err := ReadProcessContext(mem, 1, hdrAt); !errors.Is(err, ErrShortRead) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("oversized payload is not read", func(t *testing.T) {
		mem := &fakeMem{regions: mapping(header("OTEL_CTX", 2, 1<<30, 1, payloadAt))}
		if _, err := ReadProcessContext(mem, 1, hdrAt); !errors.Is(err, ErrProcessContext) || mem.reads != 1 {
			t.Fatalf("err = %v after %d reads", err, mem.reads)
		}
	})
}

func mustMaps(t *testing.T, s string) []procfs.Mapping {
	t.Helper()
	m, err := procfs.ParseMaps(strings.NewReader(s))
	if err != nil {
		t.Fatal(err)
	}
	return m
}
