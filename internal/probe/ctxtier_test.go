package probe

import (
	"strings"
	"testing"

	"github.com/cilium/ebpf/btf"

	"github.com/ghostdriver/ghostdriver/internal/ctxtier"
)

// TestContextTierMatchesBPF holds the one Go definition of the context tiers
// (internal/ctxtier) to the C side: every value of enum ctx_tier as the compiled object's
// BTF carries it (bpf/include/ctx_tier.h, through bpf2go's -type ctx_tier), and the size and
// default of ctx_order (MAX_CTX_TIERS, bpf/include/appctx.h).
func TestContextTierMatchesBPF(t *testing.T) {
	spec, err := loadCommon()
	if err != nil {
		t.Fatal(err)
	}
	var enum *btf.Enum
	if err := spec.Types.TypeByName("ctx_tier", &enum); err != nil {
		t.Fatalf("enum ctx_tier in common's BTF: %v", err)
	}
	seen := map[uint8]bool{}
	for _, v := range enum.Values {
		name := strings.ToLower(strings.TrimPrefix(v.Name, "CTX_TIER_"))
		want, ok := ctxtier.Parse(name)
		if name == ctxtier.NameNone {
			want, ok = ctxtier.None, true
		}
		switch {
		case !ok:
			t.Errorf("C %s = %d has no tier in internal/ctxtier", v.Name, v.Value)
		case v.Value != uint64(want):
			t.Errorf("C %s = %d, internal/ctxtier says %d", v.Name, v.Value, want)
		case want != ctxtier.None && !ctxtier.InKernel(want):
			t.Errorf("C %s: internal/ctxtier says the kernel does not read tier %d", v.Name, want)
		}
		seen[uint8(v.Value)] = true
	}
	// The other way: every tier Go says the kernel reads is in the C enum.
	for tier := range uint8(255) {
		if ctxtier.InKernel(tier) && !seen[tier] {
			t.Errorf("internal/ctxtier says the kernel reads tier %d (%s); enum ctx_tier has no such value", tier, ctxtier.Name(tier))
		}
	}
	// Typed constants from the same enum (a rename in C breaks the build here).
	if uint8(commonCtxTierCTX_TIER_OTEP4947) != ctxtier.OTEP4947 || uint8(commonCtxTierCTX_TIER_OBI) != ctxtier.OBI || uint8(commonCtxTierCTX_TIER_NONE) != ctxtier.None {
		t.Errorf("bpf2go constants %d %d %d differ from internal/ctxtier", commonCtxTierCTX_TIER_NONE, commonCtxTierCTX_TIER_OTEP4947, commonCtxTierCTX_TIER_OBI)
	}

	sys, err := loadSyscalls()
	if err != nil {
		t.Fatal(err)
	}
	v := sys.Variables["ctx_order"]
	if v == nil {
		t.Fatal("syscalls object has no ctx_order")
	}
	if v.Size() != ctxtier.MaxKernel {
		t.Errorf("ctx_order holds %d tiers (MAX_CTX_TIERS), ctxtier.MaxKernel = %d", v.Size(), ctxtier.MaxKernel)
	}
	var order [ctxtier.MaxKernel]uint8
	if err := v.Get(&order); err != nil {
		t.Fatal(err)
	}
	want, err := ctxtier.KernelOrder([]string{ctxtier.NameOTEP4947, ctxtier.NameOBI})
	if err != nil || order != want {
		t.Errorf("C default ctx_order %v, Go's default in-kernel order %v (%v)", order, want, err)
	}
}
