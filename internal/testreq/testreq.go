// Package testreq turns a test's skip into a failure when the run said the test must run.
//
// A test that needs something the machine may lack (root, gcc, a built collector, a
// Jaeger binary, a browser) skips without it, which is right on a developer's laptop and
// wrong in CI: there a skip would pass silently. GHOSTDRIVER_REQUIRE lists, comma-separated,
// the prerequisites the run guarantees ("all": every one); the make targets and scripts
// that run such tests set it (.ci/run sets all). Skip then fails the test, with the
// reason, when its prerequisite is listed, and skips it otherwise.
package testreq

import (
	"os"
	"strings"
	"testing"
)

// Env is the variable read.
const Env = "GHOSTDRIVER_REQUIRE"

// Prerequisites a test may skip for; Skip refuses any other name, so a typo cannot turn
// a requirement off.
const (
	Root     = "root"     // euid 0 (BPF programs, tracefs, uprobes)
	GCC      = "gcc"      // a C compiler for the test programs
	Dist     = "dist"     // the ocb-built collector (GHOSTDRIVER_DIST)
	Jaeger   = "jaeger"   // the Jaeger binary (GHOSTDRIVER_JAEGER)
	Chromium = "chromium" // a headless browser for the report
	Setpriv  = "setpriv"  // util-linux setpriv, to drop capabilities
	FIFO     = "fifo"     // named pipes on the test's temporary directory
	BPFFS    = "bpffs"    // mounting a bpffs (root)
	VGPU     = "vgpu"     // the virtual GPU rig's artifacts (GHOSTDRIVER_VGPU_OUT)
	ARM64    = "arm64"    // the arm64 guest's artifacts (GHOSTDRIVER_ARM64_OUT)
)

var known = map[string]bool{Root: true, GCC: true, Dist: true, Jaeger: true, Chromium: true, Setpriv: true, FIFO: true, BPFFS: true,
	VGPU: true, ARM64: true}

// Required reports whether the run guarantees what (GHOSTDRIVER_REQUIRE lists it or all).
func Required(what string) bool {
	for _, w := range strings.Split(os.Getenv(Env), ",") {
		if w = strings.TrimSpace(w); w == what || w == "all" {
			return true
		}
	}
	return false
}

// Skip skips t for reason, or fails it when what is required.
func Skip(t testing.TB, what, reason string) {
	t.Helper()
	if !known[what] {
		t.Fatalf("testreq: unknown prerequisite %q", what)
	}
	if Required(what) {
		t.Fatalf("%s=%q requires %s, but: %s", Env, os.Getenv(Env), what, reason)
	}
	t.Skip(reason)
}
