// v3d's own events and the old i915 completion event, decoded from lines in each
// kernel's own TP_printk format (the version each format was read from is named at its
// line), as tracefs prints them.

package ftrace

import (
	"testing"

	"github.com/ghostdriver/ghostdriver/internal/event"
)

type formatLine struct {
	line      string
	kind      event.Kind
	dev, ring string
	seqno     uint64
}

// kernelFormatLines are the lines of both tests (TestEveryFormatDecoded feeds them too).
func kernelFormatLines() []string {
	var out []string
	for _, c := range append(append([]formatLine(nil), v3dLines...), i915LegacyLines...) {
		out = append(out, c.line)
	}
	for _, c := range accelLines {
		out = append(out, c.line)
	}
	return out
}

var v3dLines = []formatLine{
	// v3d_trace.h at torvalds/linux 135c5504 (4.18): "dev=%u, %s, seqno=%llu, 0x%08x..0x%08x",
	// the %s is is_render ? "RCL" : "BCL"; traced by the 4.18 drm_sched kthread (comm = queue name).
	{"         v3d_bin-231   [002] ....   812.004101: v3d_submit_cl: dev=0, BCL, seqno=17, 0x00a41000..0x00a41240", event.V3DSubmitCL, "0", "BCL", 17},
	{"      v3d_render-232   [000] ....   812.004900: v3d_submit_cl: dev=0, RCL, seqno=18446744073709551615, 0x00b00000..0x00b00c80", event.V3DSubmitCL, "0", "RCL", 1<<64 - 1},
	// 5.x (index 15950616633) and 6.8+ (intel-lab-lkp 641b5988): "dev=%u, seqno=%llu" for
	// v3d_submit_tfu, v3d_submit_csd and the four _irq events; 6.8+ workers are kworkers.
	{" kworker/u8:1-77      [001] .....  1203.100200: v3d_submit_tfu: dev=0, seqno=4", event.V3DSubmitTFU, "0", "", 4},
	{" kworker/u8:3-79      [003] .....  1203.100300: v3d_submit_csd: dev=0, seqno=9", event.V3DSubmitCSD, "0", "", 9},
	{"          <idle>-0     [000] d.h1.  1203.101000: v3d_bcl_irq: dev=0, seqno=17", event.V3DBinIRQ, "0", "", 17},
	{"          <idle>-0     [000] d.h1.  1203.102000: v3d_rcl_irq: dev=1, seqno=18", event.V3DRenderIRQ, "1", "", 18},
	{"          <idle>-0     [000] d.h1.  1203.103000: v3d_tfu_irq: dev=0, seqno=4", event.V3DTFUIRQ, "0", "", 4},
	{"          <idle>-0     [000] d.h1.  1203.104000: v3d_csd_irq: dev=0, seqno=9", event.V3DCSDIRQ, "0", "", 9},
	// 5.x .. 6.8+: "dev=%u".
	{" kworker/u8:2-78      [002] .....  1203.105000: v3d_cache_clean_begin: dev=0", event.V3DCacheCleanBegin, "0", "", 0},
	{" kworker/u8:2-78      [002] .....  1203.105020: v3d_cache_clean_end: dev=0", event.V3DCacheCleanEnd, "0", "", 0},
}

