// The TLS recipe as a pure function: the layouts and GOT contents each loader produces,
// including the ones the end-to-end test cannot provoke on this host (musl, lazy TLSDESC,
// misaligned PT_TLS).
package appctx

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"testing"
)

func TestStaticTLSOffset(t *testing.T) {
	cases := []struct {
		name                string
		vaddr, memsz, align uint64
		value               uint64
		want                int64
	}{
		// Slot alone in an 8-byte segment: tp-8.
		{"slot only", 0x3df0, 8, 8, 0, -8},
		// 40-byte .tdata aligned to 64 + the slot at 40 (the test writer's layout): block is
		// roundup(48, 64) = 64 below tp.
		{"over-aligned block", 0x3dc0, 48, 64, 40, -24},
		// PT_TLS not aligned to p_align (hand-written linker scripts): tp-block must be
		// ≡ p_vaddr (mod 64), i.e. block ≡ 56: the smallest such block ≥ 100 is 120.
		{"misaligned vaddr", 0x3dc8, 100, 64, 40, -120 + 40},
		// … and the smallest ≥ 48 is 56.
		{"misaligned vaddr, small block", 0x3dc8, 48, 64, 40, -56 + 40},
	}
	for _, c := range cases {
		m := TLSModule{TLSVaddr: c.vaddr, TLSMemSize: c.memsz, TLSAlign: c.align, Value: c.value}
		if got := m.StaticTLSOffset(); got != c.want {
			t.Errorf("%s: StaticTLSOffset = %d, want %d", c.name, got, c.want)
		}
	}
}

// got serves 8-byte little words at link-time addresses (+ bias).
type gotMem map[uint64]uint64

func (g gotMem) read(addr uint64, buf []byte) error {
	for i := 0; i < len(buf); i += 8 {
		v, ok := g[addr+uint64(i)]
		if !ok {
			return ErrShortRead
		}
		binary.NativeEndian.PutUint64(buf[i:], v)
	}
	return nil
}

