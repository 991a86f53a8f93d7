// Runtime side of OTEP 4947 TLS resolution: turn a TLSModule into the recipe a BPF
// program follows at the submitting ioctl to find the thread's otel_thread_ctx_v1 slot.

package appctx

import (
	"encoding/binary"
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/ghostdriver/ghostdriver/internal/procfs"
)

// TLSAccessKind says which recipe TLSAccess holds.
type TLSAccessKind uint8

const (
	// TLSStatic: slot address = tp + TPOffset.
	TLSStatic TLSAccessKind = iota + 1
	// TLSDynamic: dtv = *(u64*)(tp + DTVOffset); block = *(u64*)(dtv + ModuleID*DTVEntrySize);
	// slot address = block + BlockOffset.
	TLSDynamic
)

func (k TLSAccessKind) String() string {
	switch k {
	case TLSStatic:
		return "static"
	case TLSDynamic:
		return "dtv"
	}
	return "unresolved"
}

// Libc is the C library whose thread layout the DTV recipe depends on.
type Libc uint8

const (
	Glibc Libc = iota
	Musl
)

// TLSAccess is everything the BPF side needs, per process, to read the thread-context
// pointer of the current thread. The thread pointer tp is task->thread.fsbase on x86-64 and
// task->thread.uw.tp_value (TPIDR_EL0) on AArch64 (bpf/include/arch.h).
//
// For TLSDynamic the BPF program must treat a block pointer of 0 or ^0 (glibc's
// TLS_DTV_UNALLOCATED: the thread never touched the variable) as "no context", and
// should bound ModuleID by the DTV length (glibc: dtv[-1].counter; musl: dtv[0]).
type TLSAccess struct {
	Kind         TLSAccessKind
	TPOffset     int64  // TLSStatic
	ModuleID     uint64 // TLSDynamic
	BlockOffset  uint64 // TLSDynamic
	DTVOffset    uint64 // TLSDynamic: where tcbhead_t.dtv (glibc) / pthread.dtv (musl) sits relative to tp (tlsabi.go; two's complement when below tp)
	DTVEntrySize uint64 // TLSDynamic: sizeof(dtv_t): 16 on glibc (pointer + to_free), 8 on musl
	// Via names the evidence: "executable", or the relocation that gave the answer.
	Via    string
	Module string // path of the defining module as /proc/<pid>/maps shows it
}

// SlotAddress is the user-space reference of the recipe: the address of the TLS slot of the
// thread whose thread pointer is tp. The BPF side does the same reads with
// bpf_probe_read_user.
func (a TLSAccess) SlotAddress(mem MemReader, pid uint32, tp uint64) (uint64, error) {
	switch a.Kind {
	case TLSStatic:
		return tp + uint64(a.TPOffset), nil
	case TLSDynamic:
		var w [8]byte
		if err := mem.ReadMemory(pid, tp+a.DTVOffset, w[:]); err != nil {
			return 0, fmt.Errorf("reading DTV pointer: %w", err)
		}
		dtv := binary.NativeEndian.Uint64(w[:])
		if err := mem.ReadMemory(pid, dtv+a.ModuleID*a.DTVEntrySize, w[:]); err != nil {
			return 0, fmt.Errorf("reading DTV entry %d: %w", a.ModuleID, err)
		}
		block := binary.NativeEndian.Uint64(w[:])
		if block == 0 || block == ^uint64(0) {
			return 0, fmt.Errorf("TLS block of module %d not allocated in this thread", a.ModuleID)
		}
		return block + a.BlockOffset, nil
	}
	return 0, errors.New("unresolved TLS access")
}

// ErrTLSUnresolved means the module defines the symbol but nothing in the process says
// where its block is (no relocation we can read, or a lazily bound descriptor).
var ErrTLSUnresolved = errors.New("TLS location not resolvable")

