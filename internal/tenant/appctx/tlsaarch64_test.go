// AArch64 (TLS variant I) recipes, tested on any host: offsets computed by hand from the
// ELF TLS ABI, the linker's own local-exec arithmetic read out of cross-built executables
// (testdata/tlsaarch64, build.sh), the relocation kinds of cross-built shared objects, and
// the GOT contents glibc's AArch64 loader writes (sysdeps/aarch64/dl-machine.h).
package appctx

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// Variant I: tp points at the 16-byte TCB {dtv, private}; the executable's block starts at
// the smallest offset ≥ 16 congruent to p_vaddr modulo p_align; the variable is st_value
// into it. Every want below is that rule worked by hand.
func TestStaticTLSOffsetAArch64(t *testing.T) {
	cases := []struct {
		name                string
		vaddr, memsz, align uint64
		value               uint64
		want                int64
	}{
		{"slot only, align 8", 0x11000, 8, 8, 0, 16},             // roundup(16, 8) = 16
		{"40 bytes before it, align 16", 0x1da0, 48, 16, 40, 56}, // 16 + 40
		{"align 64", 0x1d80, 72, 64, 64, 128},                    // roundup(16, 64) = 64; + 64
		{"align 4096", 0x1000, 0x1008, 4096, 4096, 8192},         // 4096 + 4096
		// p_vaddr ≡ 8 (mod 64): the block offsets ≡ 8 are 8, 72, …; 8 < 16, so 72.
		{"misaligned vaddr", 0x1dc8, 48, 64, 40, 72 + 40},
		// p_vaddr ≡ 4000 (mod 4096): 4000 ≥ 16 already.
		{"misaligned vaddr, large align", 0x10fa0, 8, 4096, 0, 4000},
		// p_vaddr ≡ 20 (mod 32): 20 ≥ 16.
		{"misaligned just past the TCB", 0x1d94, 8, 32, 0, 20},
	}
	for _, c := range cases {
		m := TLSModule{Machine: elf.EM_AARCH64, TLSVaddr: c.vaddr, TLSMemSize: c.memsz, TLSAlign: c.align, Value: c.value}
		if got := m.StaticTLSOffset(); got != c.want {
			t.Errorf("%s: StaticTLSOffset = %d, want %d", c.name, got, c.want)
		}
	}
}

