package enrich

import (
	"testing"

	"github.com/ghostdriver/ghostdriver/internal/ctxtier"
	"github.com/ghostdriver/ghostdriver/internal/cuda"
	"github.com/ghostdriver/ghostdriver/internal/tenant/appctx"
)

// A CUDA submission of a process with TRACEPARENT and no in-kernel context is parented to
// that span and carries its trace flags, sampled or not; a kernel context, first in the
// default order, keeps its own.
func TestTraceparentSubmission(t *testing.T) {
	for _, c := range []struct {
		name, traceparent string
		flags             uint8
	}{{"sampled", traceparent, 0x01}, {"unsampled", unsampled, 0x00}} {
		t.Run(c.name, func(t *testing.T) {
			pid := sleeper(t, "TRACEPARENT="+c.traceparent)
			e := CUDA{newEnricher(t, Config{}, nil)}
			firstSight(e.Enricher, pid)
			waitLoaded(t, e.Enricher, pid)
			tp, _ := appctx.ParseTraceParent(c.traceparent)
			s := &cuda.Submission{PID: pid, TraceFlags: ^c.flags} // no tier: the flags are not kept
			e.Submission(s)
			if s.CtxTier != ctxtier.Traceparent || s.TraceID != tp.TraceID || s.SpanID != tp.SpanID || s.TraceFlags != c.flags {
				t.Errorf("tier %d trace %x span %x flags %02x, want TRACEPARENT's, flags %02x",
					s.CtxTier, s.TraceID, s.SpanID, s.TraceFlags, c.flags)
			}
			kernel := &cuda.Submission{PID: pid, CtxTier: ctxtier.OBI, TraceID: [16]byte{9}, SpanID: [8]byte{9}, TraceFlags: ^c.flags}
			e.Submission(kernel)
			if kernel.CtxTier != ctxtier.OBI || kernel.TraceFlags != ^c.flags {
				t.Errorf("kernel context: tier %d flags %02x, want %d %02x", kernel.CtxTier, kernel.TraceFlags, ctxtier.OBI, ^c.flags)
			}
		})
	}
}
