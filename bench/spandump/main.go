// Command spandump prints every span of an OTLP protobuf trace file (the file exporter's
// framing: 4-byte big-endian length, then an ExportTraceServiceRequest) as one line: ids,
// name, kind, times, attributes, links, status, resource attributes, scope. Sorted, two
// dumps show what differs between two runs whatever their batching (BENCHMARKS.md, export).
//
//	spandump FILE | sort > spans.txt
package main

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: spandump FILE")
		os.Exit(2)
	}
	if err := dump(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "spandump:", err)
		os.Exit(1)
	}
}

func dump(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	var u ptrace.ProtoUnmarshaler
	for req := 1; ; req++ {
		var n [4]byte
		if _, err := io.ReadFull(r, n[:]); errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return fmt.Errorf("request %d: length prefix: %w", req, err)
		}
		msg := make([]byte, binary.BigEndian.Uint32(n[:]))
		if _, err := io.ReadFull(r, msg); err != nil {
			return fmt.Errorf("request %d: %d bytes announced: %w", req, len(msg), err)
		}
		td, err := u.UnmarshalTraces(msg)
		if err != nil {
			return fmt.Errorf("request %d: %w", req, err)
		}
		for i := 0; i < td.ResourceSpans().Len(); i++ {
			rs := td.ResourceSpans().At(i)
			res := fmt.Sprint(rs.Resource().Attributes().AsRaw())
			for j := 0; j < rs.ScopeSpans().Len(); j++ {
				sc := rs.ScopeSpans().At(j).Scope()
				spans := rs.ScopeSpans().At(j).Spans()
				for k := 0; k < spans.Len(); k++ {
					s := spans.At(k)
					links := ""
					for l := 0; l < s.Links().Len(); l++ {
						ln := s.Links().At(l)
						links += fmt.Sprint(ln.TraceID(), ln.SpanID(), ln.Attributes().AsRaw())
					}
					fmt.Fprintln(w, s.TraceID(), s.SpanID(), s.ParentSpanID(), s.Name(), s.Kind(), s.StartTimestamp(), s.EndTimestamp(),
						s.Attributes().AsRaw(), links, s.Status().Code(), s.Status().Message(), res, sc.Name(), sc.Version())
				}
			}
		}
	}
}
