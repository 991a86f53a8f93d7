// Tracefs format files of real kernels parsed (testdata/formats: files of several events,
// each after a "## system: <system>" line, the layout of testdata/kernel-tracepoints),
// and the helpers the raw-entry tests build entries with.

package ftrace

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// entrySize is how many bytes of an entry the live source's classic programs copy
// (internal/probe: raw_record.raw).
const entrySize = 256

// formatBlock is one event's format text in a testdata file of "## system: S" blocks.
type formatBlock struct{ system, text string }

// readFormats reads testdata/formats/<file>.
func readFormats(t testing.TB, file string) map[string]formatBlock {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "formats", file))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]formatBlock{}
	for _, blk := range strings.Split(string(b), "## system: ")[1:] {
		system, text, _ := strings.Cut(blk, "\n")
		name := ""
		for _, l := range strings.Split(text, "\n") {
			if v, ok := strings.CutPrefix(l, "name: "); ok {
				name = v
			}
		}
		out[name] = formatBlock{system: strings.TrimSpace(system), text: text}
	}
	return out
}

func mustFormat(t *testing.T, blocks map[string]formatBlock, name string) *Format {
	t.Helper()
	blk, ok := blocks[name]
	if !ok {
		t.Fatalf("no format of %s", name)
	}
	f, err := ParseFormat(blk.system, name, blk.text)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// entry builds a raw trace entry of f: each value at its field's offset; strings of
// __data_loc fields after the fixed part, as the kernel stores them.
func entry(t testing.TB, f *Format, vals map[string]any) []byte {
	t.Helper()
	raw := make([]byte, entrySize)
	// What a BPF program finds in the common fields: the kernel's pt_regs pointer.
	binary.LittleEndian.PutUint64(raw, 0xffffc90000a3fe58)
	dyn := 0
	for _, fld := range f.Fields {
		dyn = max(dyn, fld.Offset+fld.Size)
	}
	for name, v := range vals {
		fld := f.Field(name)
		if fld == nil {
			t.Fatalf("%s has no field %s", f.Name, name)
		}
		switch v := v.(type) {
		case string:
			switch {
			case fld.DataLoc:
				binary.LittleEndian.PutUint32(raw[fld.Offset:], uint32(len(v)+1)<<16|uint32(dyn))
				copy(raw[dyn:], v+"\x00")
				dyn += len(v) + 1
			case fld.Array:
				copy(raw[fld.Offset:fld.Offset+fld.Size], v)
			default:
				t.Fatalf("%s.%s (%s) is not a string field", f.Name, name, fld.CType)
			}
		case uint64:
			for i := 0; i < fld.Size; i++ {
				raw[fld.Offset+i] = byte(v >> (8 * i))
			}
		case int64:
			for i := 0; i < fld.Size; i++ {
				raw[fld.Offset+i] = byte(uint64(v) >> (8 * i))
			}
		default:
			t.Fatalf("value %T", v)
		}
	}
	return raw
}

func TestParseFormatOfARealKernel(t *testing.T) {
	blocks := readFormats(t, "gpuvis_amdgpu_linux-4.11.txt")
	f := mustFormat(t, blocks, "amdgpu_cs_ioctl")
	if f.System != "amdgpu" || f.ID != 1252 || f.PrintFmt != "sched_job=%llu, timeline=%s, context=%u, seqno=%u, ring_name=%s, num_ibs=%u" {
		t.Fatalf("format %+v", f)
	}
	want := []Field{
		{Name: "common_type", CType: "unsigned short", Offset: 0, Size: 2},
		{Name: "common_flags", CType: "unsigned char", Offset: 2, Size: 1},
		{Name: "common_preempt_count", CType: "unsigned char", Offset: 3, Size: 1},
		{Name: "common_pid", CType: "int", Offset: 4, Size: 4, Signed: true},
		{Name: "sched_job_id", CType: "uint64_t", Offset: 8, Size: 8},
		{Name: "timeline", CType: "__data_loc char[]", Offset: 16, Size: 4, Signed: true, DataLoc: true},
		{Name: "context", CType: "unsigned int", Offset: 20, Size: 4},
		{Name: "seqno", CType: "unsigned int", Offset: 24, Size: 4},
		{Name: "fence", CType: "struct dma_fence *", Offset: 32, Size: 8, Pointer: true},
		{Name: "ring_name", CType: "char *", Offset: 40, Size: 8, Pointer: true},
		{Name: "num_ibs", CType: "u32", Offset: 48, Size: 4},
	}
	if len(f.Fields) != len(want) {
		t.Fatalf("fields %+v", f.Fields)
	}
	for i := range want {
		if f.Fields[i] != want[i] {
			t.Errorf("field %d: %+v, want %+v", i, f.Fields[i], want[i])
		}
	}
	if got := strings.Join(f.Args, " | "); got != "REC->sched_job_id | __get_str(timeline) | REC->context | REC->seqno | REC->ring_name | REC->num_ibs" {
		t.Errorf("args %s", got)
	}
	sw := mustFormat(t, blocks, "sched_switch")
	if c := sw.Field("prev_comm"); c == nil || !c.Array || c.Size != 16 || !c.IsString() {
		t.Errorf("prev_comm %+v", c)
	}
	if _, err := ParseFormat("amdgpu", "amdgpu_vm_flush", blocks["amdgpu_cs_ioctl"].text); err == nil {
		t.Error("a format naming another event was accepted")
	}
}

// The formats written from the history of the events are the ones real kernels of
// that generation publish (offsets, sizes, signedness, print fmt), IDs aside.
func TestWrittenFormatsMatchRealKernels(t *testing.T) {
	for written, real := range map[string]string{
		"gpu_scheduler_6.16.txt": "guest_linux-6.1_gpu_scheduler.txt",
		"gpu_scheduler_6.17.txt": "guest_linux-7.3_gpu_scheduler.txt",
	} {
		w, r := readFormats(t, written), readFormats(t, real)
		if len(w) != len(r) {
			t.Errorf("%s has %d events, %s %d", written, len(w), real, len(r))
		}
		for name := range w {
			if _, ok := r[name]; !ok {
				t.Errorf("%s: no %s", real, name)
				continue
			}
			fw, fr := mustFormat(t, w, name), mustFormat(t, r, name)
			if !slices.Equal(fw.Fields, fr.Fields) || fw.PrintFmt != fr.PrintFmt || !slices.Equal(fw.Args, fr.Args) {
				t.Errorf("%s: written\n%+v\nreal\n%+v", name, fw, fr)
			}
		}
	}
}
