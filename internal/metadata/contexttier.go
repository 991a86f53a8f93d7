// The numbering of context tiers shared by the DRM job spans (emit.CtxTier*) and the CUDA
// submission spans: 0 none, 1 OTEP 4947 and 2 OBI (read in the kernel, enum ctx_tier of
// bpf/include/ctx_tier.h), 3 TRACEPARENT (user space).
package metadata

// ContextTierName is the ghostdriver.context.tier value of tier number t.
func ContextTierName(t uint8) string {
	switch t {
	case 0:
		return ContextTierNone
	case 1:
		return ContextTierOTEP4947
	case 2:
		return ContextTierOBI
	case 3:
		return ContextTierTraceparent
	}
	return ContextTierUnknown
}
