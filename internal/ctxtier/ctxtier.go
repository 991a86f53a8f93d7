// Package ctxtier is the one definition of the application-context tiers: where the trace
// context a job's span is parented to came from, in the lookup order of docs/design.md
// ("Linking to application traces"). Events (event.Event.CtxTier), jobs
// (assemble.Job.CtxTier), CUDA submissions and the ghostdriver.context.tier attribute all
// carry these numbers and names.
//
// The tiers read in the kernel (OTEP4947, OBI) are enum ctx_tier of bpf/include/ctx_tier.h;
// internal/probe's TestContextTierMatchesBPF holds the two together through bpf2go's
// `-type ctx_tier` output. TRACEPARENT is read in user space only.
package ctxtier

import (
	"errors"
	"strconv"
)

// Tier numbers. 0 is "no context found".
const (
	None        uint8 = 0
	OTEP4947    uint8 = 1 // otel_thread_ctx_v1 TLS record of the submitting thread, read in the kernel
	OBI         uint8 = 2 // OBI's pinned traces_ctx_v1 map, by pid_tgid, read in the kernel
	Traceparent uint8 = 3 // TRACEPARENT in the process environment, read in user space
)

// Names: the configuration's context.tiers entries and the ghostdriver.context.tier values.
const (
	NameNone        = "none"
	NameOTEP4947    = "otep4947"
	NameOBI         = "obi"
	NameTraceparent = "traceparent"
	NameUnknown     = "unknown" // a number outside the table
)

// OBIMapPath is where OBI pins its traces_ctx_v1 map by default: the default of every
// obi_map_path (receiver, CLI, probe and CUDA configurations). The map's name is bpf2go's
// syscallsMapTracesCtxV1 and cudaBPFMapTracesCtxV1 (checked in internal/probe and internal/cuda).
const OBIMapPath = "/sys/fs/bpf/traces_ctx_v1"

var names = [...]string{None: NameNone, OTEP4947: NameOTEP4947, OBI: NameOBI, Traceparent: NameTraceparent}

// MaxKernel is the number of tiers the kernel reads (MAX_CTX_TIERS, bpf/include/appctx.h):
// the length of the ctx_order table.
const MaxKernel = 2

// Name is the name of tier t (NameUnknown for a number outside the table).
func Name(t uint8) string {
	if int(t) < len(names) {
		return names[t]
	}
	return NameUnknown
}

// Parse is the tier of a configuration name; "none" is not a tier one can ask for.
func Parse(name string) (uint8, bool) {
	for t, n := range names {
		if n == name && uint8(t) != None {
			return uint8(t), true
		}
	}
	return None, false
}

// InKernel reports whether the kernel reads tier t (the DRM probe at submit ioctls, the
// CUDA source at API calls).
func InKernel(t uint8) bool { return t == OTEP4947 || t == OBI }

// KernelOrder is the ctx_order value for the in-kernel tier names in lookup order
// (zero-terminated); an unknown, user-space or repeated name is an error.
func KernelOrder(tiers []string) ([MaxKernel]uint8, error) {
	var out [MaxKernel]uint8
	n := 0
	for _, name := range tiers {
		t, ok := Parse(name)
		if !ok || !InKernel(t) {
			return out, errors.New("unknown in-kernel context tier (want otep4947 or obi): " + strconv.Quote(name))
		}
		for _, seen := range out[:n] {
			if seen == t {
				return out, errors.New("context tier listed twice: " + strconv.Quote(name))
			}
		}
		if n == MaxKernel {
			return out, errors.New("more in-kernel context tiers than the kernel's table holds: " + strconv.Quote(name))
		}
		out[n] = t
		n++
	}
	return out, nil
}
