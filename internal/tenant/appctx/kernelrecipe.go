// The in-kernel form of a TLSAccess: the value of the `procs` table of bpf/include/appctx.h
// (struct tls_recipe), written by every live source whose programs read thread context
// (the DRM probe at submit ioctls, the CUDA source at API calls).

package appctx

// KernelRecipe mirrors struct tls_recipe (bpf/include/appctx.h) field for field; a
// cilium/ebpf map update marshals it as the C layout (56 bytes, no implicit padding).
type KernelRecipe struct {
	Kind         uint8 // 0 none, 1 static, 2 DTV (enum tls_kind)
	_            [7]uint8
	TPOffset     int64
	ModuleID     uint64
	BlockOffset  uint64
	DTVOffset    uint64
	DTVEntrySize uint64
	// DTVLenOffset is where the DTV's length word sits relative to dtv: glibc keeps it
	// in dtv[-1].counter (16-byte entries, -16), musl in dtv[0] (0).
	DTVLenOffset int64
}

// KernelRecipeOf is the table value for a (kind 0, "known, no thread context", when a
// is nil or unresolved).
func KernelRecipeOf(a *TLSAccess) KernelRecipe {
	var v KernelRecipe
	if a == nil {
		return v
	}
	switch a.Kind {
	case TLSStatic:
		v.Kind, v.TPOffset = 1, a.TPOffset
	case TLSDynamic:
		v.Kind, v.ModuleID, v.BlockOffset = 2, a.ModuleID, a.BlockOffset
		v.DTVOffset, v.DTVEntrySize = a.DTVOffset, a.DTVEntrySize
		if a.DTVEntrySize == 16 {
			v.DTVLenOffset = -16
		}
	}
	return v
}
