// BenchmarkDecode: decode throughput over the real gpuvis amdgpu capture (and over a
// generated one: BenchmarkDecodeCapture, BenchmarkTimeCapture).
package ftrace

import (
	"bufio"
	"bytes"
	"os"
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

// A generated capture (GHOSTDRIVER_EXPORT_CAPTURE, as cmd/ghostdriver's export benchmark),
// its first 500 000 lines in memory: the decoder alone, and the time reader alone.
func captureLines(b *testing.B) [][]byte {
	path := os.Getenv("GHOSTDRIVER_EXPORT_CAPTURE")
	if path == "" {
		b.Skip("GHOSTDRIVER_EXPORT_CAPTURE names no capture")
	}
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	var lines [][]byte
	sc := bufio.NewScanner(f)
	for len(lines) < 500_000 && sc.Scan() {
		lines = append(lines, bytes.Clone(sc.Bytes()))
	}
	return lines
}

func BenchmarkDecodeCapture(b *testing.B) {
	lines := captureLines(b)
	var e event.Event
	for b.Loop() {
		d := NewDecoder()
		for n, l := range lines {
			d.Decode(l, n+1, &e)
		}
	}
	b.ReportMetric(float64(b.N)*float64(len(lines))/b.Elapsed().Seconds(), "lines/s")
}

func BenchmarkTimeCapture(b *testing.B) {
	lines := captureLines(b)
	for b.Loop() {
		var r TimeReader
		for _, l := range lines {
			r.Time(l)
		}
	}
	b.ReportMetric(float64(b.N)*float64(len(lines))/b.Elapsed().Seconds(), "lines/s")
}