func TestResolveTLSSharedObject(t *testing.T) {
	const bias = 0x7f0000000000
	lib := func(relocs ...TLSReloc) TLSModule {
		return TLSModule{Machine: elf.EM_X86_64, Symbol: ThreadContextSymbol, Value: 40, TLSMemSize: 48, TLSAlign: 64, Relocs: relocs}
	}
	neg := func(v int64) uint64 { return uint64(v) }
	cases := []struct {
		name string
		mod  TLSModule
		libc Libc
		mem  gotMem
		want TLSAccess
		err  error
	}{
		{"initial-exec GOT slot", lib(TLSReloc{Kind: RelocTPOff, Offset: 0x3fe0}), Glibc,
			gotMem{bias + 0x3fe0: neg(-0x1000 + 40)},
			TLSAccess{Kind: TLSStatic, TPOffset: -0x1000 + 40, Via: "R_X86_64_TPOFF64"}, nil},
		{"local initial-exec (sym 0, addend = offset)", lib(TLSReloc{Kind: RelocTPOff, Offset: 0x3fe0, Addend: 40, Local: true}), Glibc,
			gotMem{bias + 0x3fe0: neg(-0x1000 + 40)},
			TLSAccess{Kind: TLSStatic, TPOffset: -0x1000 + 40, Via: "R_X86_64_TPOFF64"}, nil},
		{"TLSDESC resolved to static TLS", lib(TLSReloc{Kind: RelocTLSDesc, Offset: 0x3fd0}), Glibc,
			gotMem{bias + 0x3fd0: 0x7f00deadbeef, bias + 0x3fd8: neg(-0x80)},
			TLSAccess{Kind: TLSStatic, TPOffset: -0x80, Via: "R_X86_64_TLSDESC (static)"}, nil},
		{"TLSDESC resolved to the DTV (glibc)", lib(TLSReloc{Kind: RelocTLSDesc, Offset: 0x3fd0}), Glibc,
			gotMem{bias + 0x3fd0: 0x7f00deadbeef, bias + 0x3fd8: 0x5555000010, 0x5555000010: 3, 0x5555000018: 40},
			TLSAccess{Kind: TLSDynamic, ModuleID: 3, BlockOffset: 40, DTVOffset: 8, DTVEntrySize: 16, Via: "R_X86_64_TLSDESC (dynamic)"}, nil},
		{"general-dynamic on musl", lib(TLSReloc{Kind: RelocDTPMod, Offset: 0x3fc0}), Musl,
			gotMem{bias + 0x3fc0: 2},
			TLSAccess{Kind: TLSDynamic, ModuleID: 2, BlockOffset: 40, DTVOffset: 8, DTVEntrySize: 8, Via: "R_X86_64_DTPMOD64"}, nil},
		// Lazily bound TLSDESC (glibc < 2.35 with lazy binding): the argument points at the
		// relocation entry, which is no tls_index for our variable.
		{"lazy TLSDESC", lib(TLSReloc{Kind: RelocTLSDesc, Offset: 0x3fd0}), Glibc,
			gotMem{bias + 0x3fd0: 0x7f00deadbeef, bias + 0x3fd8: 0x5555000010, 0x5555000010: 0x3fd0, 0x5555000018: 0x0000002400000024},
			TLSAccess{}, ErrTLSUnresolved},
		{"DTPMOD slot not yet relocated", lib(TLSReloc{Kind: RelocDTPMod, Offset: 0x3fc0}), Glibc,
			gotMem{bias + 0x3fc0: 0}, TLSAccess{}, ErrTLSUnresolved},
		{"no relocation at all", lib(), Glibc, gotMem{}, TLSAccess{}, ErrTLSUnresolved},
		{"TPOFF preferred over DTPMOD", lib(TLSReloc{Kind: RelocDTPMod, Offset: 0x3fc0}, TLSReloc{Kind: RelocTPOff, Offset: 0x3fe0}), Glibc,
			gotMem{bias + 0x3fc0: 2, bias + 0x3fe0: neg(-24)},
			TLSAccess{Kind: TLSStatic, TPOffset: -24, Via: "R_X86_64_TPOFF64"}, nil},
	}
	for _, c := range cases {
		got, err := ResolveTLS(c.mod, false, bias, c.libc, c.mem.read)
		if c.err != nil {
			if !errors.Is(err, c.err) {
				t.Errorf("%s: err = %v, want %v", c.name, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s: %+v, %v\nwant %+v", c.name, got, err, c.want)
		}
	}
}

func TestResolveTLSExecutableNeedsNoMemory(t *testing.T) {
	m := TLSModule{Machine: elf.EM_X86_64, Value: 40, TLSVaddr: 0x3dc0, TLSMemSize: 48, TLSAlign: 64}
	got, err := ResolveTLS(m, true, 0, Glibc, func(uint64, []byte) error { return errors.New("no reads expected") })
	if err != nil || got != (TLSAccess{Kind: TLSStatic, TPOffset: -24, Via: "executable"}) {
		t.Fatalf("%+v, %v", got, err)
	}
	m.Machine = elf.EM_RISCV // no row in tlsabi.go
	if _, err := ResolveTLS(m, true, 0, Glibc, nil); !errors.Is(err, ErrUnsupportedArch) {
		t.Errorf("riscv: err = %v", err)
	}
}

func TestSlotAddressDynamic(t *testing.T) {
	const tp, dtv, block = 0x7f0000100000, 0x5555000100, 0x7f0000200000
	acc := TLSAccess{Kind: TLSDynamic, ModuleID: 2, BlockOffset: 40, DTVOffset: 8, DTVEntrySize: 16}
	mem := &fakeMem{regions: map[uint64][]byte{tp: make([]byte, 16), dtv: make([]byte, 64)}}
	binary.NativeEndian.PutUint64(mem.regions[tp][8:], dtv)
	binary.NativeEndian.PutUint64(mem.regions[dtv][32:], block)
	if got, err := acc.SlotAddress(mem, 1, tp); err != nil || got != block+40 {
		t.Fatalf("%#x, %v", got, err)
	}
	binary.NativeEndian.PutUint64(mem.regions[dtv][32:], ^uint64(0)) // TLS_DTV_UNALLOCATED
	if _, err := acc.SlotAddress(mem, 1, tp); err == nil {
		t.Error("unallocated DTV entry accepted")
	}
}
