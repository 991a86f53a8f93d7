// The per-architecture ELF TLS facts the recipe depends on, in one table: where the TLS
// blocks sit relative to the thread pointer, where the C library keeps the DTV pointer, and
// the numbers of the TLS relocations the loader resolves.
//
// Sources:
//   - x86-64 (TLS variant II: blocks below tp; tp = %fs base = the TCB): System V x86-64
//     psABI, "Thread-Local Storage"; U. Drepper, "ELF Handling For Thread-Local Storage"
//     §3.4.6; glibc sysdeps/x86_64/nptl/tls.h (tcbhead_t: tcb, dtv at 8); musl
//     src/internal/pthread_impl.h (struct pthread: self, dtv at 8, no TLS_ABOVE_TP).
//     Relocations: R_X86_64_DTPMOD64 16, R_X86_64_TPOFF64 18, R_X86_64_TLSDESC 36.
//   - AArch64 (TLS variant I: tp = TPIDR_EL0 points at a 16-byte TCB, the static blocks
//     follow it): "ELF for the Arm 64-bit Architecture (AAELF64)" §5.7.12 (TLS); Drepper
//     §3.4.3 (variant I); glibc sysdeps/aarch64/nptl/tls.h (tcbhead_t {dtv, private}:
//     TLS_TCB_SIZE 16, dtv at tp+0) and elf/dl-tls.c _dl_determine_tlsoffset (TLS_DTV_AT_TP:
//     "The TLS blocks start right after the TCB"); binutils bfd/elfnn-aarch64.c tpoff_base
//     (tls_sec->vma - align_power(TCB_SIZE 16, alignment)); musl arch/aarch64/pthread_arch.h
//     (TLS_ABOVE_TP, GAP_ABOVE_TP 16) with struct pthread's last member dtv just below tp
//     (tp = self + sizeof(struct pthread)). Relocations: R_AARCH64_TLS_DTPMOD64 1028,
//     R_AARCH64_TLS_TPREL64 1030, R_AARCH64_TLSDESC 1031.
//
// On both, a DTV entry is 16 bytes in glibc (dtv_t: value, to_free; the length in
// dtv[-1].counter) and 8 in musl (the length in dtv[0]); a TLSDESC is two words {resolver,
// argument}, and a dynamic argument points at {module id, offset}.

package appctx

import "debug/elf"

// tlsABI is one row of the table.
type tlsABI struct {
	machine elf.Machine
	// variantI: the static blocks lie above tp, starting tcbSize bytes after it (a
	// module's offset is positive); otherwise below tp (negative offsets).
	variantI bool
	tcbSize  uint64
	// dtvOffset: where the DTV pointer sits relative to tp, per Libc (Glibc, Musl); a
	// negative offset is stored as its two's complement (tp + offset wraps).
	dtvOffset [2]int64
	// relocs: ELF r_type → kind; names: the ABI's name of each kind.
	relocs map[uint32]TLSRelocKind
	names  map[TLSRelocKind]string
}

var tlsABIs = []tlsABI{
	{
		machine:   elf.EM_X86_64,
		dtvOffset: [2]int64{Glibc: 8, Musl: 8},
		relocs:    map[uint32]TLSRelocKind{16: RelocDTPMod, 18: RelocTPOff, 36: RelocTLSDesc},
		names:     map[TLSRelocKind]string{RelocDTPMod: "R_X86_64_DTPMOD64", RelocTPOff: "R_X86_64_TPOFF64", RelocTLSDesc: "R_X86_64_TLSDESC"},
	},
	{
		machine:   elf.EM_AARCH64,
		variantI:  true,
		tcbSize:   16,
		dtvOffset: [2]int64{Glibc: 0, Musl: -8},
		relocs:    map[uint32]TLSRelocKind{1028: RelocDTPMod, 1030: RelocTPOff, 1031: RelocTLSDesc},
		names:     map[TLSRelocKind]string{RelocDTPMod: "R_AARCH64_TLS_DTPMOD64", RelocTPOff: "R_AARCH64_TLS_TPREL64", RelocTLSDesc: "R_AARCH64_TLSDESC"},
	},
}

// abiOf returns the row of machine, or false when TLS resolution does not know it.
func abiOf(machine elf.Machine) (*tlsABI, bool) {
	for i := range tlsABIs {
		if tlsABIs[i].machine == machine {
			return &tlsABIs[i], true
		}
	}
	return nil, false
}

// Name is the relocation's name in the ELF ABI of machine.
func (k TLSRelocKind) Name(machine elf.Machine) string {
	if a, ok := abiOf(machine); ok {
		if n, ok := a.names[k]; ok {
			return n
		}
	}
	return k.String()
}
