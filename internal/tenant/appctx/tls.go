// ELF side of OTEP 4947: find the otel_thread_ctx_v1 TLS symbol in a module and the
// relocations through which the dynamic loader tells the module where its TLS lives.
//
// Where a TLS variable lives depends on the module and the loader, not on the access model
// the compiler chose. x86-64 uses TLS variant II (tp = %fs base, blocks below it), AArch64
// variant I (tp = TPIDR_EL0 points at a 16-byte TCB, blocks after it); tlsabi.go is the one
// table of the per-architecture facts.
//
//   - Main executable (module id 1): its block sits at a link-time constant from tp:
//     x86-64 tp - roundup(PT_TLS.p_memsz, p_align), AArch64 tp + roundup(16, p_align)
//     (+ alignment of p_vaddr on both). Computable from the ELF alone: local-exec and
//     initial-exec code in the executable use exactly this.
//   - Shared object loaded at start-up: a static TLS block at a tp offset the loader picks;
//     the object learns it through relocated GOT slots (R_X86_64_TPOFF64 /
//     R_AARCH64_TLS_TPREL64 for initial-exec, R_X86_64_TLSDESC / R_AARCH64_TLSDESC resolved
//     to the static resolver for TLSDESC).
//   - Shared object loaded by dlopen without room in the surplus static TLS: only through
//     the dynamic thread vector: its module id (R_X86_64_DTPMOD64 / R_AARCH64_TLS_DTPMOD64
//     slot, or the TLSDESC dynamic argument {module id, offset}) indexes the thread's DTV.
//
// InspectTLS collects what the file says; ResolveTLS (tlsresolve.go) reads the relocated GOT
// slots of the running process and turns that into a TLSAccess for the BPF side.

package appctx

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// ThreadContextSymbol is OTEP 4947's TLS symbol (in .dynsym, STT_TLS).
const ThreadContextSymbol = "otel_thread_ctx_v1"

// Errors of InspectTLS and ResolveTLS.
var (
	ErrNoTLSSymbol     = errors.New("module does not define the TLS symbol")
	ErrUnsupportedArch = errors.New("TLS resolution is implemented for x86-64 and AArch64 only")
)

// TLSRelocKind is a TLS relocation that names the variable's module or offset (Name gives
// its name in a machine's ABI, String the x86-64 one).
type TLSRelocKind uint8

const (
	RelocTPOff   TLSRelocKind = iota + 1 // R_X86_64_TPOFF64, R_AARCH64_TLS_TPREL64: slot = tp-relative offset (initial-exec in a shared object)
	RelocDTPMod                          // R_X86_64_DTPMOD64, R_AARCH64_TLS_DTPMOD64: slot = module id (general-/local-dynamic)
	RelocTLSDesc                         // R_X86_64_TLSDESC, R_AARCH64_TLSDESC: two slots {resolver, argument}
)

func (k TLSRelocKind) String() string {
	switch k {
	case RelocTPOff:
		return "R_X86_64_TPOFF64"
	case RelocDTPMod:
		return "R_X86_64_DTPMOD64"
	case RelocTLSDesc:
		return "R_X86_64_TLSDESC"
	}
	return "reloc?"
}

// TLSReloc is one relocation that the loader resolves for the variable.
type TLSReloc struct {
	Kind   TLSRelocKind
	Offset uint64 // r_offset: link-time address of the GOT slot (add the load bias)
	Addend int64
	// Local is true for relocations against symbol 0, i.e. the defining module's own block
	// (local-dynamic, hidden symbols); their addend is the variable's offset in the block.
	Local bool
}

// TLSModule is what one ELF file says about a TLS variable it defines.
type TLSModule struct {
	Machine elf.Machine
	// Executable is true for ET_EXEC and for ET_DYN marked DF_1_PIE. The resolver trusts
	// /proc/<pid>/exe over this guess.
	Executable bool
	Symbol     string
	Table      string // ".dynsym" (as OTEP 4947 requires) or ".symtab" (unstripped fallback)
	Value      uint64 // st_value: offset of the variable in the module's TLS block
	Size       uint64
	// PT_TLS of the module.
	TLSVaddr, TLSMemSize, TLSAlign uint64
	// First PT_LOAD, to compute the load bias from /proc/<pid>/maps.
	FirstLoadVaddr, FirstLoadOffset uint64
	Relocs                          []TLSReloc
}

