// channel.h is the single definition of the channel: this test compiles it and checks
// every offset, size and value channel.go mirrors, and that the fields it knows tile
// each struct (a field added to the header, or a pad resized, fails here).
package cupti

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ghostdriver/ghostdriver/internal/testreq"
)

type cField struct {
	name      string // C member
	off, size int    // what channel.go says
}

type cStruct struct {
	name   string // struct gd_<name>
	size   int
	fields []cField
	holes  []cField // implicit padding the compiler adds (not a member: not checked by offsetof)
}

var channelStructs = []cStruct{
	{"gd_header", SizeofHeader, []cField{
		{"magic", hdrMagic, len(Magic)}, {"version", hdrVersion, 4}, {"header_size", hdrHeaderSize, 4},
		{"ring_size", hdrRingSize, 8}, {"pid", hdrPID, 4}, {"lib_state", hdrLibState, 4},
		{"control", hdrControl, 4}, {"control_seq", hdrControlSeq, 4}, {"collector_beat", hdrCollectorBeat, 8},
		{"cupti_version", hdrCuptiVersion, 4}, {"kernel_record_size", hdrKernelRecordSize, 4},
		{"lib_seen_seq", hdrLibSeenSeq, 4}, {"_pad0", hdrPad0, 4}, {"head", hdrHead, 8}, {"_pad1", hdrPad1, hdrPad1Len},
		{"tail", hdrTail, 8}, {"_pad2", hdrPad2, hdrPad2Len}, {"records_written", hdrRecordsWritten, 8},
		{"dropped_ring_full", hdrDroppedRingFull, 8}, {"dropped_cupti", hdrDroppedCupti, 8},
		{"refused_layout", hdrRefusedLayout, 8}, {"batches", hdrBatches, 8}, {"enables", hdrEnables, 8},
		{"disables", hdrDisables, 8}, {"backoffs", hdrBackoffs, 8}, {"buffers_refused", hdrBuffersRefused, 8},
		{"names_truncated", hdrNamesTruncated, 8}, {"api_filtered", hdrAPIFiltered, 8}, {"_pad3", hdrPad3, hdrPad3Len},
		{"cupti_path", hdrCuptiPath, hdrTextLen}, {"state_msg", hdrStateMsg, hdrTextLen},
	}, nil},
	{"gd_frame", SizeofFrame, []cField{{"len", frameLen, 4}, {"type", frameType, 2}, {"flags", frameFlags, 2}}, nil},
	{"gd_batch", SizeofBatch, []cField{
		{"mono_before", batchMonoBefore, 8}, {"cupti_at", batchCuptiAt, 8}, {"mono_after", batchMonoAfter, 8},
		{"records", batchRecords, 4}, {"dropped_cupti", batchDroppedCupti, 4},
	}, nil},
	{"gd_kernel", SizeofKernel, []cField{
		{"start", kernelStart, 8}, {"end", kernelEnd, 8}, {"correlation_id", kernelCorrelation, 4},
		{"device_id", kernelDevice, 4}, {"context_id", kernelContext, 4}, {"stream_id", kernelStream, 4},
		{"grid_x", kernelGridX, 4}, {"grid_y", kernelGridY, 4}, {"grid_z", kernelGridZ, 4},
		{"block_x", kernelBlockX, 4}, {"block_y", kernelBlockY, 4}, {"block_z", kernelBlockZ, 4},
		{"registers_per_thread", kernelRegisters, 4}, {"shared_memory", kernelSharedMemory, 4},
		{"graph_id", kernelGraphID, 4}, {"graph_node_id", kernelGraphNodeID, 8}, {"name_len", kernelNameLen, 2},
		{"launch_type", kernelLaunchType, 2}, {"_pad", kernelPad, 4},
	}, []cField{{"(before graph_node_id)", kernelHole, kernelHoleLen}}},
	{"gd_api", SizeofAPI, []cField{
		{"start", apiStart, 8}, {"end", apiEnd, 8}, {"correlation_id", apiCorrelation, 4}, {"cbid", apiCBID, 4},
		{"pid", apiPID, 4}, {"tid", apiTID, 4}, {"domain", apiDomain, 4}, {"result", apiResult, 4},
	}, nil},
	{"gd_copy", SizeofCopy, []cField{
		{"start", copyStart, 8}, {"end", copyEnd, 8}, {"bytes", copyBytes, 8}, {"correlation_id", copyCorrelation, 4},
		{"device_id", copyDevice, 4}, {"context_id", copyContext, 4}, {"stream_id", copyStream, 4},
		{"what", copyWhat, 4}, {"copy_kind", copyKind, 4}, {"graph_id", copyGraphID, 4}, {"_pad", copyPad, 4},
	}, nil},
	{"gd_state_change", SizeofStateChange, []cField{
		{"mono", stateMono, 8}, {"state", stateState, 4}, {"reason", stateReason, 4},
	}, nil},
	{"gd_device", SizeofDevice, []cField{
		{"device_id", deviceID, 4}, {"sm_count", deviceSMCount, 4}, {"cc_major", deviceCCMajor, 4}, {"cc_minor", deviceCCMinor, 4},
	}, nil},
}

