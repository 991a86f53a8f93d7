// The printer of a print fmt bound to an entry's fields against what the kernel prints:
// real lines of real traces, vsnprintf's conversions, and what it refuses.

package ftrace

import (
	"encoding/binary"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/ghostdriver/ghostdriver/internal/event"
)

// The 4.11 formats of a real amdgpu trace, rendered from entries built with the values
// of real lines of the same trace: the payload is the line's (trace-cmd prints %p with
// 0x), and the event decoded from the entry is the one the text decoder makes of the
// real line (internal/probe's TestClassicRecordPath adds the record's header).
func TestPrinterRendersRealLines(t *testing.T) {
	blocks := readFormats(t, "gpuvis_amdgpu_linux-4.11.txt")
	cases := []struct {
		event string
		vals  map[string]any
		line  string // a real line of the capture
		// payload when the rendering differs from trace-cmd's (%p): else the line's
		payload string
	}{{
		event: "amdgpu_cs_ioctl",
		vals: map[string]any{"sched_job_id": uint64(3489726), "timeline": "gfx", "context": uint64(4929), "seqno": uint64(3200),
			"fence": uint64(0xffff91cb1ab1b000), "ring_name": uint64(0xffff91cb1ab1bdd0), "num_ibs": uint64(1)},
		line: "    RenderThread-25155 [003] 630659.133157: amdgpu_cs_ioctl:      sched_job=3489726, timeline=gfx, context=4929, seqno=3200, ring_name=ffff91cb1ab1bdd0, num_ibs=1",
	}, {
		event: "amdgpu_sched_run_job",
		vals: map[string]any{"sched_job_id": uint64(1892797), "timeline": "sdma0", "context": uint64(123), "seqno": uint64(1735030),
			"ring_name": uint64(0xffff91cb1ab1d170), "num_ibs": uint64(1)},
		line: "           sdma0-199   [003] 630659.230528: amdgpu_sched_run_job: sched_job=1892797, timeline=sdma0, context=123, seqno=1735030, ring_name=ffff91cb1ab1d170, num_ibs=1",
	}, {
		event: "dma_fence_signaled",
		vals:  map[string]any{"driver": "amd_sched", "timeline": "sdma0", "context": uint64(122), "seqno": uint64(1735030)},
		line:  "           sdma0-199   [003] 630659.230531: dma_fence_signaled:   driver=amd_sched timeline=sdma0 context=122 seqno=1735030",
	}, {
		event: "amdgpu_vm_flush", // %010Lx
		vals:  map[string]any{"ring": uint64(0), "id": uint64(2), "pd_addr": uint64(0xffff0000)},
		line:  "             gfx-190   [000] 630661.119391: amdgpu_vm_flush:      ring=0, id=2, pd_addr=00ffff0000",
	}, {
		event:   "amdgpu_ttm_bo_move", // %p, %d of u32 fields, %Ld
		vals:    map[string]any{"bo": uint64(0xffff91ca457a9800), "old_placement": uint64(0), "new_placement": uint64(2), "bo_size": uint64(1048576)},
		line:    "            Xorg-1128  [003] 630659.868296: amdgpu_ttm_bo_move:   bo=0xffff91ca457a9800, from=0, to=2, size=1048576",
		payload: "bo=ffff91ca457a9800, from=0, to=2, size=1048576",
	}, {
		event: "drm_vblank_event",
		vals:  map[string]any{"crtc": int64(1), "seq": uint64(540828)},
		line:  "          <idle>-0     [001] 630660.292601: drm_vblank_event:     crtc=1, seq=540828",
	}}
	for _, c := range cases {
		t.Run(c.event, func(t *testing.T) {
			f := mustFormat(t, blocks, c.event)
			p, err := CompilePrinter(f)
			if err != nil {
				t.Fatal(err)
			}
			_, rest, _ := strings.Cut(c.line, c.event+":")
			want := c.payload
			if want == "" {
				want = strings.TrimSpace(rest)
			}
			got, err := p.AppendPayload(nil, entry(t, f, c.vals))
			if err != nil || string(got) != want {
				t.Fatalf("rendered %q (%v)\nwant     %q", got, err, want)
			}
		})
	}

	for _, c := range cases[:2] {
		ef, err := NewEntryFormat("amdgpu", c.event, blocks[c.event].text)
		if err != nil {
			t.Fatal(err)
		}
		var want, got event.Event
		if !NewDecoder().Decode([]byte(c.line), 1, &want) {
			t.Fatalf("the text decoder does not read %q", c.line)
		}
		if err := NewDecoder().DecodeEntry(ef, entry(t, ef.Printer().Format(), c.vals), &got); err != nil {
			t.Fatal(err)
		}
		got.Time, got.CPU, got.PID, got.TID, got.Comm = want.Time, want.CPU, want.PID, want.TID, want.Comm
		if got != want {
			t.Errorf("%s:\n got %+v\nwant %+v", c.event, got, want)
		}
		if want.Ring != "gfx" && want.Ring != "sdma0" {
			t.Errorf("%s: ring %q: the printed char* should have given way to the timeline", c.event, want.Ring)
		}
	}
}

