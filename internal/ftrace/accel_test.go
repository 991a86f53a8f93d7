// imagination's (pvr), ivpu's and amdxdna's job events, decoded from lines written from
// each kernel header's TP_printk (the version is named at each line), as tracefs prints
// them: %p as the hashed pointer's 16 hex digits, %s verbatim.

package ftrace

import (
	"errors"
	"strings"
	"testing"

	"github.com/ghostdriver/ghostdriver/internal/event"
)

type accelLine struct {
	line       string
	kind       event.Kind
	driver     string
	job        uint64
	entity     uint64
	ring, text string
	fence      event.FenceKey
}

var accelLines = []accelLine{
	// pvr_trace.h at torvalds/linux 680d49d8 and b4d85f86 (the same three formats):
	// "pvr_dev=%p ctx=%p fw_obj=%p fw_addr=0x%x hwrt_addr=0x%x job=%p job_type=%s
	// sync_op_count=%u" (job_type by __print_symbolic: geometry, fragment, compute,
	// transfer), "job=%p done_seqno=%u", "job=%p".
	{"     vkcube-2211    [001] .....   77.100000: pvr_job_create: pvr_dev=00000000a1b2c3d4 ctx=000000005e6f7a8b fw_obj=00000000deadbeef fw_addr=0x2f000 hwrt_addr=0x0 job=000000001234abcd job_type=fragment sync_op_count=2",
		event.PVRJobCreate, "powervr", 0x1234abcd, 0x5e6f7a8b, "fragment", "", event.FenceKey{}},
	{" kworker/u8:3-91      [002] .....   77.100200: pvr_job_submit_fw: job=000000001234abcd done_seqno=41",
		event.PVRJobSubmitFW, "powervr", 0x1234abcd, 0, "", "", event.FenceKey{Seqno: 41}},
	{" kworker/u8:3-91      [002] .....   77.104000: pvr_job_done: job=000000001234abcd",
		event.PVRJobDone, "powervr", 0x1234abcd, 0, "", "", event.FenceKey{}},
	// ivpu_trace.h at torvalds/linux 28eb75e1: "%s context:%d engine:%d job:%d"; the
	// step is the call site's string (ivpu_job.c: "create" before the id exists).
	{"  benchmark_app-5120  [003] .....  310.000100: job: create context:3 engine:0 job:0",
		event.IVPUJob, "intel_vpu", 0, 3, "0", "create", event.FenceKey{}},
	{"  benchmark_app-5120  [003] .....  310.000180: job: submit context:3 engine:0 job:17",
		event.IVPUJob, "intel_vpu", 17, 3, "0", "submit", event.FenceKey{}},
	{"   irq/160-intel_vpu-412 [000] .....  310.002900: job: done context:3 engine:0 job:17",
		event.IVPUJob, "intel_vpu", 17, 3, "0", "done", event.FenceKey{}},
	// include/trace/events/amdxdna.h at torvalds/linux b4d85f86: "fence=(context:%llu,
	// seqno:%llu), %s seq#:%llu %s, op=%u"; without ", op=%u" before it (the calls of
	// aie2_ctx.c 063db451 have no op argument).
	{" kworker/u16:2-301    [004] .....  501.000300: xdna_job: fence=(context:12, seqno:5), hwctx.1 seq#:4 sent to device, op=0",
		event.XDNAJob, "amdxdna", 0, 0, "hwctx.1", "sent to device", event.FenceKey{Context: 12, Seqno: 5}},
	{"          <idle>-0     [000] d.h1.  501.001100: xdna_job: fence=(context:12, seqno:5), hwctx.1 seq#:4 signaled fence",
		event.XDNAJob, "amdxdna", 0, 0, "hwctx.1", "signaled fence", event.FenceKey{Context: 12, Seqno: 5}},
}

func TestAccelEventsInTheKernelsFormats(t *testing.T) {
	d := NewDecoder()
	var ev event.Event
	for i, c := range accelLines {
		if !d.Decode([]byte(c.line), i+1, &ev) {
			t.Fatalf("line %d not decoded: %q (%+v)", i+1, c.line, d.Stats())
		}
		if ev.Kind != c.kind || ev.Driver != c.driver || ev.JobID != c.job || ev.Entity != c.entity ||
			ev.Ring != c.ring || ev.Text != c.text || ev.Fence != c.fence {
			t.Errorf("line %d: kind %v driver %q job %#x entity %#x ring %q text %q fence %v", i+1,
				ev.Kind, ev.Driver, ev.JobID, ev.Entity, ev.Ring, ev.Text, ev.Fence)
		}
	}
}

// ivpu's job event as its tracefs format file has it (ivpu_trace.h 28eb75e1: the step is
// `__field(const char *, event)`): a classic tracepoint's copy of the entry holds the
// pointer, not the step, so the entry format is refused (the tp_btf program reads the
// string); amdgpu's char * ring name stays accepted (entryprint_test.go).
func TestIVPUEntryStepIsRefused(t *testing.T) {
	text := "name: job\nID: 1500\nformat:\n" +
		"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n" +
		"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n" +
		"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n" +
		"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n" +
		"\tfield:const char * event;\toffset:8;\tsize:8;\tsigned:0;\n" +
		"\tfield:u32 ctx_id;\toffset:16;\tsize:4;\tsigned:0;\n" +
		"\tfield:u32 engine_id;\toffset:20;\tsize:4;\tsigned:0;\n" +
		"\tfield:u32 job_id;\toffset:24;\tsize:4;\tsigned:0;\n\n" +
		"print fmt: \"%s context:%d engine:%d job:%d\", REC->event, REC->ctx_id, REC->engine_id, REC->job_id\n"
	_, err := NewEntryFormat("vpu", "job", text)
	if err == nil || !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "event") {
		t.Fatalf("err = %v, want an unsupported char * step", err)
	}
}
