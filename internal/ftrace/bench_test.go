// BenchmarkDecode: decode throughput over the real gpuvis amdgpu capture.
package ftrace

import (
	"testing"

	"github.com/ghostdriver/ghostdriver/internal/event"
)

func benchLines(b *testing.B, name string) {
	lines := readLines(b, name)
	var bytes int64
	for _, l := range lines {
		bytes += int64(len(l)) + 1
	}
	d := NewDecoder()
	var e event.Event
	b.SetBytes(bytes)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for n, l := range lines {
			d.Decode(l, n+1, &e)
		}
	}
	b.ReportMetric(float64(b.N)*float64(len(lines))/b.Elapsed().Seconds(), "lines/s")
}

// The GPU events of the capture (60% trace markers).
func BenchmarkDecode(b *testing.B) {
	benchLines(b, "gpuvis_amdgpu_4.11_gpu_only.trace-cmd-report.txt")
}

// The full capture: 82% sched_switch lines, counted as unknown.
func BenchmarkDecodeFull(b *testing.B) {
	benchLines(b, "gpuvis_amdgpu_4.11_full.trace-cmd-report.txt.gz")
}
