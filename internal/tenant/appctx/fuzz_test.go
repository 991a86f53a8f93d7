// Fuzz targets for every parser that reads another process's bytes. Seed corpora live in
// testdata/fuzz/<target>/ (real records and headers); run e.g.
//
//	go test ./internal/tenant/appctx -run '^$' -fuzz FuzzParseThreadContext -fuzztime 60s
package appctx

import (
	"bytes"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ghostdriver/ghostdriver/internal/procfs"
)

func FuzzParseThreadContext(f *testing.F) {
	f.Add(record(1, 0xab, 0xcd, 1, []byte{0, 3, 'G', 'E', 'T'}, 5))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := ParseThreadContext(b)
		if err != nil {
			return
		}
		for _, a := range c.Attrs {
			if !utf8.ValidString(a.Value) {
				t.Fatalf("invalid UTF-8 value %q", a.Value)
			}
		}
		if c.Valid && len(c.Attrs) > (MaxThreadContextSize-ThreadContextHeaderSize)/2 {
			t.Fatalf("%d attributes from a %d-byte record", len(c.Attrs), len(b))
		}
		if !c.Valid && len(c.Attrs) > 0 {
			t.Fatal("attributes on an invalid record")
		}
	})
}

func FuzzParseTraceParent(f *testing.F) {
	f.Add("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	f.Fuzz(func(t *testing.T, s string) {
		tp, err := ParseTraceParent(s)
		if err != nil {
			return
		}
		again, err := ParseTraceParent(tp.String())
		if err != nil || again != tp {
			t.Fatalf("%q → %v does not round-trip: %v %v", s, tp, again, err)
		}
		if tp.Version == 0 && tp.String() != strings.Trim(s, " \t") {
			t.Fatalf("version 00 %q re-renders as %q", s, tp.String())
		}
	})
}

// FuzzProcessContext: the first 32 bytes are the header, the rest the payload; the whole
// input is also served as the target's memory at 0x1000 for the reading protocol.
func FuzzProcessContext(f *testing.F) {
	payload := EncodeProcessContext(samplePC)
	f.Add(append(header("OTEL_CTX", 2, uint32(len(payload)), 1, 0x1000+ProcessContextHeaderSize), payload...))
	f.Fuzz(func(t *testing.T, b []byte) {
		ParseProcessContextHeader(b)
		if len(b) >= ProcessContextHeaderSize {
			pc, err := DecodeProcessContext(b[ProcessContextHeaderSize:])
			if err == nil {
				// Decoding is stable: what we decoded re-encodes to something that decodes the same.
				enc := EncodeProcessContext(pc)
				pc2, err := DecodeProcessContext(enc)
				if err != nil || !bytes.Equal(EncodeProcessContext(pc2), enc) {
					t.Fatalf("unstable decode: %v", err)
				}
				pc.ThreadLocal()
			}
		}
		mem := &fakeMem{regions: map[uint64][]byte{0x1000: b}}
		ReadProcessContext(mem, 1, 0x1000)
		if mem.reads > 4*3 {
			t.Fatalf("%d reads: the protocol must give up", mem.reads)
		}
	})
}

func FuzzParseMapsLine(f *testing.F) {
	f.Add("7f3b6d1a4000-7f3b6d1a6000 r--p 00000000 00:00 0                          [anon:OTEL_CTX]")
	f.Fuzz(func(t *testing.T, s string) {
		m, err := procfs.ParseMapsLine(s)
		if err == nil && m.End < m.Start {
			t.Fatalf("inverted mapping %+v", m)
		}
		ProcessContextCandidates([]procfs.Mapping{m}, 4096)
	})
}

// FuzzInspectTLSFile: hostile ELF files must produce errors, never panics.
func FuzzInspectTLSFile(f *testing.F) {
	hdr := make([]byte, 64)
	copy(hdr, "\x7fELF\x02\x01\x01")
	binary.LittleEndian.PutUint16(hdr[18:], 62) // EM_X86_64
	f.Add(hdr)
	// A real module with TLS relocations, when the host can build one.
	if gcc, err := exec.LookPath("gcc"); err == nil {
		so := filepath.Join(f.TempDir(), "seed.so")
		if exec.Command(gcc, "-Os", "-s", "-shared", "-fPIC", "-nostdlib", "-mtls-dialect=gnu2", "-o", so, "testdata/tlsprog/otelctx.c").Run() == nil {
			if b, err := os.ReadFile(so); err == nil {
				f.Add(b)
			}
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		InspectTLSFile(bytes.NewReader(b), ThreadContextSymbol)
	})
}