// localExecOffset decodes the tp offset the linker put into slot()'s local-exec sequence:
// mrs x0, tpidr_el0; add x0, x0, #hi, lsl #12; add x0, x0, #lo (AArch64 A64 encodings:
// ADD (immediate) 64-bit = 0x91000000 | sh<<22 | imm12<<10 | Rn<<5 | Rd).
func localExecOffset(t *testing.T, f *elf.File) int64 {
	t.Helper()
	syms, err := f.DynamicSymbols()
	if err != nil {
		t.Fatal(err)
	}
	var addr uint64
	for _, s := range syms {
		if s.Name == "slot" && elf.ST_TYPE(s.Info) == elf.STT_FUNC {
			addr = s.Value
		}
	}
	if addr == 0 {
		t.Fatal("no slot function in .dynsym")
	}
	var code []byte
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && p.Flags&elf.PF_X != 0 && addr >= p.Vaddr && addr+12 <= p.Vaddr+p.Filesz {
			code = make([]byte, 12)
			if _, err := p.ReadAt(code, int64(addr-p.Vaddr)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if code == nil {
		t.Fatalf("slot at %#x is in no executable segment", addr)
	}
	ins := [3]uint32{}
	for i := range ins {
		ins[i] = binary.LittleEndian.Uint32(code[4*i:])
	}
	const mrsTPIDR = 0xd53bd040 // mrs x0, tpidr_el0
	if ins[0] != mrsTPIDR {
		t.Fatalf("slot does not start with mrs x0, tpidr_el0: %#08x", ins[0])
	}
	var off int64
	for i, in := range ins[1:] {
		if in&0xff8003ff != 0x91000000 { // add x0, x0, #imm (any shift)
			t.Fatalf("instruction %d of slot is not add x0, x0, #imm: %#08x", i+1, in)
		}
		imm := int64(in>>10) & 0xfff
		if in&(1<<22) != 0 {
			imm <<= 12
		}
		off += imm
	}
	return off
}

func openFixture(t *testing.T, name string) *elf.File {
	t.Helper()
	f, err := elf.Open(filepath.Join("testdata", "tlsaarch64", name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// The recipe of an AArch64 executable equals the offset its own local-exec code uses, and
// the hand-computed value of the ABI rule (PT_TLS and st_value printed by readelf).
func TestAArch64ExecutableMatchesLinker(t *testing.T) {
	cases := []struct {
		file string
		want int64 // by hand: roundup(16, p_align) + st_value
	}{
		{"exe_pie_align8", 16 + 0x28},        // PT_TLS align 0x10, st_value 0x28
		{"exe_pie_align64", 64 + 0x40},       // align 0x40, st_value 0x40
		{"exe_nopie_pad5000", 16 + 0x1390},   // align 0x10, st_value 0x1390
		{"exe_pie_align4096", 4096 + 0x1000}, // align 0x1000, st_value 0x1000
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			f := openFixture(t, c.file)
			linker := localExecOffset(t, f)
			if linker != c.want {
				t.Fatalf("fixture: the linker's offset %d is not the hand-computed %d (rebuilt differently?)", linker, c.want)
			}
			m, err := InspectTLS(f, ThreadContextSymbol)
			if err != nil {
				t.Fatal(err)
			}
			if !m.Executable || m.Machine != elf.EM_AARCH64 {
				t.Errorf("module %+v: want an AArch64 executable", m)
			}
			acc, err := ResolveTLS(m, true, 0, Glibc, func(uint64, []byte) error { return errors.New("no reads expected") })
			if err != nil {
				t.Fatal(err)
			}
			if acc.Kind != TLSStatic || acc.TPOffset != linker {
				t.Errorf("recipe %v tp%+d, the linker's code uses tp%+d", acc.Kind, acc.TPOffset, linker)
			}
		})
	}
}

// Each shared object carries the AArch64 relocation its TLS model makes, against the
// variable's .dynsym entry (readelf -r: R_AARCH64_TLS_TPREL64, _TLS_DTPMOD64, _TLSDESC).
func TestAArch64SharedObjectRelocations(t *testing.T) {
	cases := []struct {
		file string
		kind TLSRelocKind
		name string
	}{
		{"lib_initial_exec.so", RelocTPOff, "R_AARCH64_TLS_TPREL64"},
		{"lib_global_dynamic_trad.so", RelocDTPMod, "R_AARCH64_TLS_DTPMOD64"},
		{"lib_tlsdesc.so", RelocTLSDesc, "R_AARCH64_TLSDESC"},
	}
	for _, c := range cases {
		f := openFixture(t, c.file)
		m, err := InspectTLS(f, ThreadContextSymbol)
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		if m.Executable || m.Table != ".dynsym" || m.Value != 0x28 {
			t.Errorf("%s: %+v", c.file, m)
		}
		if len(m.Relocs) != 1 || m.Relocs[0].Kind != c.kind || m.Relocs[0].Local {
			t.Errorf("%s: relocations %+v, want one %s", c.file, m.Relocs, c.name)
			continue
		}
		if got := m.Relocs[0].Kind.Name(elf.EM_AARCH64); got != c.name {
			t.Errorf("%s: named %s, want %s", c.file, got, c.name)
		}
	}
}

// The GOT contents glibc's AArch64 loader writes (dl-machine.h, elf_machine_rela):
//
//	R_AARCH64_TLS_TPREL64: *slot = st_value + addend + l_tls_offset
//	R_AARCH64_TLSDESC:     {_dl_tlsdesc_return, st_value + l_tls_offset + addend} (static)
//	                       {_dl_tlsdesc_dynamic, &{{module id, st_value + addend}, gen}}
//	R_AARCH64_TLS_DTPMOD64: *slot = module id
//
// With the variable at st_value 0x28 and the loader's l_tls_offset 0x60 (a block placed
// after the executable's), the variable is at tp + 0x88.
func TestResolveTLSSharedObjectAArch64(t *testing.T) {
	const bias = 0xffff80000000
	const value, tlsOffset = 0x28, 0x60
	lib := func(relocs ...TLSReloc) TLSModule {
		return TLSModule{Machine: elf.EM_AARCH64, Symbol: ThreadContextSymbol, Value: value, TLSMemSize: 0x30, TLSAlign: 16, Relocs: relocs}
	}
	const heap = 0xaaaab0001000 // where _dl_make_tlsdesc_dynamic's argument lives
	cases := []struct {
		name string
		mod  TLSModule
		libc Libc
		mem  gotMem
		want TLSAccess
		err  error
	}{
		{"initial-exec TPREL64", lib(TLSReloc{Kind: RelocTPOff, Offset: 0x1ffe0}), Glibc,
			gotMem{bias + 0x1ffe0: value + tlsOffset},
			TLSAccess{Kind: TLSStatic, TPOffset: 0x88, Via: "R_AARCH64_TLS_TPREL64"}, nil},
		{"local TPREL64 (sym 0, addend = offset)", lib(TLSReloc{Kind: RelocTPOff, Offset: 0x1ffe0, Addend: value, Local: true}), Glibc,
			gotMem{bias + 0x1ffe0: value + tlsOffset},
			TLSAccess{Kind: TLSStatic, TPOffset: 0x88, Via: "R_AARCH64_TLS_TPREL64"}, nil},
		{"TLSDESC resolved to static TLS", lib(TLSReloc{Kind: RelocTLSDesc, Offset: 0x20000}), Glibc,
			gotMem{bias + 0x20000: 0xffffb7fc1230, bias + 0x20008: value + tlsOffset},
			TLSAccess{Kind: TLSStatic, TPOffset: 0x88, Via: "R_AARCH64_TLSDESC (static)"}, nil},
		{"TLSDESC resolved to the DTV (glibc: dtv at tp+0)", lib(TLSReloc{Kind: RelocTLSDesc, Offset: 0x20000}), Glibc,
			gotMem{bias + 0x20000: 0xffffb7fc1300, bias + 0x20008: heap, heap: 3, heap + 8: value},
			TLSAccess{Kind: TLSDynamic, ModuleID: 3, BlockOffset: value, DTVOffset: 0, DTVEntrySize: 16, Via: "R_AARCH64_TLSDESC (dynamic)"}, nil},
		{"DTPMOD64 on musl (dtv just below tp)", lib(TLSReloc{Kind: RelocDTPMod, Offset: 0x1ffd8}), Musl,
			gotMem{bias + 0x1ffd8: 2},
			TLSAccess{Kind: TLSDynamic, ModuleID: 2, BlockOffset: value, DTVOffset: ^uint64(7), DTVEntrySize: 8, Via: "R_AARCH64_TLS_DTPMOD64"}, nil},
		// A variant II (negative) offset is no AArch64 static offset; nor is one inside the TCB.
		{"TPREL64 inside the TCB", lib(TLSReloc{Kind: RelocTPOff, Offset: 0x1ffe0}), Glibc,
			gotMem{bias + 0x1ffe0: value - 0x20}, TLSAccess{}, ErrTLSUnresolved},
		{"TLSDESC argument neither offset nor tls_index", lib(TLSReloc{Kind: RelocTLSDesc, Offset: 0x20000}), Glibc,
			gotMem{bias + 0x20000: 0xffffb7fc1300, bias + 0x20008: heap, heap: 0x20000, heap + 8: 0x407}, TLSAccess{}, ErrTLSUnresolved},
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

// The musl DTV recipe lands on the block through a DTV pointer stored 8 bytes below tp
// (struct pthread's last member), both in SlotAddress and in the kernel recipe's fields.
func TestSlotAddressAArch64MuslDTV(t *testing.T) {
	const tp, dtv, block = 0xffffb7ff0010, 0xaaaab0002000, 0xffffb7e00000
	acc := TLSAccess{Kind: TLSDynamic, ModuleID: 2, BlockOffset: 0x28, DTVOffset: ^uint64(7), DTVEntrySize: 8}
	mem := &fakeMem{regions: map[uint64][]byte{tp - 8: make([]byte, 8), dtv: make([]byte, 32)}}
	binary.NativeEndian.PutUint64(mem.regions[tp-8], dtv)
	binary.NativeEndian.PutUint64(mem.regions[dtv][16:], block)
	got, err := acc.SlotAddress(mem, 1, tp)
	if err != nil || got != block+0x28 {
		t.Fatalf("%#x, %v", got, err)
	}
	kr := KernelRecipeOf(&acc)
	if kr.Kind != 2 || tp+kr.DTVOffset != tp-8 || kr.DTVLenOffset != 0 {
		t.Errorf("kernel recipe %+v", kr)
	}
}

// A module of an architecture without a row is refused by name, not misread.
func TestInspectTLSRefusesUnknownMachine(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("testdata", "tlsaarch64", "exe_pie_align8"))
	if err != nil {
		t.Fatal(err)
	}
	b := append([]byte(nil), src...)
	binary.LittleEndian.PutUint16(b[18:], uint16(elf.EM_RISCV)) // e_machine
	p := filepath.Join(t.TempDir(), "riscv")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := elf.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := InspectTLS(f, ThreadContextSymbol); !errors.Is(err, ErrUnsupportedArch) {
		t.Errorf("err = %v, want %v", err, ErrUnsupportedArch)
	}
}