// What the printer does not do is refused with the reason, never guessed.
func TestPrinterRefusesWhatItCannotRender(t *testing.T) {
	blocks := readFormats(t, "gpuvis_amdgpu_linux-4.11.txt")
	// sched_switch prints __print_flags and a ternary.
	if _, err := CompilePrinter(mustFormat(t, blocks, "sched_switch")); !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "__print_flags") {
		t.Errorf("sched_switch: %v", err)
	}
	// A format the printer renders but the text decoder does not read for the event.
	if _, err := NewEntryFormat("drm", "drm_vblank_event", blocks["drm_vblank_event"].text); err == nil || !strings.Contains(err.Error(), "text decoder") {
		t.Errorf("drm_vblank_event: %v", err)
	}
	base := blocks["amdgpu_cs_ioctl"].text
	base = base[:strings.Index(base, "print fmt:")]
	for pf, why := range map[string]string{
		`"job=%pS", REC->fence`:                            "%p extension",
		`"n=%*d", REC->num_ibs, REC->seqno`:                "'*'",
		`"n=%s", REC->num_ibs`:                             "%s of field num_ibs",
		`"n=%u", __get_str(timeline)`:                      "of field timeline",
		`"n=%u", REC->timeline`:                            "dynamic field",
		`"n=%u", REC->num_ibs + 1`:                         "expression",
		`"n=%u", (struct foo)REC->num_ibs`:                 "cast",
		`"n=%u %u", REC->num_ibs`:                          "more conversions than arguments",
		`"n=%u", REC->num_ibs, REC->seqno`:                 "1 conversions for 2 arguments",
		`"n=%f", REC->num_ibs`:                             "conversion",
		`"n=%u", __get_dynamic_array(timeline)`:            "expression",
		`"n=%u", REC->seqno ? REC->num_ibs : REC->context`: "expression",
		`"pid=%d", REC->common_pid`:                        "common field",
	} {
		f, err := ParseFormat("amdgpu", "amdgpu_cs_ioctl", base+"print fmt: "+pf+"\n")
		if err != nil {
			t.Fatalf("%s: %v", pf, err)
		}
		if _, err := CompilePrinter(f); !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), why) {
			t.Errorf("%s: %v, want unsupported: %s", pf, err, why)
		}
	}
	// A missing field is an error, not a guess.
	f, _ := ParseFormat("amdgpu", "amdgpu_cs_ioctl", base+`print fmt: "n=%u", REC->nope`+"\n")
	if _, err := CompilePrinter(f); err == nil || !strings.Contains(err.Error(), "no field") {
		t.Errorf("missing field: %v", err)
	}
}