// InspectTLS looks symbol up in f's .dynsym (then .symtab) and gathers the TLS layout and
// the dynamic relocations that refer to it. ELF64 little-endian x86-64 and AArch64 are
// supported.
func InspectTLS(f *elf.File, symbol string) (TLSModule, error) {
	m := TLSModule{Machine: f.Machine, Symbol: symbol}
	abi, ok := abiOf(f.Machine)
	if !ok || f.Class != elf.ELFCLASS64 || f.Data != elf.ELFDATA2LSB {
		return m, fmt.Errorf("%w (machine %v, %v, %v)", ErrUnsupportedArch, f.Machine, f.Class, f.Data)
	}
	// A module without a TLS segment defines no TLS symbol: most of a large process's
	// modules are ruled out here, before any symbol table is read.
	hasTLS := false
	for _, p := range f.Progs {
		hasTLS = hasTLS || p.Type == elf.PT_TLS
	}
	if !hasTLS {
		return m, ErrNoTLSSymbol
	}
	symIndex := -1 // index in .dynsym, counting the null symbol as 0
	if i, v, size, err := findTLSSymbol(f, elf.SHT_DYNSYM, symbol); err != nil {
		return m, err
	} else if i > 0 {
		symIndex, m.Table, m.Value, m.Size = i, ".dynsym", v, size
	}
	if m.Table == "" {
		if i, v, size, err := findTLSSymbol(f, elf.SHT_SYMTAB, symbol); err != nil {
			return m, err
		} else if i > 0 {
			m.Table, m.Value, m.Size = ".symtab", v, size
		}
	}
	if m.Table == "" {
		return m, ErrNoTLSSymbol
	}
	haveTLS, haveLoad := false, false
	for _, p := range f.Progs {
		switch {
		case p.Type == elf.PT_TLS:
			m.TLSVaddr, m.TLSMemSize, m.TLSAlign, haveTLS = p.Vaddr, p.Memsz, max(p.Align, 1), true
		case p.Type == elf.PT_LOAD && !haveLoad:
			m.FirstLoadVaddr, m.FirstLoadOffset, haveLoad = p.Vaddr, p.Off, true
		}
	}
	if !haveTLS || !haveLoad {
		return m, fmt.Errorf("TLS symbol %s without PT_TLS/PT_LOAD segments", symbol)
	}
	switch f.Type {
	case elf.ET_EXEC:
		m.Executable = true
	case elf.ET_DYN:
		if v, err := f.DynValue(elf.DT_FLAGS_1); err == nil && len(v) > 0 && v[0]&uint64(elf.DF_1_PIE) != 0 {
			m.Executable = true
		}
	}
	relocs, err := tlsRelocs(f, abi, symIndex, m.Value)
	if err != nil {
		return m, err
	}
	m.Relocs = relocs
	return m, nil
}

// findTLSSymbol returns the index, value and size of the defined STT_TLS symbol named
// symbol in f's first section of type typ (index 0: not there). It streams the table
// and reads a name only for defined TLS symbols (a handful per module), so a library
// with hundreds of thousands of symbols costs one sequential read and no allocation
// per symbol — debug/elf's Symbols would build them all.
func findTLSSymbol(f *elf.File, typ elf.SectionType, symbol string) (int, uint64, uint64, error) {
	var sec *elf.Section
	for _, s := range f.Sections {
		if s.Type == typ {
			sec = s
			break
		}
	}
	if sec == nil || int(sec.Link) >= len(f.Sections) {
		return 0, 0, 0, nil
	}
	const symSize = 24 // Elf64_Sym
	if sec.Size%symSize != 0 {
		return 0, 0, 0, fmt.Errorf("section %s: odd size %d", sec.Name, sec.Size)
	}
	strtab := f.Sections[sec.Link]
	want := append([]byte(symbol), 0)
	name := make([]byte, len(want))
	r := io.NewSectionReader(sec, 0, int64(sec.Size))
	buf := make([]byte, 2730*symSize) // 64 KiB of whole entries
	for i := 0; ; {
		n, err := io.ReadFull(r, buf)
		if n%symSize != 0 || (err != nil && err != io.EOF && err != io.ErrUnexpectedEOF) {
			return 0, 0, 0, fmt.Errorf("section %s: short read: %v", sec.Name, err)
		}
		for e := buf[:n]; len(e) >= symSize; e, i = e[symSize:], i+1 {
			info, shndx := e[4], binary.LittleEndian.Uint16(e[6:8])
			if i == 0 || elf.ST_TYPE(info) != elf.STT_TLS || elf.SectionIndex(shndx) == elf.SHN_UNDEF {
				continue
			}
			off := int64(binary.LittleEndian.Uint32(e[0:4]))
			if uint64(off) >= strtab.Size {
				continue
			}
			if m, _ := strtab.ReadAt(name, off); m == len(want) && string(name) == string(want) {
				return i, binary.LittleEndian.Uint64(e[8:16]), binary.LittleEndian.Uint64(e[16:24]), nil
			}
		}
		if err != nil {
			return 0, 0, 0, nil
		}
	}
}

