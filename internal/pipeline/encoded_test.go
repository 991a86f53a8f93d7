// The Encoded output (spans encoded from the jobs, for files): every job reaches it once,
// live (timed flushes, a blocked consumer's overflow dropped and counted) and lossless
// (full batches, the source waiting); each request decodes with pdata's unmarshaller.
package pipeline

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/ghostdriver/ghostdriver/internal/emit"
)

// decodedJobSpans decodes one encoded request with pdata and counts its gpu.job spans.
func decodedJobSpans(t *testing.T, b *emit.TraceBatch) int {
	t.Helper()
	var u ptrace.ProtoUnmarshaler
	td, err := u.UnmarshalTraces(b.AppendTo(nil))
	if err != nil {
		t.Errorf("an encoded request does not decode: %v", err)
		return 0
	}
	if td.SpanCount() != b.SpanCount() {
		t.Errorf("request holds %d spans, the batch says %d", td.SpanCount(), b.SpanCount())
	}
	return jobSpans(td)
}

func TestEncodedOutputGetsEveryJob(t *testing.T) {
	for _, lossless := range []bool{false, true} {
		var exported, calls atomic.Int64
		out := Outputs{EncodedFormat: emit.FormatProto, Encoded: func(_ context.Context, b *emit.TraceBatch) error {
			calls.Add(1)
			exported.Add(int64(decodedJobSpans(t, b)))
			return nil
		}}
		p, errc := startPipeline(t, floodCapture(t), Config{FlushInterval: time.Millisecond, Lossless: lossless}, out)
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
		st := p.Stats()
		if exported.Load() != floodJobs || st.DroppedJobs != 0 {
			t.Errorf("lossless %v: %d gpu.job spans exported in %d requests, %d dropped; want %d", lossless, exported.Load(), calls.Load(), st.DroppedJobs, floodJobs)
		}
		if lossless && calls.Load() < floodJobs/DefaultLosslessBatchJobs {
			t.Errorf("lossless: %d requests for %d jobs in batches of %d", calls.Load(), floodJobs, DefaultLosslessBatchJobs)
		}
	}
}

func TestEncodedBlockedConsumerDoesNotStallReader(t *testing.T) {
	release := make(chan struct{})
	var exported, calls atomic.Int64
	out := Outputs{EncodedFormat: emit.FormatProto, Encoded: func(_ context.Context, b *emit.TraceBatch) error {
		calls.Add(1)
		<-release
		exported.Add(int64(decodedJobSpans(t, b)))
		return nil
	}}
	p, errc := startPipeline(t, floodCapture(t), Config{FlushInterval: time.Millisecond, MaxBufferedJobs: 512}, out)
	deadline := time.Now().Add(60 * time.Second)
	for p.Stats().Assembler.Completed != floodJobs {
		if time.Now().After(deadline) {
			t.Fatalf("reader stalled behind a blocked consumer: %+v", p.Stats().Assembler)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if st := p.Stats(); calls.Load() != 1 || st.DroppedJobs == 0 {
		t.Errorf("while blocked: %d export calls, %d spans dropped", calls.Load(), st.DroppedJobs)
	}
	close(release)
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	st := p.Stats()
	if got := uint64(exported.Load()) + st.DroppedJobs; got != floodJobs {
		t.Errorf("exported %d + dropped %d = %d, want %d: a job vanished", exported.Load(), st.DroppedJobs, got, floodJobs)
	}
}
