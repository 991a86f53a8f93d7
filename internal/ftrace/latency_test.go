// The latency format: lines of the kernel's documentation (Documentation/trace/ftrace.rst,
// irqsoff example) and event lines rendered with the kernel's own format strings
// (trace_output.c: lat_print_generic "%8.8s-%-7d %3d", trace_print_lat_fmt, and
// lat_print_timestamp " %4lldus%c: " or, verbose, "%16s %7d %3d %d %08x %08lx " +
// "[%08llx] %ld.%03ldms (+%ld.%03ldms): "), plain, and as ftrace_dump prints them into
// the kernel log (printk(KERN_EMERG): "<0>", the "[seconds]" prefix, the caller id).
package ftrace

import (
	"fmt"
	"testing"

	"github.com/ghostdriver/ghostdriver/internal/event"
)

// The documentation's irqsoff lines (function tracer: decoded as the "function" family,
// which is counted, not used): the header must read comm, pid, cpu and the time.
func TestLatencyDocumentationLines(t *testing.T) {
	for _, tt := range []struct {
		line string
		comm string
		tid  uint32
		cpu  int32
		us   int64
	}{
		{"  <idle>-0       0d.s2    0us+: _raw_spin_lock_irq <-run_timer_softirq", "<idle>", 0, 0, 0},
		{"  <idle>-0       0dNs3   17us : _raw_spin_unlock_irq <-run_timer_softirq", "<idle>", 0, 0, 17},
		{"         ps-6143    2d..1  259us+: trace_hardirqs_on <-_raw_spin_unlock_irqrestore", "ps", 6143, 2, 259},
		{"       bash-2042    3d...    0us : _raw_spin_lock_irqsave <-ata_scsi_queuecmd", "bash", 2042, 3, 0},
	} {
		var h header
		var tc taskColumns
		reason, noTS := splitAny(&tc, []byte(tt.line), &h)
		if reason != "" || noTS {
			t.Errorf("%q: %q %v", tt.line, reason, noTS)
			continue
		}
		if string(h.comm) != tt.comm || h.tid != tt.tid || h.cpu != tt.cpu || h.ts != tt.us*1000 || string(h.name) != "function" {
			t.Errorf("%q: comm %q tid %d cpu %d ts %d name %q", tt.line, h.comm, h.tid, h.cpu, h.ts, h.name)
		}
		checkOutcome(t, tt.line, tt.line, unknown("function"))
	}
}

// latPlain renders an event line the way trace_print_lat_context does without verbose.
func latPlain(comm string, pid, cpu int, flags string, us int64, mark byte, name, payload string) string {
	return fmt.Sprintf("%8.8s-%-7d %3d%s %4dus%c: %s: %s", comm, pid, cpu, flags, us, mark, name, payload)
}

// latVerbose renders it the way the verbose variant does (in_ns clock).
func latVerbose(comm string, pid, cpu, flags, preempt int, idx uint64, absUS, startUS, relUS int64, name, payload string) string {
	return fmt.Sprintf("%16s %7d %3d %d %08x %08x ", comm, pid, cpu, flags, preempt, idx) +
		fmt.Sprintf("[%08x] %d.%03dms (+%d.%03dms): ", absUS, startUS/1000, startUS%1000, relUS/1000, relUS%1000) +
		name + ": " + payload
}

func TestLatencyEventLines(t *testing.T) {
	const p = "driver=amdgpu timeline=gfx_0.0.0 context=12 seqno=99081"
	base := event.Event{Kind: event.FenceSignaled, Name: "dma_fence_signaled", Driver: "amdgpu", Timeline: "gfx_0.0.0", Fence: fk(12, 99081)}
	with := func(comm string, tid uint32, cpu int32, ns int64) event.Event {
		e := base
		e.Comm, e.TID, e.CPU, e.Time = comm, tid, cpu, ns
		return e
	}
	plain := latPlain("kworker/u16:3", 215, 3, "d.h2.", 1234, ' ', "dma_fence_signaled", p)
	if want := "kworker/-215       3d.h2. 1234us : dma_fence_signaled: " + p; plain != want {
		t.Fatalf("rendering: %q, want %q", plain, want)
	}
	tests := []struct {
		name, line string
		want       event.Event
	}{
		// the comm is cut to 8 bytes by "%8.8s"
		{"plain", plain, with("kworker/", 215, 3, 1_234_000)},
		{"plain four flags, mark", latPlain("sdma0", 199, 0, "d.h1", 7, '+', "dma_fence_signaled", p), with("sdma0", 199, 0, 7_000)},
		{"plain wide time and cpu", latPlain("Xorg", 1588, 117, "dNh2.", 987654321, '$', "dma_fence_signaled", p), with("Xorg", 1588, 117, 987654321_000)},
		{"plain pid of 8 digits", latPlain("gnome-shell", 12345678, 1, "....", 12, ' ', "dma_fence_signaled", p), with("gnome-sh", 12345678, 1, 12_000)},
		{"dmesg", "[  812.512345] " + plain, with("kworker/", 215, 3, 1_234_000)},
		{"dmesg raw level", "<0>[  812.512345] " + plain, with("kworker/", 215, 3, 1_234_000)},
		{"dmesg caller id", "[  812.512345][    C3] " + plain, with("kworker/", 215, 3, 1_234_000)},
		{"kmsg level only", "<0>" + plain, with("kworker/", 215, 3, 1_234_000)},
		// verbose: the bracketed absolute microseconds are the time
		{"verbose", latVerbose("Web Content", 4321, 2, 9, 1, 0x2a, 0x1e240, 3456, 12, "dma_fence_signaled", p), with("Web Content", 4321, 2, 0x1e240*1000)},
		{"verbose dmesg", "<0>[    5.689457] " + latVerbose("sdma0", 199, 0, 1, 0, 7, 5689000, 1, 0, "dma_fence_signaled", p), with("sdma0", 199, 0, 5689000_000)},
	}
	for _, tt := range tests {
		checkOutcome(t, tt.name, tt.line, ev(tt.want))
	}
}

// Lines of an ftrace dump in the kernel log that are not events are headers, whatever
// else the log says between them; a latency line with a counter clock (" %4lld: ", no
// unit) has no time to read and is malformed.
func TestLatencyDumpAround(t *testing.T) {
	header := outcome{header: true}
	for _, tt := range []struct {
		line string
		want outcome
	}{
		{"[   46.129062] Dumping ftrace buffer:", header},
		{"[   46.129406]    (ftrace buffer empty)", header},
		{"<0>[   46.129406] ---------------------------------", header},
		{"[ 3686.815852] Modules linked in:", header},
		{"Dumping ftrace buffer:", header},
		{"  <idle>-0       0d.s2 1234: _raw_spin_lock_irq <-run_timer_softirq", malformed},
	} {
		checkOutcome(t, tt.line, tt.line, tt.want)
	}
}
