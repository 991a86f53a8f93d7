// Reading OTLP span files as the collector's file exporter writes them (and `ghostdriver
// replay --output`): OTLP/JSON, one ExportTraceServiceRequest per line, or protobuf, each
// request preceded by its length as 4 bytes big-endian (`format: proto`).

package timeline

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

// FileFormat is what a file holds, as far as its first bytes tell.
type FileFormat int

const (
	NotOTLP   FileFormat = iota // anything else: for the CLI, a capture
	OTLPJSON                    // starts with '{' after white space
	OTLPProto                   // starts with a 4-byte length whose request parses
)

// maxProtoFrame bounds one length-prefixed request (the writer's limit is 4 GiB; no batch
// comes near 256 MiB).
const maxProtoFrame = 256 << 20

// ReadFile reads an OTLP span file in either format into a set. An error names the file
// and the line or request.
func ReadFile(path string) (*Set, error) {
	format, err := Sniff(path)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var set *Set
	switch format {
	case OTLPJSON:
		set, err = Read(f)
	case OTLPProto:
		set, err = ReadProto(f)
	default:
		err = errors.New("neither OTLP/JSON lines nor length-prefixed OTLP protobuf")
	}
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
	sc.Buffer(make([]byte, 1<<20), maxProtoFrame)
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

// ReadProto reads length-prefixed OTLP protobuf requests.
func ReadProto(r io.Reader) (*Set, error) {
	b := NewBuilder()
	var um ptrace.ProtoUnmarshaler
	br := bufio.NewReaderSize(r, 1<<20)
	var buf []byte
	for n := 1; ; n++ {
		var hdr [4]byte
		if _, err := io.ReadFull(br, hdr[:]); err == io.EOF {
			return b.Finish(), nil
		} else if err != nil {
			return nil, fmt.Errorf("request %d: length prefix: %w", n, err)
		}
		size := binary.BigEndian.Uint32(hdr[:])
		if size > maxProtoFrame {
			return nil, fmt.Errorf("request %d: length %d is over %d bytes: not a length-prefixed OTLP file", n, size, maxProtoFrame)
		}
		if cap(buf) < int(size) {
			buf = make([]byte, size)
		}
		buf = buf[:size]
		if _, err := io.ReadFull(br, buf); err != nil {
			return nil, fmt.Errorf("request %d: %d bytes announced: %w", n, size, err)
		}
		td, err := um.UnmarshalTraces(buf)
		if err != nil {
			return nil, fmt.Errorf("request %d is not OTLP protobuf traces: %w", n, err)
		}
		b.Add(td)
	}
}

// Sniff tells an OTLP span file from anything else (a capture: ftrace text, `trace-cmd
// report` text, gzip) by its first bytes.
func Sniff(path string) (FileFormat, error) {
	f, err := os.Open(path)
	if err != nil {
		return NotOTLP, err
	}
	defer f.Close()
	br := bufio.NewReader(f)
	head, _ := br.Peek(4)
	if len(head) == 4 && head[0] == 0 {
		// Text and gzip never start with a NUL byte; a frame length below 16 MiB does.
		size := binary.BigEndian.Uint32(head)
		if size <= maxProtoFrame {
			buf := make([]byte, 4+int(size))
			if _, err := io.ReadFull(br, buf); err == nil {
				var um ptrace.ProtoUnmarshaler
				if _, err := um.UnmarshalTraces(buf[4:]); err == nil {
					return OTLPProto, nil
				}
			}
		}
		return NotOTLP, nil
	}
	for {
		c, err := br.ReadByte()
		if err == io.EOF {
			return NotOTLP, nil
		}
		if err != nil {
			return NotOTLP, err
		}
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		}
		if c == '{' {
			return OTLPJSON, nil
		}
		return NotOTLP, nil
	}
}
