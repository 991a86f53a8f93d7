// The header layouts of tracefs and trace-cmd text, one line each, and the timestamp
// arithmetic.
package ftrace

import (
	"testing"

	"github.com/ghostdriver/ghostdriver/internal/event"
)

func TestHeaderLayouts(t *testing.T) {
	const p = "dma_fence_signaled: driver=amdgpu timeline=gfx_0.0.0 context=12 seqno=99081"
	base := event.Event{Kind: event.FenceSignaled, Name: "dma_fence_signaled", Driver: "amdgpu", Timeline: "gfx_0.0.0", Fence: fk(12, 99081)}
	with := func(comm string, pid, tid uint32, cpu int32, ts int64) event.Event {
		e := base
		e.Comm, e.PID, e.TID, e.CPU, e.Time = comm, pid, tid, cpu, ts
		return e
	}
	tests := []struct {
		name, line string
		want       event.Event
	}{
		{"tracefs 5 flags", "          <idle>-0       [018] d.h3.  2571.915687: " + p, with("<idle>", 0, 0, 18, 2571_915_687_000)},
		{"tracefs 4 flags", "     kworker/2:1-109     [002] d...   505.065121: " + p, with("kworker/2:1", 0, 109, 2, 505_065_121_000)},
		{"tracefs no flags", "          chrome-1539  [001] 18420.681687: " + p, with("chrome", 0, 1539, 1, 18420_681_687_000)},
		{"tracefs ns clock", "            Xorg-1588    [001] .....   149.391136123: " + p, with("Xorg", 0, 1588, 1, 149_391_136_123)},
		{"tgid column", "HwBinder:595_2-650   (  595) [001] .... 584509.195956: " + p, with("HwBinder:595_2", 595, 650, 1, 584509_195_956_000)},
		{"tgid unknown", "           <...>-3268  (-------) [010] ....   505.064394: " + p, with("", 0, 3268, 10, 505_064_394_000)},
		{"comm with blank", "     Web Content-123     [003] .....  100.000001: " + p, with("Web Content", 0, 123, 3, 100_000_001_000)},
		{"comm with dashes", "  glmark2-es2-way-383   [002] ....   370.958786: " + p, with("glmark2-es2-way", 0, 383, 2, 370_958_786_000)},
		{"comm with brackets", "   [pool]-[1]-77  [000] ....     1.000000: " + p, with("[pool]-[1]", 0, 77, 0, 1_000_000_000)},
		{"trace-cmd", "           sdma0-199   [003] 630659.230531: dma_fence_signaled:   driver=amdgpu timeline=gfx_0.0.0 context=12 seqno=99081", with("sdma0", 0, 199, 3, 630659_230_531_000)},
		{"trace-cmd -l", "           sdma0-199   [003] d..1. 630659.230531: " + p, with("sdma0", 0, 199, 3, 630659_230_531_000)},
		{"trace-cmd short", "    SkinningApp-2837 475.1688: " + p, with("SkinningApp", 0, 2837, -1, 475_168_800_000)},
		{"tab separated", "x-1\t[000]\t1.5: " + p, with("x", 0, 1, 0, 1_500_000_000)},
		{"trailing blanks and CR", "x-1 [000] 1.5: " + p + "  \r", with("x", 0, 1, 0, 1_500_000_000)},
		{"large timestamp", "x-1 [000] 9223372035.999999999: " + p, with("x", 0, 1, 0, 9223372035_999_999_999)},
	}
	for _, tt := range tests {
		checkOutcome(t, tt.name, tt.line, ev(tt.want))
	}
}

