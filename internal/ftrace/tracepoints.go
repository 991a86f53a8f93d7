// The tracepoints this decoder turns into events, read from its one table (internal/eventdef), for
// whoever makes captures (`ghostdriver record`, the README's trace-cmd and Perfetto
// lines): enabling exactly these gives replay everything it decodes, and nothing it
// would only count as unknown.

package ftrace

import "github.com/ghostdriver/ghostdriver/internal/event"

// IoctlSyscallNR is the syscall number raw_syscalls sys_enter/sys_exit lines are decoded
// for (the ioctl on x86-64); a recorder that falls back to raw_syscalls filters on it.
const IoctlSyscallNR = ioctlNR

// DecodedTracepoints returns the kernel tracepoint name (Event.Name) of every table
// entry that decodes to an event, once each, in table order. trace_marker writes
// ("print") are left out: they are not an event one enables.
func DecodedTracepoints() []string {
	var out []string
	seen := map[string]bool{}
	for _, e := range events {
		if e.kind == event.KindUnknown || e.kind == event.Marker {
			continue
		}
		name := e.name
		if e.tracepoint != "" {
			name = e.tracepoint
		}
		if !seen[name] {
			seen[name] = true
			out = append(out, name)
		}
	}
	return out
}

// TracepointSystem is the TRACE_SYSTEM the table gives a decoded tracepoint name (a
// driver's own event: "pvr", "vpu", ...), "" where it names none (the core's events, found
// in whichever system has them). A recorder enables a driver's event in its system only:
// a generic name such as ivpu's "job" may exist in other systems too.
func TracepointSystem(name string) string {
	for _, e := range events {
		n := e.name
		if e.tracepoint != "" {
			n = e.tracepoint
		}
		if n == name && e.kind != event.KindUnknown && e.system != "" {
			return e.system
		}
	}
	return ""
}
