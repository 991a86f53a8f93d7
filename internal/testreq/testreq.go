// Package testreq turns a test's skip into a failure when the run said the test must run.
//
// A test that needs something the machine may lack (root, gcc, kernel BTF, a mountable
// tracefs) or an artifact another step builds (the collector, Jaeger, a rig's output)
// skips without it, which is right on a developer's laptop and wrong in CI: there a skip
// would pass silently. Every such skip goes through Skip with the prerequisite's name.
// GHOSTDRIVER_REQUIRE lists, comma-separated, what the run guarantees; Skip then fails
// the test, with the reason, when its prerequisite is listed, and skips it otherwise.
//
// The names come in two kinds:
//   - machine prerequisites: what CI's machine (.ci/run: Debian 12, root, kernel 6.18 with
//     BTF, no DRM device, no kprobes, no fentry) has, including the absences some tests are
//     written for (no fentry, no DRM, no NVIDIA driver, tracefs not mounted). "all" stands
//     for every one of them: .ci/run sets it, so there a test that meant to run and skips
//     fails. What CI's machine cannot have (a DRM device, kprobes, fentry, a GPU) is never
//     a machine prerequisite: a test that needs it takes a name "all" leaves out, as the
//     rig's output does (vgpu: the DRM device is the rig's).
//   - artifacts: required by name only, by the make target or script that builds them and
//     runs their tests (test-dist, test-docs, test-jaeger, test-arm64, test-vgpu), because
//     `make test`'s go test ./... runs those tests too, without the artifact.
//
// A skip that is no prerequisite at all (-short, a benchmark's output variable, a child
// test run only by its parent, a phase the run was told to leave out) stays a plain
// t.Skip whose reason says so.
package testreq

import (
	"os"
	"strings"
	"testing"
)

// Env is the variable read.
const Env = "GHOSTDRIVER_REQUIRE"

// Machine prerequisites ("all" covers them): CI's machine meets every one.
const (
	Root     = "root"     // euid 0 (BPF programs, tracefs, uprobes)
	GCC      = "gcc"      // a C compiler (and binutils) for the test programs
	Chromium = "chromium" // a headless browser for the report
	Setpriv  = "setpriv"  // util-linux setpriv, to drop capabilities
	FIFO     = "fifo"     // named pipes on the test's temporary directory
	BPFFS    = "bpffs"    // mounting a bpffs (root)

	BTF         = "btf"          // the kernel's BTF (/sys/kernel/btf/vmlinux)
	Tracefs     = "tracefs"      // tracefs mounted or mountable, with instances
	THP         = "thp"          // transparent huge pages that MADV_COLLAPSE collapses (6.1+)
	TaskStorage = "taskstorage"  // BPF task storage maps (5.11+)
	PidfdThread = "pidfd-thread" // a pidfd of one thread (PIDFD_THREAD, 6.9+)
	DevFuse     = "devfuse"      // /dev/fuse, a device whose ioctls the tests follow
	DevFull     = "devfull"      // /dev/full, to fail writes
	Memfd       = "memfd"        // memfd_create (3.17+)
	ProcMem     = "procmem"      // reading a child's memory (process_vm_readv, /proc/PID/mem)
	Linux       = "linux"        // Linux, where the live process-context tests run
	LinuxAMD64  = "linux-amd64"  // linux/amd64, where the live thread-context tests run
	UserTP      = "user-tp"      // a user thread pointer on Go's threads (amd64's fs base)

	NoFentry         = "no-fentry"         // no fentry/fexit: the no-fentry expectations of CI's machine
	NoDRM            = "no-drm"            // no DRM device, no gpu_sched module
	NoNVIDIA         = "no-nvidia"         // no NVIDIA kernel driver (/proc/driver/nvidia)
	TracefsUnmounted = "tracefs-unmounted" // tracefs not mounted before the test (it mounts it)
)

// Artifacts, required by name only.
const (
	Dist   = "dist"   // the ocb-built collector (GHOSTDRIVER_DIST)
	Jaeger = "jaeger" // the Jaeger binary (GHOSTDRIVER_JAEGER)
	VGPU   = "vgpu"   // the virtual GPU rig's output (GHOSTDRIVER_VGPU_OUT), every phase of it
	ARM64  = "arm64"  // the arm64 guest's output (GHOSTDRIVER_ARM64_OUT)
	Virgl  = "virgl"  // the virgl rig's output (GHOSTDRIVER_VIRGL_OUT)
)

// machine and byName are the known names: Skip refuses any other, so a typo cannot
// turn a requirement off.
var (
	machine = map[string]bool{
		Root: true, GCC: true, Chromium: true, Setpriv: true, FIFO: true, BPFFS: true,
		BTF: true, Tracefs: true, THP: true, TaskStorage: true, PidfdThread: true, DevFuse: true,
		DevFull: true, Memfd: true, ProcMem: true, Linux: true, LinuxAMD64: true, UserTP: true,
		NoFentry: true, NoDRM: true, NoNVIDIA: true, TracefsUnmounted: true,
	}
	byName = map[string]bool{Dist: true, Jaeger: true, VGPU: true, ARM64: true, Virgl: true}
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
	if !machine[what] && !byName[what] {
		t.Fatalf("testreq: unknown prerequisite %q", what)
	}
	if Required(what) {
		t.Fatalf("%s=%q requires %s, but: %s", Env, os.Getenv(Env), what, reason)
	}
	t.Skip(reason)
}
