//go:build linux && (386 || amd64)

// The CUDA path's spans through the hand-written OTLP writer: cudaspans builds pdata spans
// and the CLI's files encode them with AppendTracesJSON / AppendTracesProto, added to the
// DRM jobs' requests (TraceBatch.AddTraces). Every CUDA span kind, the GPU timeline's
// children and their events included, must come out as pdata's marshallers write it.
package emit

import (
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/ghostdriver/ghostdriver/internal/assemble"
	"github.com/ghostdriver/ghostdriver/internal/metadata"
)

func cudaFixtureTraces(t *testing.T) ptrace.Traces {
	t.Helper()
	td, _ := cudaFixtureOutputs()
	seen := map[string]bool{}
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		sss := rss.At(i).ScopeSpans()
		for k := 0; k < sss.Len(); k++ {
			spans := sss.At(k).Spans()
			for n := 0; n < spans.Len(); n++ {
				seen[spans.At(n).Name()] = true
			}
		}
	}
	for _, name := range metadata.CUDASpans {
		if !seen[name] {
			t.Fatalf("the CUDA fixtures make no %s span: the equality below would not cover it", name)
		}
	}
	return td
}

func TestCUDASpansSameAsMarshaler(t *testing.T) {
	sameAsPdata(t, jsonEncoding, "cuda spans", cudaFixtureTraces(t))
	sameAsPdata(t, protoEncoding, "cuda spans", cudaFixtureTraces(t))
}

// As the pipeline sends them to a file: beside the DRM jobs of the same request.
func TestCUDASpansInJobEncoderBatches(t *testing.T) {
	extra := func(int) ptrace.Traces { return cudaFixtureTraces(t) }
	for _, c := range encoderCases {
		t.Run(c.String(), func(t *testing.T) {
			sameAsBuilder(t, c, [][]*assemble.Job{{}, allJobs()}, extra)
		})
	}
}
