// Reading OTLP/JSON span files: one ExportTraceServiceRequest per line, as written by
// `ghostdriver replay --output` and by the collector's file exporter.
package timeline

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

// ReadFile reads an OTLP/JSON lines file into a set. An error names the line.
func ReadFile(path string) (*Set, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	set, err := Read(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return set, nil
}

// Read reads OTLP/JSON lines (blank lines are skipped).
func Read(r io.Reader) (*Set, error) {
	b := NewBuilder()
	var um ptrace.JSONUnmarshaler
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 256<<20)
	line := 0
	for sc.Scan() {
		line++
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		td, err := um.UnmarshalTraces(sc.Bytes())
		if err != nil {
			return nil, fmt.Errorf("line %d is not OTLP/JSON traces: %w", line, err)
		}
		b.Add(td)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("after line %d: %w", line, err)
	}
	return b.Finish(), nil
}

// LooksLikeOTLPJSON says whether the file starts (after white space) with '{', as an
// OTLP/JSON file does and a capture (ftrace text, `trace-cmd report` text, gzip) does not.
func LooksLikeOTLPJSON(path string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	br := bufio.NewReader(f)
	for {
		c, err := br.ReadByte()
		if err == io.EOF {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		}
		return c == '{', nil
	}
}