func TestNonEventLines(t *testing.T) {
	header := outcome{header: true}
	for _, tt := range []struct {
		line string
		want outcome
	}{
		{"# tracer: nop", header},
		{"#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION", header},
		{"#              | |         |   |||||     |         |", header},
		{"##### CPU 2 buffer started ####", header},
		{"cpus=4", header},
		{"version = 6", header},
		{"CPU 0 is empty", header},
		{"", header},
		{"   ", header},
		{"before:", malformed},
		{"sched_job=8, timeline=gfx_0.0.0, context=177, seqno=1,", malformed},
	} {
		checkOutcome(t, tt.line, tt.line, tt.want)
	}
}

// The notes of lost events, as tracefs (print_trace_line in kernel/trace/trace.c:
// "CPU:%d [LOST %lu EVENTS]", "CPU:%d [LOST EVENTS]") and trace-cmd ("CPU:%d [%lld EVENTS
// DROPPED]", "CPU:%d [EVENTS DROPPED]") print them: n is added to Lost, and a note that
// names its CPU is an EventsLost event at the time of the line before it.
func TestLostEvents(t *testing.T) {
	const before = "          <idle>-0       [002] d.h3.  2571.915687: dma_fence_signaled: driver=amdgpu timeline=gfx_0.0.0 context=12 seqno=99081"
	for _, tt := range []struct {
		line string
		cpu  int32 // -1: no event
		n    uint64
	}{
		{"CPU:2 [LOST 3 EVENTS]", 2, 3},
		{"CPU:0 [LOST 18446744073709551615 EVENTS]", 0, 1<<64 - 1},
		{"CPU:7 [LOST EVENTS]", 7, 0},
		{"CPU:7 [204600 EVENTS DROPPED]", 7, 204600},
		{"CPU:3 [EVENTS DROPPED]", 3, 0},
		{"CPU: 1 [1234 EVENTS DROPPED]", 1, 1234},
		{"[1234 EVENTS DROPPED]", -1, 1234},
		{"<0>[  812.512345] CPU:1 [LOST 12 EVENTS]", 1, 12},
	} {
		d := NewDecoder()
		var e event.Event
		if !d.Decode([]byte(before), 1, &e) {
			t.Fatalf("line before: not decoded")
		}
		ok := d.Decode([]byte(tt.line), 2, &e)
		s := d.Stats()
		if s.Lost != tt.n || s.Malformed != 0 {
			t.Errorf("%q: lost %d malformed %d; want %d, 0", tt.line, s.Lost, s.Malformed, tt.n)
		}
		if tt.cpu < 0 {
			if ok || d.Headers() != 1 {
				t.Errorf("%q: ok %v headers %d; want a header", tt.line, ok, d.Headers())
			}
			continue
		}
		want := event.Event{Kind: event.EventsLost, Time: 2571_915_687_000, CPU: tt.cpu, Arg: tt.n, Name: "lost_events"}
		if !ok || e != want || d.Headers() != 0 || s.EventsOf(event.EventsLost) != 1 {
			t.Errorf("%q: ok %v %+v headers %d; want %+v", tt.line, ok, e, d.Headers(), want)
		}
	}
}

func TestParseTime(t *testing.T) {
	for _, tt := range []struct {
		in   string
		ns   int64
		good bool
	}{
		{"0.000001", 1_000, true},
		{"475.1688", 475_168_800_000, true},
		{"630659.131089", 630659_131_089_000, true},
		{"1.123456789", 1_123_456_789, true},
		{"1.1234567891", 0, false}, // below a nanosecond
		{"12345678901.0", 0, false},
		{"9223372036.0", 0, false}, // overflows int64 ns
		{".5", 0, false},
		{"5.", 0, false},
	} {
		ns, ok := parseTime([]byte(tt.in))
		if ok != tt.good || ns != tt.ns {
			t.Errorf("parseTime(%q) = %d, %v; want %d, %v", tt.in, ns, ok, tt.ns, tt.good)
		}
	}
}

func TestFunctionTracerLine(t *testing.T) {
	checkOutcome(t, "function", "            bash-1234  [000] ....  12.345678: do_sys_open <-__x64_sys_openat", unknown("function"))
}
