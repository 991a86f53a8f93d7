// The classic rung's former decode, kept in the tests as an independent second reading
// of the same raw entries: each entry printed as the kernel prints it (the tpPrinter,
// test-only) into a tracefs line and read back by internal/ftrace's text Decoder. The
// direct decode (classic_args.go, ftrace.DecodeValues) must give the same Event for every
// entry, and fail where it fails.
package probe

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/ghostdriver/ghostdriver/internal/event"
	"github.com/ghostdriver/ghostdriver/internal/ftrace"
	"github.com/ghostdriver/ghostdriver/internal/kstr"
)

// appendPayload renders raw (a copy of the entry's first bytes) into dst: the payload
// the kernel prints for the entry.
func (p *tpPrinter) appendPayload(dst, raw []byte) ([]byte, error) {
	for i := range p.segs {
		s := &p.segs[i]
		dst = append(dst, s.lit...)
		var err error
		if dst, err = s.c.append(dst, raw); err != nil {
			return dst, err
		}
	}
	return append(dst, p.trailing...), nil
}

// textReading is the text round trip: its own Decoder and its own pointer join.
type textReading struct {
	text *ftrace.Decoder
	join *fenceJoin
	line []byte
}

func newTextReading() *textReading {
	return &textReading{text: ftrace.NewDecoder(), join: &fenceJoin{}}
}

// decode is the former classicDecoder.decode, verbatim but for the names.
func (c *textReading) decode(ce *classicEvent, b []byte, ev *event.Event) error {
	if n := binary.LittleEndian.Uint16(b[rawOffLen:]); int(n) != rawMax {
		return fmt.Errorf("%w: %s: the program could not read the entry (%d bytes copied)", errClassicEntry, ce.name, n)
	}
	raw := b[rawOffRaw : rawOffRaw+rawMax]
	ts := binary.LittleEndian.Uint64(b[rawOffTs:])
	pidTgid := binary.LittleEndian.Uint64(b[rawOffPid:])
	cpu := binary.LittleEndian.Uint32(b[rawOffCPU:])
	comm := b[rawOffComm : rawOffComm+16]
	for i, ch := range comm {
		if ch == 0 {
			comm = comm[:i]
			break
		}
	}
	// "comm-tid [cpu] secs.nanos: event: payload", as tracefs prints it.
	l := append(c.line[:0], comm...)
	l = append(l, '-')
	l = strconv.AppendUint(l, pidTgid&0xffffffff, 10)
	l = append(l, " ["...)
	if cpu < 100 {
		l = append(l, '0')
		if cpu < 10 {
			l = append(l, '0')
		}
	}
	l = strconv.AppendUint(l, uint64(cpu), 10)
	l = append(l, "] "...)
	l = strconv.AppendUint(l, ts/1e9, 10)
	l = append(l, '.')
	ns := ts % 1e9
	for div := uint64(1e8); div > 0; div /= 10 {
		l = append(l, byte('0'+ns/div%10))
	}
	l = append(l, ": "...)
	l = append(l, ce.name...)
	l = append(l, ": "...)
	payloadAt := len(l)
	l, err := ce.printer.appendPayload(l, raw)
	c.line = l
	if err != nil {
		return fmt.Errorf("%w: %s: %w", errClassicEntry, ce.name, err)
	}
	if !c.text.Decode(l, 0, ev) {
		return fmt.Errorf("%w: %s: the text decoder does not read %q", errClassicEntry, ce.name, l[payloadAt:])
	}
	if ce.system == "gpu_scheduler" {
		c.join.fill(ev)
	}
	ev.Time = int64(ts)
	ev.CPU = int32(cpu)
	ev.PID = uint32(pidTgid >> 32)
	ev.TID = uint32(pidTgid)
	if ev.Comm != string(comm) {
		// The decoder trims blanks and reads "<...>" as no comm: the record's own bytes.
		ev.Comm = kstr.FromC(unsafe.Slice((*int8)(unsafe.Pointer(unsafe.SliceData(comm))), len(comm)))
	}
	return nil
}

// randomEntry fills every field of f that a print argument reads with a random value of
// its type: numbers small, large, negative and at the edges of their size; names of
// rings, devices and timelines; pointers in the kernel's range.
func randomEntry(t testing.TB, rng *rand.Rand, f *tpFormat) []byte {
	names := []string{"", "gfx", "gfx_0.0.0", "comp_1.0.0", "sdma0", "0000:03:00.0", "vcn_dec", "rcs0", "a", "ring 7"}
	vals := map[string]any{}
	for i := range f.fields {
		fld := &f.fields[i]
		if strings.HasPrefix(fld.name, "common_") || fld.relLoc {
			continue
		}
		switch {
		case fld.isString():
			s := names[rng.IntN(len(names))]
			if fld.array && len(s) >= fld.size {
				s = s[:fld.size-1]
			}
			vals[fld.name] = s
		case fld.isScalar():
			var v uint64
			switch rng.IntN(6) {
			case 0:
				v = 0
			case 1:
				v = uint64(rng.IntN(1000))
			case 2:
				v = ^uint64(0) // -1, or the largest value of the field
			case 3:
				v = 1 << (8*uint(fld.size) - 1) // the smallest negative / top bit
			case 4:
				v = 0xffff888100000000 | uint64(rng.Uint32())&^7 // a kernel pointer
			default:
				v = rng.Uint64()
			}
			vals[fld.name] = v
		}
	}
	return entry(t, f, vals)
}

