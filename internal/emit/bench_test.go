// Benchmarks of the per-job cost of rendering (SpanBuilder.Append) and recording
// (MetricsRecorder.RecordJob), reported per job.
package emit

import (
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/ghostdriver/ghostdriver/internal/assemble"
	"github.com/ghostdriver/ghostdriver/internal/metadata"
)

// benchJobs returns n distinct jobs shaped like the fixtures: every other one fully
// measured, the rest partial with an app context and a link.
func benchJobs(n int) []*assemble.Job {
	jobs := make([]*assemble.Job, n)
	for i := range jobs {
		var j *assemble.Job
		if i%2 == 0 {
			j = fullJob()
		} else {
			j = partialJob()
			j.Deps[0].Job.Seqno = uint64(i - 1)
		}
		j.Finished.Seqno = uint64(i)
		jobs[i] = j
	}
	return jobs
}

// BenchmarkAppend renders jobs in batches of 512 (a flush every 512 jobs), which is
// what the pipeline's flusher does under load. The same 512 jobs come back every batch, so
// every job after the first batch collides with its own earlier id and is renamed: this
// measures the id guard's rename chains (≈ 6× the cost of a fresh job), a case a real
// stream does not have; BenchmarkAppendDistinct measures the common one.
func BenchmarkAppend(b *testing.B) {
	const batch = 512
	jobs := benchJobs(batch)
	sb := NewSpanBuilder(testClock)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sb.Append(jobs[i%batch])
		if sb.Len() == batch {
			sb.Take()
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "jobs/s")
}

func BenchmarkRecordJob(b *testing.B) {
	jobs := benchJobs(512)
	m := NewMetricsRecorder(metadata.DefaultMetricsConfig(), time.Unix(0, 0))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		j := jobs[i%len(jobs)]
		m.RecordJob(j, testClock)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "jobs/s")
}

// BenchmarkAppendDistinct renders jobs of distinct identities (a fresh finished fence each,
// as in a capture), in batches of 4096: no id is ever renamed, so the guard's cost is
// that of a stream of new jobs.
func BenchmarkAppendDistinct(b *testing.B) {
	const batch = 4096
	jobs := benchJobs(batch)
	sb := NewSpanBuilder(testClock)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		j := jobs[i%batch]
		j.Finished.Seqno = uint64(i)
		sb.Append(j)
		if sb.Len() == batch {
			sb.Take()
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "jobs/s")
}

// BenchmarkTracesProto encodes one batch of 4096 jobs' spans as an OTLP protobuf request:
// pdata's marshaller (a new buffer each time) against AppendTracesProto (one reused).
func BenchmarkTracesProto(b *testing.B) {
	sb := NewSpanBuilder(testClock)
	for i, j := range benchJobs(4096) {
		j.Finished.Seqno = uint64(i)
		sb.Append(j)
	}
	td := sb.Take()
	b.Run("pdata", func(b *testing.B) {
		var m ptrace.ProtoMarshaler
		for b.Loop() {
			if _, err := m.MarshalTraces(td); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("append", func(b *testing.B) {
		var buf []byte
		for b.Loop() {
			buf = AppendTracesProto(buf[:0], td)
		}
	})
}

// BenchmarkSpansToBytes is the per-job cost of a span file's content, side by side: the
// builder's pdata spans encoded by AppendTracesJSON/Proto (the earlier CLI path) against
// the JobEncoder, jobs of distinct identities in batches of 1024 (the lossless batch).
func BenchmarkSpansToBytes(b *testing.B) {
	const batch = 1024
	for _, format := range []Format{FormatJSON, FormatProto} {
		name := map[Format]string{FormatJSON: "json", FormatProto: "proto"}[format]
		b.Run(name+"/builder", func(b *testing.B) {
			jobs := benchJobs(batch)
			sb := NewSpanBuilder(testClock)
			var buf []byte
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				j := jobs[i%batch]
				j.Finished.Seqno = uint64(i)
				sb.Append(j)
				if sb.Len() == batch {
					if format == FormatProto {
						buf = AppendTracesProto(buf[:0], sb.Take())
					} else {
						buf = AppendTracesJSON(buf[:0], sb.Take())
					}
				}
			}
		})
		b.Run(name+"/encoder", func(b *testing.B) {
			jobs := benchJobs(batch)
			e := NewJobEncoder(testClock, format)
			var buf []byte
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				j := jobs[i%batch]
				j.Finished.Seqno = uint64(i)
				e.Append(j)
				if e.Len() == batch {
					t := e.Take()
					buf = t.AppendTo(buf[:0])
					t.Release()
				}
			}
		})
	}
}
