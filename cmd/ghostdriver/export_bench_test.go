// A benchmark of `ghostdriver replay --output` on a capture named by the environment, for
// CPU profiles of the export path (scripts/bench-export.sh measures the built binary):
//
//	GHOSTDRIVER_EXPORT_CAPTURE=cap.txt go test -run '^$' -bench ReplayToFile -benchtime 1x -cpuprofile cpu.out ./cmd/ghostdriver
package main

import (
	"io"
	"os"
	"path/filepath"
	"testing"
)

func BenchmarkReplayToFile(b *testing.B) {
	capture := os.Getenv("GHOSTDRIVER_EXPORT_CAPTURE")
	if capture == "" {
		b.Skip("GHOSTDRIVER_EXPORT_CAPTURE names no capture to replay")
	}
	for _, format := range []string{formatJSON, formatProto} {
		b.Run(format, func(b *testing.B) {
			out := filepath.Join(b.TempDir(), "spans."+format)
			for b.Loop() {
				if rc := run([]string{"replay", capture, "--quiet", "--epoch", "1700000000000000000",
					"--output", out, "--output-format", format}, io.Discard, os.Stderr); rc != 0 {
					b.Fatalf("replay exited %d", rc)
				}
			}
		})
	}
}
