// Benchmarks of the two passes over a capture, without the pipeline behind them: the
// scan for sorted runs, and reading and decoding every line. They read the capture that
// GHOSTDRIVER_EXPORT_CAPTURE names (the one cmd/ghostdriver's export benchmark replays).
package replay

import (
	"os"
	"testing"

	"github.com/ghostdriver/ghostdriver/internal/event"
	"github.com/ghostdriver/ghostdriver/internal/ftrace"
)

func benchCapture(b *testing.B) *os.File {
	path := os.Getenv("GHOSTDRIVER_EXPORT_CAPTURE")
	if path == "" {
		b.Skip("GHOSTDRIVER_EXPORT_CAPTURE names no capture")
	}
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { f.Close() })
	return f
}

func BenchmarkScanRuns(b *testing.B) {
	f := benchCapture(b)
	for b.Loop() {
		f.Seek(0, 0)
		if _, _, err := scanRuns(f); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkReadDecode(b *testing.B) {
	f := benchCapture(b)
	var ev event.Event
	for b.Loop() {
		f.Seek(0, 0)
		lr, err := newLineReader(f, MaxLineLen)
		if err != nil {
			b.Fatal(err)
		}
		d := ftrace.NewDecoder()
		for n := 1; ; n++ {
			line, tooLong, _, err := lr.next()
			if err != nil {
				break
			}
			if !tooLong {
				d.Decode(line, n, &ev)
			}
		}
	}
}