// channelValues are the header's macros and enumerators, by C name.
var channelValues = map[string]uint64{
	"GD_VERSION": Version, "GD_HEADER_SIZE": HeaderSize, "GD_RING_MIN": RingMin, "GD_RING_MAX": RingMax,
	"GD_NAME_MAX": NameMax, "GD_KERNEL_F_NAME_TRUNCATED": KernelNameTruncated,
	"GD_API_RUNTIME": APIRuntime, "GD_API_DRIVER": APIDriver, "GD_COPY_MEMCPY": CopyMemcpy, "GD_COPY_MEMSET": CopyMemset,
	"GD_CONTROL_OFF": ControlOff, "GD_CONTROL_ON": ControlOn,
	"GD_STATE_DORMANT": uint64(StateDormant), "GD_STATE_ON": uint64(StateOn), "GD_STATE_BACKED_OFF": uint64(StateBackedOff),
	"GD_STATE_UNSUPPORTED": uint64(StateUnsupported), "GD_STATE_NO_CUPTI": uint64(StateNoCUPTI),
	"GD_STATE_ERROR": uint64(StateError), "GD_STATE_OFF": uint64(StateOff),
	"GD_FRAME_PAD": uint64(FramePad), "GD_FRAME_BATCH": uint64(FrameBatch), "GD_FRAME_KERNEL": uint64(FrameKernel),
	"GD_FRAME_API": uint64(FrameAPI), "GD_FRAME_COPY": uint64(FrameCopy), "GD_FRAME_STATE": uint64(FrameState),
	"GD_FRAME_DEVICE": uint64(FrameDevice),
}

var channelStrings = map[string]string{"GD_CHANNEL_NAME": ChannelName, "GD_MAGIC": Magic}

func TestChannelLayoutIsTheHeader(t *testing.T) {
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		testreq.Skip(t, testreq.GCC, "gcc not installed: cannot compile cuptilib/channel.h to check its layout")
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	header := filepath.Join(wd, "..", "..", "cuptilib", "channel.h")
	if _, err := os.Stat(header); err != nil {
		t.Fatal(err)
	}

	// The program prints "name value" lines; want holds what channel.go says for each.
	var src strings.Builder
	want := map[string]string{}
	fmt.Fprintf(&src, "#include <stdio.h>\n#include <stddef.h>\n#include %q\n\nint main(void) {\n", header)
	line := func(name, format, expr, value string) {
		fmt.Fprintf(&src, "\tprintf(\"%s %s\\n\", %s);\n", name, format, expr)
		want[name] = value
	}
	for _, s := range channelStructs {
		line("sizeof."+s.name, "%zu", "sizeof(struct "+s.name+")", strconv.Itoa(s.size))
		for _, f := range s.fields {
			line("offsetof."+s.name+"."+f.name, "%zu", fmt.Sprintf("offsetof(struct %s, %s)", s.name, f.name), strconv.Itoa(f.off))
			line("sizeof."+s.name+"."+f.name, "%zu", fmt.Sprintf("sizeof(((struct %s *)0)->%s)", s.name, f.name), strconv.Itoa(f.size))
		}
	}
	for name, v := range channelValues {
		line(name, "%llu", "(unsigned long long)("+name+")", strconv.FormatUint(v, 10))
	}
	for name, v := range channelStrings {
		line(name, "%s", name, v)
	}
	src.WriteString("\treturn 0;\n}\n")

	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "layout.c"), []byte(src.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "layout")
	if out, err := exec.Command(gcc, "-std=c11", "-Wall", "-Wextra", "-Werror", "-o", bin, filepath.Join(dir, "layout.c")).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	out, err := exec.Command(bin).Output()
	if err != nil {
		t.Fatalf("%s: %v", bin, err)
	}
	got := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		name, v, _ := strings.Cut(l, " ")
		got[name] = v
	}
	names := make([]string, 0, len(want))
	for n := range want {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		if got[n] != want[n] {
			t.Errorf("%s: channel.h says %q, channel.go %q", n, got[n], want[n])
		}
	}

	// The members channel.go knows, and the compiler's holes, cover each struct from 0
	// to its size with no gap and no overlap: channel.h has no member channel.go lacks.
	for _, s := range channelStructs {
		parts := slices.Concat(s.fields, s.holes)
		slices.SortFunc(parts, func(a, b cField) int { return a.off - b.off })
		at := 0
		for _, f := range parts {
			if f.off != at {
				t.Errorf("struct %s: %s at %d, but what comes before ends at %d", s.name, f.name, f.off, at)
			}
			at = f.off + f.size
		}
		if at != s.size {
			t.Errorf("struct %s: its members end at %d, its size is %d", s.name, at, s.size)
		}
	}
	if SizeofHeader > HeaderSize {
		t.Errorf("struct gd_header (%d bytes) does not fit its page (%d)", SizeofHeader, HeaderSize)
	}
}
