// Library files read as untrusted ELF: the exported API functions' file offsets, and
// every function start (.symtab, .dynsym, .eh_frame_hdr) where a learned entry point
// may be hooked.

package cuda

import (
	"debug/elf"
	"encoding/binary"
	"fmt"
	"io"
)

// maxSymbolTableBytes bounds a symbol table (and its strings) read from a library file:
// files found in tenants' maps are hostile, and a sparse file can claim any size.
const maxSymbolTableBytes = 64 << 20

// librarySymbols returns the file offsets of the library's defined dynamic functions
// (versioned duplicates, cuLaunchKernel@@libcuda.so.1, come back under their base name)
// and, with funcStarts, the set of file offsets where a function symbol of .dynsym or
// .symtab starts, in an executable segment. The file may be a tenant's: debug/elf is not
// hardened against hostile input (a panic becomes an error) and symbol tables are
// bounded.
func librarySymbols(r io.ReaderAt, funcStarts bool) (exports map[string]uint64, funcs map[uint64]bool, err error) {
	defer func() {
		if p := recover(); p != nil {
			exports, funcs, err = nil, nil, fmt.Errorf("malformed ELF: %v", p)
		}
	}()
	f, err := elf.NewFile(r)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	for _, sec := range f.Sections {
		if sec.Type != elf.SHT_SYMTAB && sec.Type != elf.SHT_DYNSYM {
			continue
		}
		size := sec.Size
		if int(sec.Link) < len(f.Sections) {
			size += f.Sections[sec.Link].Size
		}
		if size > maxSymbolTableBytes {
			return nil, nil, fmt.Errorf("symbol table %s of %d bytes exceeds %d", sec.Name, size, maxSymbolTableBytes)
		}
	}
	// fileOffset maps a function's address to its file offset, when it lies in the file
	// part of an executable segment.
	fileOffset := func(v uint64) (uint64, bool) {
		for _, p := range f.Progs {
			if p.Type == elf.PT_LOAD && p.Flags&elf.PF_X != 0 && p.Vaddr <= v && v < p.Vaddr+p.Filesz {
				return v - p.Vaddr + p.Off, true
			}
		}
		return 0, false
	}
	isFunc := func(s elf.Symbol) bool {
		return elf.ST_TYPE(s.Info) == elf.STT_FUNC && s.Value != 0 && s.Section != elf.SHN_UNDEF
	}
	dyn, err := f.DynamicSymbols()
	if err != nil {
		return nil, nil, err
	}
	exports = make(map[string]uint64, len(dyn))
	for _, s := range dyn {
		if !isFunc(s) {
			continue
		}
		off, ok := fileOffset(s.Value)
		if !ok {
			off = s.Value
		}
		if _, dup := exports[s.Name]; !dup {
			exports[s.Name] = off
		}
	}
	if !funcStarts {
		return exports, nil, nil
	}
	all := dyn
	if syms, err := f.Symbols(); err == nil { // a stripped library has no .symtab
		all = append(all, syms...)
	}
	funcs = map[uint64]bool{}
	for _, s := range all {
		if off, ok := fileOffset(s.Value); ok && isFunc(s) {
			funcs[off] = true
		}
	}
	// A stripped library (NVIDIA's libcuda is) names only its exports; its unwind table
	// still lists where every function with unwind information starts.
	for _, v := range ehFrameStarts(f) {
		if off, ok := fileOffset(v); ok {
			funcs[off] = true
		}
	}
	return exports, funcs, nil
}

// ehFrameStarts returns the initial locations (virtual addresses) of the FDEs listed in
// the .eh_frame_hdr binary-search table: the start of every function that has unwind
// information, what a stripped library still tells. Only the table encoding linkers
// write (DW_EH_PE_datarel|DW_EH_PE_sdata4) is read; anything else yields nothing. The
// count is bounded by the section's size.
func ehFrameStarts(f *elf.File) []uint64 {
	sec := f.Section(".eh_frame_hdr")
	if sec == nil || sec.Type == elf.SHT_NOBITS || sec.Size < 12 || sec.Size > maxSymbolTableBytes {
		return nil
	}
	b, err := sec.Data()
	if err != nil || len(b) < 12 || b[0] != 1 {
		return nil
	}
	const (
		peUdata4  = 0x03
		peSdata4  = 0x0b
		pePcrel   = 0x10
		peDatarel = 0x30
	)
	ptrEnc, countEnc, tableEnc := b[1], b[2], b[3]
	// eh_frame_ptr: 4 bytes in the encodings linkers use (pcrel|sdata4, udata4, sdata4).
	if ptrEnc&0x0f != peSdata4 && ptrEnc&0x0f != peUdata4 {
		return nil
	}
	if countEnc != peUdata4 || tableEnc != peDatarel|peSdata4 {
		return nil
	}
	n := uint64(binary.LittleEndian.Uint32(b[8:12]))
	if n > (uint64(len(b))-12)/8 {
		return nil
	}
	out := make([]uint64, 0, n)
	for i := uint64(0); i < n; i++ {
		rel := int32(binary.LittleEndian.Uint32(b[12+8*i:]))
		out = append(out, uint64(int64(sec.Addr)+int64(rel)))
	}
	return out
}
