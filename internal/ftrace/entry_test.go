// Raw entries decoded two ways: directly (entry.go: each argument's value read from its
// field, DecodeValues) and through their text (each entry printed as the kernel prints
// it, entryprint.go, into a tracefs line read back by Decode: the live source's former
// decode, kept as an independent second reading). Same Event, same success.

package ftrace

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ghostdriver/ghostdriver/internal/event"
)

// textReading is the text round trip, with its own Decoder.
type textReading struct {
	text *Decoder
	line []byte
}

func newTextReading() *textReading { return &textReading{text: NewDecoder()} }

// decode prints raw as a tracefs line of e's event and decodes the line; the header's
// fields (time, CPU, task) are left zero, as DecodeEntry leaves them.
func (r *textReading) decode(e *EntryFormat, raw []byte, ev *event.Event) error {
	name := e.Printer().Format().Name
	l := append(r.line[:0], "python3-43 [003] 1234.567890123: "...)
	l = append(l, name...)
	l = append(l, ": "...)
	payloadAt := len(l)
	l, err := e.Printer().AppendPayload(l, raw)
	r.line = l
	if err != nil {
		return err
	}
	if !r.text.Decode(l, 0, ev) {
		return fmt.Errorf("%s: the text decoder does not read %q", name, l[payloadAt:])
	}
	ev.Time, ev.CPU, ev.PID, ev.TID, ev.Comm = 0, 0, 0, 0, ""
	return nil
}

// randomEntry fills every field of f that a print argument reads with a random value of
// its type: numbers small, large, negative and at the edges of their size; names of
// rings, devices and timelines; pointers in the kernel's range.
func randomEntry(t testing.TB, rng *rand.Rand, f *Format) []byte {
	names := []string{"", "gfx", "gfx_0.0.0", "comp_1.0.0", "sdma0", "0000:03:00.0", "vcn_dec", "rcs0", "a", "ring 7"}
	vals := map[string]any{}
	for i := range f.Fields {
		fld := &f.Fields[i]
		if strings.HasPrefix(fld.Name, "common_") || fld.RelLoc {
			continue
		}
		switch {
		case fld.IsString():
			s := names[rng.IntN(len(names))]
			if fld.Array && len(s) >= fld.Size {
				s = s[:fld.Size-1]
			}
			vals[fld.Name] = s
		case fld.IsScalar():
			var v uint64
			switch rng.IntN(6) {
			case 0:
				v = 0
			case 1:
				v = uint64(rng.IntN(1000))
			case 2:
				v = ^uint64(0) // -1, or the largest value of the field
			case 3:
				v = 1 << (8*uint(fld.Size) - 1) // the smallest negative / top bit
			case 4:
				v = 0xffff888100000000 | uint64(rng.Uint32())&^7 // a kernel pointer
			default:
				v = rng.Uint64()
			}
			vals[fld.Name] = v
		}
	}
	return entry(t, f, vals)
}

// TestDecodeEntryMatchesText decodes random entries of every real format in
// testdata/formats that compiles, both ways.
func TestDecodeEntryMatchesText(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "formats", "*.txt"))
	if len(files) == 0 {
		t.Fatal("no format files")
	}
	rng := rand.New(rand.NewPCG(14, 3))
	events, decoded, failed := 0, 0, 0
	for _, file := range files {
		for name, blk := range readFormats(t, filepath.Base(file)) {
			ef, err := NewEntryFormat(blk.system, name, blk.text)
			if err != nil {
				continue // refused at load, the same way for both readings
			}
			events++
			direct, text := NewDecoder(), newTextReading()
			for i := 0; i < 300; i++ {
				raw := randomEntry(t, rng, ef.Printer().Format())
				var got, want event.Event
				gerr := direct.DecodeEntry(ef, raw, &got)
				werr := text.decode(ef, raw, &want)
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

// BenchmarkDecodeEntry decodes raw entries of real formats (6.17 scheduler, 6.1 and 7.3
// drivers) directly (the live source's decode) and through their text (the former one).
func BenchmarkDecodeEntry(b *testing.B) {
	type sample struct {
		ef  *EntryFormat
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
		ef, err := NewEntryFormat(blk.system, c.event, blk.text)
		if err != nil {
			b.Fatalf("%s: %v", c.event, err)
		}
		samples = append(samples, sample{ef, randomEntry(b, rng, ef.Printer().Format())})
	}
	d, r := NewDecoder(), newTextReading()
	for _, s := range samples {
		var got, want event.Event
		if err, werr := d.DecodeEntry(s.ef, s.raw, &got), r.decode(s.ef, s.raw, &want); err != nil || werr != nil || !reflect.DeepEqual(got, want) {
			b.Fatalf("%v %v\n%+v\n%+v", err, werr, got, want)
		}
	}
	b.Run("direct", func(b *testing.B) {
		d := NewDecoder()
		var ev event.Event
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			s := samples[i%len(samples)]
			_ = d.DecodeEntry(s.ef, s.raw, &ev)
		}
	})
	b.Run("text", func(b *testing.B) {
		r := newTextReading()
		var ev event.Event
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			s := samples[i%len(samples)]
			_ = r.decode(s.ef, s.raw, &ev)
		}
	})
}
