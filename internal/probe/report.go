// What the DRM source's capability report (internal/capability) says beyond its lines:
// whether the submit ioctls fell to the syscall-wide rung and what that costs, and
// whether any hook observes GPU jobs.

package probe

import (
	"strings"

	"github.com/ghostdriver/ghostdriver/internal/capability"
)

// newReport is the DRM source's empty report.
func newReport() capability.Report { return capability.Report{Source: capability.SourceDRM} }

// SyscallFallback reports whether the submit ioctls are hooked with raw_tp
// sys_enter/sys_exit, the rung that runs for every syscall of the host.
func SyscallFallback(r capability.Report) bool {
	for _, e := range r.Entries {
		if e.Stage == StageIoctl && e.Status == capability.StatusAttached && e.Hook == "raw_tp/sys_enter" {
			return true
		}
	}
	return false
}

// syscallFallbackCost is the measured price of that rung (BENCHMARKS.md, "The syscall
// hook fallback", bench/syscallfallback): what a getppid loop paid per call, raw_tp vs
// nothing attached, on the H200 host (the 2-core CI VM: +166 ns of 1178).
const syscallFallbackCost = "measured: +86 ns on every syscall, getppid 139 → 225 ns on an H200 host; BENCHMARKS.md, \"The syscall hook fallback\""

// FallbackWarning is the one line said when SyscallFallback: why, and what it costs.
func FallbackWarning(r capability.Report) string {
	if !SyscallFallback(r) {
		return ""
	}
	why := "tracefs " + r.Tracefs
	if r.Tracefs == "" {
		why = "the syscall tracepoints are unavailable"
	}
	return "submit ioctls are hooked with raw_tp sys_enter/sys_exit, which run for every syscall of the host (" +
		syscallFallbackCost + "): " + why
}

// anyJobHook reports whether a hook that observes GPU jobs is attached (not only the
// process-lifecycle hooks or OBI's map).
func anyJobHook(r capability.Report) bool {
	for _, e := range r.Entries {
		if e.Status == capability.StatusAttached && e.Stage != StageProcess && e.Stage != StageAppContext {
			return true
		}
	}
	return false
}

// firstLine is the first line of a multi-line error (a verifier log, a format file's
// complaint): the report's entries are one line each.
func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}
