package ftrace

import (
	"testing"

	"github.com/ghostdriver/ghostdriver/internal/event"
)

func TestKnowsPrintFormat(t *testing.T) {
	// Every format of the table is known for every event of its family.
	for _, e := range events {
		if e.fam == nil || e.kind == event.KindUnknown {
			continue
		}
		for _, f := range e.fam.formats {
			if !KnowsPrintFormat(e.name, f.printk) {
				t.Errorf("%s: its own format %q is not known", e.name, f.printk)
			}
		}
	}
	for _, c := range []struct {
		event, printk string
		want          bool
	}{
		// i915 ctx is %u before 5e4d21da, %llu after: the same text.
		{"i915_request_add", "dev=%u, engine=%u:%u, hw_id=%u, ctx=%u, seqno=%u, global=%u", true},
		// widths do not change what the template reads.
		{"xe_hw_fence_signal", "dev=%s, ctx=0x%llx, fence=%p, seqno=%u", true},
		{"drm_sched_job_queue", "dev=%s, fence=%llu:%llu, ring=%s, job count:%u, hw job count:%d, client_id:%llu", true},
		// another literal, another conversion kind, an unread conversion.
		{"drm_sched_job_queue", "dev=%s, fence=%llu:%llu, ring=%s, jobs:%u, hw job count:%d, client_id:%llu", false},
		{"drm_sched_job_done", "fence=%p:%llu signaled", false},
		{"drm_sched_job_done", "fence=%llu:%llu signaled %c", false},
		// known but not decoded, and unknown events.
		{"drm_vblank_event", "crtc=%d, seq=%u", false},
		{"no_such_event", "x=%d", false},
		// an event of another family's format.
		{"drm_sched_process_job", "driver=%s timeline=%s context=%u seqno=%u", false},
	} {
		if got := KnowsPrintFormat(c.event, c.printk); got != c.want {
			t.Errorf("KnowsPrintFormat(%s, %q) = %v, want %v", c.event, c.printk, got, c.want)
		}
	}
}
