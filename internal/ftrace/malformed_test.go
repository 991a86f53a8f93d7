// Hostile and broken input: every line has a counted outcome, nothing panics, nothing stops.
package ftrace

import (
	"bytes"
	"math/rand"
	"strings"
	"testing"

	"github.com/ghostdriver/ghostdriver/internal/event"
)

func TestMalformedLines(t *testing.T) {
	const hdr = "  kworker/u64:3-412     [005] d..1.  1234.567890: "
	for _, tt := range []struct{ name, line string }{
		{"binary", "\x00\x01\x02\xff\xfe garbage \x1b[31m"},
		{"bad timestamp", "x-1 [000] 1.1234567891: dma_fence_init: driver=a timeline=b context=1 seqno=2"},
		{"no pid", "kworker [000] 1.5: dma_fence_init: driver=a timeline=b context=1 seqno=2"},
		{"pid not a number", "x-1a [000] 1.5: dma_fence_init: driver=a timeline=b context=1 seqno=2"},
		{"no name", hdr},
		{"name then junk", hdr + "dma_fence_init"},
		{"missing field", hdr + "dma_fence_init: driver=a timeline=b context=1"},
		{"extra field", hdr + "dma_fence_init: driver=a timeline=b context=1 seqno=2 extra=3"},
		{"number not a number", hdr + "dma_fence_init: driver=a timeline=b context=x seqno=2"},
		{"number overflows", hdr + "dma_fence_init: driver=a timeline=b context=18446744073709551616 seqno=2"},
		{"hex too long", hdr + "sys_enter_ioctl: fd: 0x00000003, cmd: 0x1c0186444c0186444, arg: 0x0"},
		{"pointer too short", hdr + "drm_sched_process_job: fence=8dd56 signaled"},
		{"empty payload", hdr + "amdgpu_cs_ioctl:"},
		{"trace-cmd parse failure", hdr + "amdgpu_cs_ioctl: [FAILED TO PARSE] sched_job_id=8 timeline=gfx"},
		{"irq ret word", hdr + "irq_handler_exit: irq=45 ret=maybe"},
		{"too long", hdr + "print: " + strings.Repeat("x", MaxLineLen)},
	} {
		checkOutcome(t, tt.name, tt.line, malformed)
	}
}

func TestUnknownEventsCountedByName(t *testing.T) {
	d := NewDecoder()
	var e event.Event
	lines := []string{
		"  steam-25475 [003] 630659.115986: sched_switch:         steam:25475 [120] S ==> swapper/3:0 [120]",
		"  steam-25475 [003] 630659.115987: sched_switch:         swapper/3:0 [120] R ==> steam:25475 [120]",
		"  <idle>-0    [001] 630660.292601: drm_vblank_event:     crtc=1, seq=540828",
		"  <idle>-0    [001] 630660.292601: some_new_driver_event: anything at all",
	}
	for i, l := range lines {
		if d.Decode([]byte(l), i+1, &e) {
			t.Errorf("%q decoded", l)
		}
	}
	s := d.Stats()
	want := map[string]uint64{"sched_switch": 2, "drm_vblank_event": 1, "some_new_driver_event": 1}
	if len(s.Unknown) != len(want) || s.Malformed != 0 {
		t.Fatalf("unknown %v malformed %d", s.Unknown, s.Malformed)
	}
	for k, v := range want {
		if s.Unknown[k] != v {
			t.Errorf("unknown[%s] = %d, want %d", k, s.Unknown[k], v)
		}
	}
	if k, known := Known("some_new_driver_event"); known || k != event.KindUnknown {
		t.Error("Known says an unlisted event is known")
	}
	// Stats is a copy.
	s.Unknown["sched_switch"] = 99
	if d.Stats().Unknown["sched_switch"] != 2 {
		t.Error("Stats shares its map")
	}
}

func TestMalformedSamples(t *testing.T) {
	d := NewDecoder()
	var e event.Event
	for i := 1; i <= 25; i++ {
		d.Decode([]byte("garbage line"), i*10, &e)
	}
	d.CountMalformed(1000, "line longer than 1048576 bytes")
	s := d.Stats()
	if s.Malformed != 26 || len(s.MalformedSamples) != maxSamples {
		t.Fatalf("malformed %d, %d samples", s.Malformed, len(s.MalformedSamples))
	}
	if want := `line 10: no timestamp (12 bytes): "garbage line"`; s.MalformedSamples[0] != want {
		t.Errorf("sample %q, want %q", s.MalformedSamples[0], want)
	}
	d2 := NewDecoder()
	d2.CountMalformed(7, "truncated")
	if got := d2.Stats().MalformedSamples; len(got) != 1 || got[0] != "line 7: truncated" {
		t.Errorf("samples %q", got)
	}
}

// One MiB of hostile bytes: counted as one malformed line, quickly.
func TestMegabyteLine(t *testing.T) {
	for _, l := range [][]byte{
		bytes.Repeat([]byte("1.1: "), 1<<20/5),
		append([]byte("x-1 [000] 1.5: print: "), bytes.Repeat([]byte{0xff}, 1<<20)...),
		bytes.Repeat([]byte{'['}, 1<<20),
	} {
		_, ok, d := decodeOne(string(l))
		if s := d.Stats(); ok || s.Malformed != 1 {
			t.Errorf("ok=%v malformed=%d", ok, s.Malformed)
		}
	}
}

// Random mutations of real lines never panic, and each line has exactly one outcome.
func TestMutatedLinesAlwaysCounted(t *testing.T) {
	lines := readLines(t, "gpuvis_amdgpu_4.11_gpu_only.trace-cmd-report.txt")[:400]
	for _, c := range formatCases {
		lines = append(lines, []byte(rendered(c.name, c.payload)))
	}
	rng := rand.New(rand.NewSource(1))
	d := NewDecoder()
	var e event.Event
	decoded := uint64(0)
	for i := 0; i < 20000; i++ {
		l := bytes.Clone(lines[rng.Intn(len(lines))])
		for n := rng.Intn(4); n >= 0 && len(l) > 0; n-- {
			switch j := rng.Intn(len(l)); rng.Intn(3) {
			case 0:
				l[j] = byte(rng.Intn(256))
			case 1:
				l = l[:j]
			case 2:
				l = append(l[:j], l[j+1:]...)
			}
		}
		if d.Decode(l, i+1, &e) {
			decoded++
		}
	}
	s := d.Stats()
	total := s.Malformed + d.Headers() + s.Lost
	for _, v := range s.Unknown {
		total += v
	}
	for _, k := range event.Kinds() {
		total += s.EventsOf(k)
	}
	if total != 20000 {
		t.Errorf("outcomes %d for 20000 lines (decoded %d)", total, decoded)
	}
}