// ResolveTLS builds the recipe for module m. main says whether m is the process's
// executable (from /proc/<pid>/exe). bias is the module's load bias; read reads the
// target's memory (the relocated GOT slots). The executable needs no reads.
//
// Preference for shared objects: TPOFF64 (static), then TLSDESC (static or dynamic,
// whichever the loader chose), then DTPMOD64 (dynamic). The GOT contents are what the
// loader's relocation code writes (glibc sysdeps/x86_64/dl-machine.h and
// sysdeps/aarch64/dl-machine.h): TPOFF64 = st_value + addend - l_tls_offset (variant II)
// or + l_tls_offset (variant I, TPREL64); a static TLSDESC argument is the same offset; a
// dynamic one points at {module id, st_value + addend}.
func ResolveTLS(m TLSModule, main bool, bias uint64, libc Libc, read func(addr uint64, buf []byte) error) (TLSAccess, error) {
	abi, ok := abiOf(m.Machine)
	if !ok {
		return TLSAccess{}, ErrUnsupportedArch
	}
	if main {
		return TLSAccess{Kind: TLSStatic, TPOffset: m.StaticTLSOffset(), Via: "executable"}, nil
	}
	dtv := TLSAccess{Kind: TLSDynamic, DTVOffset: uint64(abi.dtvOffset[libc]), DTVEntrySize: 16}
	if libc == Musl {
		dtv.DTVEntrySize = 8
	}
	name := func(k TLSRelocKind) string { return k.Name(m.Machine) }
	// A static offset lies below tp in variant II, at or after the TCB in variant I.
	staticSide := func(off int64) bool {
		if abi.variantI {
			return off >= int64(abi.tcbSize)
		}
		return off < 0
	}
	// varOff converts "block (or variable) + addend" values back to the variable.
	varOff := func(r TLSReloc) int64 {
		if r.Local {
			return int64(m.Value) - r.Addend
		}
		return -r.Addend
	}
	var firstErr error
	note := func(err error) {
		if firstErr == nil {
			firstErr = err
		}
	}
	var w [16]byte
	for _, want := range []TLSRelocKind{RelocTPOff, RelocTLSDesc, RelocDTPMod} {
		for _, r := range m.Relocs {
			if r.Kind != want {
				continue
			}
			switch r.Kind {
			case RelocTPOff:
				if err := read(bias+r.Offset, w[:8]); err != nil {
					note(err)
					continue
				}
				off := int64(binary.NativeEndian.Uint64(w[:8])) + varOff(r)
				if !staticSide(off) {
					note(fmt.Errorf("%w: tp offset %d from %v is on the wrong side of tp", ErrTLSUnresolved, off, name(r.Kind)))
					continue
				}
				return TLSAccess{Kind: TLSStatic, TPOffset: off, Via: name(r.Kind)}, nil
			case RelocTLSDesc:
				if err := read(bias+r.Offset, w[:16]); err != nil {
					note(err)
					continue
				}
				arg := binary.NativeEndian.Uint64(w[8:16])
				if !abi.variantI && int64(arg) < 0 { // static resolver: the argument is the (negative) tp offset
					return TLSAccess{Kind: TLSStatic, TPOffset: int64(arg) + varOff(r), Via: name(r.Kind) + " (static)"}, nil
				}
				// Dynamic resolver: the argument points at {module id, offset, …}. In variant I
				// a static argument is a small positive offset, so the pointer reading is
				// tried first: an offset below mmap_min_addr reads nothing.
				err := read(arg, w[:16])
				mod, off := binary.NativeEndian.Uint64(w[0:8]), binary.NativeEndian.Uint64(w[8:16])
				want := uint64(r.Addend)
				if !r.Local {
					want = m.Value + uint64(r.Addend)
				}
				if err == nil && mod != 0 && mod <= 1<<20 && off == want {
					a := dtv
					a.ModuleID, a.BlockOffset, a.Via = mod, m.Value, name(r.Kind)+" (dynamic)"
					return a, nil
				}
				if abi.variantI && arg < maxStaticTLSOffset && staticSide(int64(arg)+varOff(r)) {
					return TLSAccess{Kind: TLSStatic, TPOffset: int64(arg) + varOff(r), Via: name(r.Kind) + " (static)"}, nil
				}
				if err != nil {
					note(err)
					continue
				}
				// A lazily bound descriptor points at its relocation, not at a tls_index.
				note(fmt.Errorf("%w: TLSDESC argument {%d,%d} is not a resolved tls_index", ErrTLSUnresolved, mod, off))
				continue
			case RelocDTPMod:
				if err := read(bias+r.Offset, w[:8]); err != nil {
					note(err)
					continue
				}
				mod := binary.NativeEndian.Uint64(w[:8])
				if mod == 0 || mod > 1<<20 {
					note(fmt.Errorf("%w: module id %d", ErrTLSUnresolved, mod))
					continue
				}
				a := dtv
				a.ModuleID, a.BlockOffset, a.Via = mod, m.Value, name(r.Kind)
				return a, nil
			}
		}
	}
	if firstErr != nil {
		return TLSAccess{}, firstErr
	}
	return TLSAccess{}, fmt.Errorf("%w: shared object has no TLS relocation for %s", ErrTLSUnresolved, m.Symbol)
}

// maxStaticTLSOffset bounds a variant I static TLSDESC argument (a tp offset inside the
// static TLS area, which glibc sizes at start-up to the initial modules' blocks plus a
// surplus of a few KiB): anything larger that is not a tls_index is not a static offset.
const maxStaticTLSOffset = 1 << 24

// LoadBias computes a module's load bias from its mappings: the mapping of the first
// PT_LOAD's page starts at bias + that page's link-time address.
func LoadBias(maps []procfs.Mapping, modulePath string, m TLSModule, pageSize uint64) (uint64, bool) {
	pageOff := m.FirstLoadOffset &^ (pageSize - 1)
	for _, mp := range maps {
		if mp.Path == modulePath && mp.Offset == pageOff {
			return mp.Start - (m.FirstLoadVaddr &^ (pageSize - 1)), true
		}
	}
	return 0, false
}

// DetectLibc says musl when a musl loader or libc is mapped, glibc otherwise.
func DetectLibc(maps []procfs.Mapping) Libc {
	for _, mp := range maps {
		b := path.Base(mp.Path)
		if strings.HasPrefix(b, "ld-musl-") || strings.HasPrefix(b, "libc.musl-") {
			return Musl
		}
	}
	return Glibc
}