func TestV3DEventsInTheKernelsFormats(t *testing.T) {
	cases := v3dLines
	d := NewDecoder()
	var ev event.Event
	for i, c := range cases {
		if !d.Decode([]byte(c.line), i+1, &ev) {
			t.Fatalf("line %d not decoded: %q (%+v)", i+1, c.line, d.Stats())
		}
		driver := "v3d"
		if c.kind >= event.VC4SubmitCL && c.kind <= event.VC4RenderEndIRQ {
			driver = "vc4"
		}
		if ev.Kind != c.kind || ev.Driver != driver || ev.Device != c.dev || ev.Ring != c.ring || ev.Fence.Seqno != c.seqno || ev.Fence.Context != 0 {
			t.Errorf("line %d: kind %v driver %q dev %q ring %q fence %v", i+1, ev.Kind, ev.Driver, ev.Device, ev.Ring, ev.Fence)
		}
	}
	// Known, not decoded: each with the table's reason, counted as unknown.
	for i, l := range []string{
		"       glmark2-9001  [001] .....  1203.099000: v3d_submit_cl_ioctl: dev=0, RCL 0x00b00000..0x00b00c80",
		"       glmark2-9001  [001] .....  1203.099100: v3d_submit_tfu_ioctl: dev=0, IIA 0x00c00000",
		"       glmark2-9001  [001] .....  1203.099200: v3d_submit_csd_ioctl: dev=0, CFG5 0x00d00001, CFG6 0x00d10000",
		" kworker/0:2-40      [000] .....  1210.000000: v3d_reset_begin: dev=0",
		" kworker/u8:2-78     [002] .....  1210.100000: v3d_cpu_job_begin: dev=0, job_type=1",
		"       glxgears-812   [000] ....   410.000050: vc4_submit_cl_ioctl: dev=0, bin_cl_size=512, shader_rec_size=96, bo_count=4",
		"       glxgears-812   [000] ....   410.003000: vc4_wait_for_seqno_begin: dev=0, seqno=301, timeout=18446744073709551615",
	} {
		if d.Decode([]byte(l), 100+i, &ev) {
			t.Errorf("decoded %q: %+v", l, ev)
		}
	}
}

var i915LegacyLines = []formatLine{
	// 3.x i915_trace.h (struct intel_ring_buffer; notify_ring: seqno = ring->get_seqno):
	// i915_gem_request_complete "dev=%u, ring=%u, seqno=%u" (snippets S7, a ChromeOS 3.x capture).
	{"             cat-21833 [000] 18422.956832: i915_gem_request_complete: dev=0, ring=1, seqno=1178364", event.I915RequestComplete, "0", "1", 1178364},
	// 4.x (struct intel_engine_cs, drm-kmod 08780cff ≤4.10): i915_gem_request_notify, the same format.
	{"          <idle>-0     [002] d.h1  5120.000100: i915_gem_request_notify: dev=0, ring=0, seqno=4242", event.I915RequestComplete, "0", "0", 4242},
	// 2.6.32..2.6.36 (one ring, index 4023458): "dev=%u, seqno=%u".
	{"            Xorg-1012  [001]  2784.774864: i915_gem_request_complete: dev=0, seqno=77", event.I915RequestComplete, "0", "", 77},
	{"            Xorg-1012  [001]  2784.774000: i915_gem_request_add: dev=0, seqno=77", event.I915RequestAdd, "0", "", 77},
	// 3.x i915_gem_ring_dispatch "dev=%u, ring=%u, seqno=%u, flags=%x" (drm-kmod 08780cff).
	{"          chrome-1539  [000] 18422.955660: i915_gem_ring_dispatch: dev=0, ring=1, seqno=1178364, flags=1", event.I915RequestQueue, "0", "1", 1178364},
}

func TestI915LegacyCompletionInTheKernelsFormats(t *testing.T) {
	cases := i915LegacyLines
	d := NewDecoder()
	var ev event.Event
	for i, c := range cases {
		if !d.Decode([]byte(c.line), i+1, &ev) {
			t.Fatalf("line %d not decoded: %q (%+v)", i+1, c.line, d.Stats())
		}
		if ev.Kind != c.kind || ev.Driver != "i915" || ev.Device != c.dev || ev.Ring != c.ring || ev.Fence.Seqno != c.seqno || ev.Fence.Context != 0 {
			t.Errorf("line %d: kind %v driver %q dev %q ring %q fence %v", i+1, ev.Kind, ev.Driver, ev.Device, ev.Ring, ev.Fence)
		}
	}
}
