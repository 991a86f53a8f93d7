package assemble

import (
	"testing"

	"github.com/ghostdriver/ghostdriver/internal/event"
)

// The application context belongs to the ioctl that queued the job, with its trace flags
// (thread 100's span is sampled, thread 200's not): per thread, and never carried from an
// earlier ioctl of the same thread into a later one without it.
func TestContextIsPerThreadAndPerIoctl(t *testing.T) {
	fa, fb, fc := fk(0x70, 1), fk(0x70, 2), fk(0x70, 3)
	withCtx := func(t0 int64, tid uint32, b, flags byte) (e event.Event) {
		e = ioctlEnter(t0, tid)
		e.TraceID, e.SpanID, e.CtxTier, e.TraceFlags = [16]byte{b, 1}, [8]byte{b, 2}, 1, flags
		return e
	}
	c := newCollector(testConfig())
	jobs := c.run(
		withCtx(10, 100, 0xa, 0x01), withCtx(11, 200, 0xb, 0x00),
		queue617(12, 100, fa), queue617(13, 200, fb),
		ioctlExit(14, 100), ioctlExit(15, 200),
		ioctlEnter(20, 100), queue617(21, 100, fc), ioctlExit(22, 100), // thread 100 again, no span active
		run617(30, fa), done617(31, fa), run617(32, fb), done617(33, fb), run617(34, fc), done617(35, fc),
	)
	a, b, cj := find(t, jobs, fa), find(t, jobs, fb), find(t, jobs, fc)
	if a.TraceID[0] != 0xa || a.SpanID[0] != 0xa || a.CtxTier != 1 || a.TraceFlags != 0x01 || a.TID != 100 {
		t.Errorf("job a: %x %x tier %d flags %02x tid %d", a.TraceID, a.SpanID, a.CtxTier, a.TraceFlags, a.TID)
	}
	if b.TraceID[0] != 0xb || b.SpanID[0] != 0xb || b.CtxTier != 1 || b.TraceFlags != 0x00 || b.TID != 200 {
		t.Errorf("job b: %x %x tier %d flags %02x tid %d", b.TraceID, b.SpanID, b.CtxTier, b.TraceFlags, b.TID)
	}
	if cj.CtxTier != 0 || cj.TraceID != [16]byte{} || cj.TraceFlags != 0 {
		t.Errorf("job c took the context of an earlier ioctl: %x tier %d flags %02x", cj.TraceID, cj.CtxTier, cj.TraceFlags)
	}
}