// TestClassicDirectMatchesText decodes random entries of every real format in
// testdata/formats that has a classic rung both ways: directly, and through the kernel's
// text. Same Event, same success.
func TestClassicDirectMatchesText(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "formats", "*.txt"))
	if len(files) == 0 {
		t.Fatal("no format files")
	}
	rng := rand.New(rand.NewPCG(14, 3))
	events, decoded, failed := 0, 0, 0
	for _, file := range files {
		for name, blk := range readFormats(t, filepath.Base(file)) {
			h, ok := classicHook(name)
			if !ok {
				continue
			}
			ce, err := newClassicEvent(blk.system, name, blk.text)
			if err != nil {
				continue // refused at load, the same way for both readings
			}
			events++
			var evs classicEvents
			evs.add(h, ce)
			direct := decoder{classic: newClassicDecoder(&evs)}
			text := newTextReading()
			for i := 0; i < 300; i++ {
				raw := randomEntry(t, rng, ce.printer.format)
				comm := []string{"python3", "kworker/u8:1", "", "a b", "x\xffy"}[i%5]
				b := rawSample(h, uint64(rng.Int64N(1<<50)), rng.Uint64(), uint32(rng.IntN(300)), comm, raw)
				var got, want event.Event
				gerr := direct.decode(b, &got)
				werr := text.decode(ce, b, &want)
				switch {
				case (gerr == nil) != (werr == nil):
					t.Fatalf("%s %s: direct error %v, text error %v\nentry %x", file, name, gerr, werr, raw)
				case gerr != nil:
					failed++
				case !reflect.DeepEqual(got, want):
					t.Fatalf("%s %s:\ndirect %+v\ntext   %+v\nentry %x", file, name, got, want, raw)
				default:
					decoded++
				}
			}
		}
	}
	if events < 20 || decoded < 20*250 {
		t.Fatalf("compared %d events, %d entries decoded (%d failed both ways): too few", events, decoded, failed)
	}
	t.Logf("%d events of %d format files, %d entries decoded the same both ways, %d refused both ways", events, len(files), decoded, failed)
}

// BenchmarkClassicDecode decodes raw entries of real formats (6.17 scheduler, 6.1 and 7.3
// drivers) directly (the rung's decode) and through their text (the former decode).
func BenchmarkClassicDecode(b *testing.B) {
	type sample struct {
		ce  *classicEvent
		raw []byte
	}
	var samples []sample
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range []struct{ file, event string }{
		{"gpu_scheduler_6.17.txt", "drm_sched_job_queue"}, {"gpu_scheduler_6.17.txt", "drm_sched_job_run"},
		{"gpu_scheduler_6.17.txt", "drm_sched_job_done"}, {"gpu_scheduler_6.16.txt", "drm_sched_job"},
		{"guest_linux-6.1_drivers.txt", "amdgpu_cs_ioctl"}, {"guest_linux-7.3_drivers.txt", "i915_request_add"},
		{"guest_linux-7.3_drivers.txt", "xe_sched_job_run"},
	} {
		blk := readFormats(b, c.file)[c.event]
		ce, err := newClassicEvent(blk.system, c.event, blk.text)
		if err != nil {
			b.Fatalf("%s: %v", c.event, err)
		}
		h, _ := classicHook(c.event)
		samples = append(samples, sample{ce, rawSample(h, 1234567890123, 42<<32|43, 3, "python3", randomEntry(b, rng, ce.printer.format))})
	}
	var evs classicEvents
	for _, s := range samples {
		h, _ := classicHook(s.ce.name)
		evs.add(h, s.ce)
	}
	d, r := decoder{classic: newClassicDecoder(&evs)}, newTextReading()
	for _, s := range samples {
		var got, want event.Event
		if err, werr := d.decode(s.raw, &got), r.decode(s.ce, s.raw, &want); err != nil || werr != nil || !reflect.DeepEqual(got, want) {
			b.Fatalf("%s: %v %v\n%+v\n%+v", s.ce.name, err, werr, got, want)
		}
	}
	b.Run("direct", func(b *testing.B) {
		d := decoder{classic: newClassicDecoder(&evs)}
		var ev event.Event
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			_ = d.decode(samples[i%len(samples)].raw, &ev)
		}
	})
	b.Run("text", func(b *testing.B) {
		r := newTextReading()
		var ev event.Event
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			s := samples[i%len(samples)]
			_ = r.decode(s.ce, s.raw, &ev)
		}
	})
}
