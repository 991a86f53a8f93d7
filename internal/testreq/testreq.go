// Package testreq turns a test's skip into a failure when the run said the test must run.
//
// A test that needs something the machine may lack (root, gcc, a browser) or an artifact
// another step builds (the collector, Jaeger, a rig's output) skips without it, which is
// right on a developer's laptop and wrong in CI: there a skip would pass silently.
// GHOSTDRIVER_REQUIRE lists, comma-separated, what the run guarantees; Skip then fails
// the test, with the reason, when its prerequisite is listed, and skips it otherwise.
// "all" stands for every machine prerequisite (.ci/run sets it: the machine is prepared
// for them all); an artifact is required only by name, by the make target or script that
// builds it and runs its tests (test-dist, test-docs, test-jaeger, test-arm64), because
// `make test`'s go test ./... runs those tests too, without the artifact.
package testreq

import (
	"os"
	"strings"
	"testing"
)

// Env is the variable read.
const Env = "GHOSTDRIVER_REQUIRE"

// Machine prerequisites ("all" covers them).
const (
	Root     = "root"     // euid 0 (BPF programs, tracefs, uprobes)
	GCC      = "gcc"      // a C compiler (and binutils) for the test programs
	Chromium = "chromium" // a headless browser for the report
	Setpriv  = "setpriv"  // util-linux setpriv, to drop capabilities
	FIFO     = "fifo"     // named pipes on the test's temporary directory
	BPFFS    = "bpffs"    // mounting a bpffs (root)
)

// Artifacts, required by name only.
const (
	Dist   = "dist"   // the ocb-built collector (GHOSTDRIVER_DIST)
	Jaeger = "jaeger" // the Jaeger binary (GHOSTDRIVER_JAEGER)
	VGPU   = "vgpu"   // the virtual GPU rig's output (GHOSTDRIVER_VGPU_OUT)
	ARM64  = "arm64"  // the arm64 guest's output (GHOSTDRIVER_ARM64_OUT)
	Virgl  = "virgl"  // the virgl rig's output (GHOSTDRIVER_VIRGL_OUT)
)

// machine and artifact are the known names: Skip refuses any other, so a typo cannot
// turn a requirement off.
var (
	machine  = map[string]bool{Root: true, GCC: true, Chromium: true, Setpriv: true, FIFO: true, BPFFS: true}
	artifact = map[string]bool{Dist: true, Jaeger: true, VGPU: true, ARM64: true, Virgl: true}
)

// Required reports whether the run guarantees what: GHOSTDRIVER_REQUIRE names it, or
// says all and what is a machine prerequisite.
func Required(what string) bool {
	for _, w := range strings.Split(os.Getenv(Env), ",") {
		if w = strings.TrimSpace(w); w == what || w == "all" && machine[what] {
			return true
		}
	}
	return false
}

// Skip skips t for reason, or fails it when what is required.
func Skip(t testing.TB, what, reason string) {
	t.Helper()
	if !machine[what] && !artifact[what] {
		t.Fatalf("testreq: unknown prerequisite %q", what)
	}
	if Required(what) {
		t.Fatalf("%s=%q requires %s, but: %s", Env, os.Getenv(Env), what, reason)
	}
	t.Skip(reason)
}