// The printf evaluator against what the kernel's vsnprintf prints.
func TestPrinterConversions(t *testing.T) {
	const layout = `name: ev
ID: 7
format:
	field:unsigned short common_type;	offset:0;	size:2;	signed:0;
	field:int i32;	offset:8;	size:4;	signed:1;
	field:unsigned int u32;	offset:12;	size:4;	signed:0;
	field:s64 i64;	offset:16;	size:8;	signed:1;
	field:u64 u64;	offset:24;	size:8;	signed:0;
	field:char comm[8];	offset:32;	size:8;	signed:0;
	field:__data_loc char[] name;	offset:40;	size:4;	signed:0;
	field:__rel_loc char[] rel;	offset:44;	size:4;	signed:0;
	field:u8 u8;	offset:48;	size:1;	signed:0;
	field:short i16;	offset:50;	size:2;	signed:1;
`
	raw := make([]byte, entrySize)
	binary.LittleEndian.PutUint16(raw, 7)
	binary.LittleEndian.PutUint32(raw[8:], uint32(0xfffffffb)) // -5
	binary.LittleEndian.PutUint32(raw[12:], 0xfffffffb)
	binary.LittleEndian.PutUint64(raw[16:], uint64(0xffffffffffffffff)) // -1
	binary.LittleEndian.PutUint64(raw[24:], 0x1234abcd5678)
	copy(raw[32:], "kworker\x00")
	binary.LittleEndian.PutUint32(raw[40:], 6<<16|64)
	copy(raw[64:], "vgpu0\x00")
	binary.LittleEndian.PutUint32(raw[44:], 4<<16|(72-48))
	copy(raw[72:], "rel\x00")
	raw[48] = 200
	binary.LittleEndian.PutUint16(raw[50:], uint16(0x8000)) // -32768
	for pf, want := range map[string]string{
		`"%d %i %u %x", REC->i32, REC->i32, REC->i32, REC->i32`:                                             "-5 -5 4294967291 fffffffb",
		`"%u %d", REC->u32, REC->u32`:                                                                       "4294967291 -5",
		`"%lld %llu %llx %Lx", REC->i64, REC->i64, REC->i64, REC->u64`:                                      "-1 18446744073709551615 ffffffffffffffff 1234abcd5678",
		`"%ld %lu %zu", REC->i64, REC->u64, REC->u64`:                                                       "-1 20017429960312 20017429960312",
		`"[%03d] [%5d] [%-5d] [%05d] [%+d] [% d]", REC->u8, REC->i32, REC->i32, REC->i32, REC->u8, REC->u8`: "[200] [   -5] [-5   ] [-0005] [+200] [ 200]",
		`"%012llx %#x %#llx %X %#o %o", REC->u64, REC->u8, REC->u64, REC->u32, REC->u8, REC->u8`:            "1234abcd5678 0xc8 0x1234abcd5678 FFFFFFFB 0310 310",
		`"%.3d %8.4x", REC->u8, REC->u8`:                                                                    "200     00c8",
		`"%hhd %hhu %hd %hu", REC->u8, REC->u8, REC->i16, REC->i16`:                                         "-56 200 -32768 32768",
		`"%s|%5s|%-8s|%.3s", REC->comm, __get_str(name), __get_str(name), REC->comm`:                        "kworker|vgpu0|vgpu0   |kwo",
		`"%s %s", __get_rel_str(rel), (__get_str(name))`:                                                    "rel vgpu0",
		`"%p %p", REC->u64, REC->u8`:                                                                        "00001234abcd5678 00000000000000c8",
		`"%c%c", REC->comm, REC->u8`:                                                                        "",
		`"%u %d %llu", (unsigned char)REC->u32, (s8)REC->u8, (u64)(u32)REC->i64`:                            "251 -56 4294967295",
		`"%llu", (unsigned long long)(REC->i32)`:                                                            "18446744073709551611",
		`"100%% %s" "+" "%u", REC->comm, REC->u8`:                                                           "100% kworker+200",
		`"a\tb\n"`: "a\tb\n",
	} {
		f, err := ParseFormat("s", "ev", layout+"\nprint fmt: "+pf+"\n")
		if err != nil {
			t.Fatalf("%s: %v", pf, err)
		}
		p, err := CompilePrinter(f)
		if want == "" {
			if err == nil {
				t.Errorf("%s: %%c of a char array compiled", pf)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", pf, err)
		}
		got, err := p.AppendPayload(nil, raw)
		if err != nil || string(got) != want {
			t.Errorf("%s:\n got %q (%v)\nwant %q", pf, got, err, want)
		}
		// The direct decode's value of each number conversion (entry.go) is the
		// number the conversion prints, the printed text being checked just above.
		for _, seg := range p.segs {
			c := &seg.c
			base := map[byte]int{'d': 10, 'u': 10, 'x': 16, 'X': 16, 'o': 8, 'p': 16}[c.verb]
			if base == 0 {
				continue
			}
			text, _ := c.append(nil, raw)
			digits := strings.TrimPrefix(strings.TrimPrefix(strings.TrimSpace(string(text)), "0x"), "+")
			var printed uint64
			if c.verb == 'd' {
				n, perr := strconv.ParseInt(digits, base, 64)
				printed, err = uint64(n), perr
			} else {
				printed, err = strconv.ParseUint(digits, base, 64)
			}
			if v, verr := c.value(raw); err != nil || verr != nil || v != printed {
				t.Errorf("%s: %%%c of %s: value %#x (%v), printed %q (%v)", pf, c.verb, c.fld.Name, v, verr, text, err)
			}
		}
	}
}