// tlsRelocs scans the SHT_RELA sections that relocate against .dynsym.
func tlsRelocs(f *elf.File, abi *tlsABI, symIndex int, value uint64) ([]TLSReloc, error) {
	dynsym := -1
	for i, s := range f.Sections {
		if s.Type == elf.SHT_DYNSYM {
			dynsym = i
		}
	}
	var out []TLSReloc
	for _, s := range f.Sections {
		if s.Type != elf.SHT_RELA || int(s.Link) != dynsym || dynsym < 0 {
			continue
		}
		const relaSize = 24
		if s.Size%relaSize != 0 || s.Size > 64<<20 {
			return nil, fmt.Errorf("section %s: odd size %d", s.Name, s.Size)
		}
		r := io.NewSectionReader(s, 0, int64(s.Size))
		var e [relaSize]byte
		for {
			if _, err := io.ReadFull(r, e[:]); err == io.EOF {
				break
			} else if err != nil {
				return nil, fmt.Errorf("section %s: %w", s.Name, err)
			}
			off := binary.LittleEndian.Uint64(e[0:8])
			info := binary.LittleEndian.Uint64(e[8:16])
			add := int64(binary.LittleEndian.Uint64(e[16:24]))
			sym, typ := int(info>>32), uint32(info)
			kind, ok := abi.relocs[typ]
			if !ok {
				continue
			}
			switch {
			case symIndex > 0 && sym == symIndex:
				out = append(out, TLSReloc{Kind: kind, Offset: off, Addend: add})
			case sym == 0 && (kind == RelocDTPMod || uint64(add) == value):
				// Module-local: any DTPMOD64 names this module's id; TPOFF/TLSDESC only
				// when their addend is our variable's offset.
				out = append(out, TLSReloc{Kind: kind, Offset: off, Addend: add, Local: true})
			}
		}
	}
	return out, nil
}

// StaticTLSOffset returns the tp-relative offset of the variable when the module is the
// main executable (glibc's _dl_determine_tlsoffset for module 1, musl's static_init_tls,
// and what the linker writes into local-exec code), per TLS variant (tlsabi.go):
//
//	variant II (x86-64):
//	  block = the smallest offset ≥ p_memsz with tp-block ≡ p_vaddr (mod p_align)
//	        = roundup(p_memsz, p_align) when PT_TLS is aligned, as linkers make it
//	  offset = st_value - block
//	variant I (AArch64, TCB of 16 bytes at tp):
//	  block = the smallest offset ≥ 16 with tp+block ≡ p_vaddr (mod p_align)
//	        = roundup(16, p_align) when PT_TLS is aligned
//	  offset = block + st_value
//
// A machine without a row in tlsabi.go is treated as variant II (InspectTLS refuses such
// modules).
func (m TLSModule) StaticTLSOffset() int64 {
	if abi, ok := abiOf(m.Machine); ok && abi.variantI {
		align := max(m.TLSAlign, 1)
		block := roundUp(abi.tcbSize, align) + (m.TLSVaddr & (align - 1))
		if block-align >= abi.tcbSize {
			block -= align
		}
		return int64(block) + int64(m.Value)
	}
	align := max(m.TLSAlign, 1)
	firstbyte := (-m.TLSVaddr) & (align - 1)
	block := firstbyte
	if m.TLSMemSize > firstbyte {
		block += roundUp(m.TLSMemSize-firstbyte, align)
	}
	return int64(m.Value) - int64(block)
}

func roundUp(x, a uint64) uint64 { return (x + a - 1) / a * a }
