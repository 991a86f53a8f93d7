// Command otlpcount counts what an OTLP trace file holds, read the way the collector's file
// exporter writes it, independently of ghostdriver's own counters (BENCHMARKS.md, export):
//
//	otlpcount -format json  FILE   one ExportTraceServiceRequest per line (OTLP/JSON)
//	otlpcount -format proto FILE   each request preceded by its length, 4 bytes big-endian
//
// Prints one TSV row: requests, spans, gpu.job spans, distinct gpu.job span ids. A file
// that ends inside a request is an error. With -digest, a sixth column: a digest of the
// multiset of spans (each span's fields, attributes, status, links, resource and scope
// hashed, the hashes summed), equal for two files that hold the same spans however they
// are batched.
package main

import (
	"bufio"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"hash/fnv"
	"io"
	"os"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

func main() {
	format := flag.String("format", "json", "json or proto")
	flag.BoolVar(&withDigest, "digest", false, "print a digest of the spans held (batching aside)")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: otlpcount -format json|proto FILE")
		os.Exit(2)
	}
	if err := run(*format, flag.Arg(0)); err != nil {
		fmt.Fprintln(os.Stderr, "otlpcount:", err)
		os.Exit(1)
	}
}

var withDigest bool

type counts struct {
	requests, spans, jobs int
	ids                   map[pcommon.SpanID]struct{}
	digest                uint64
}

func (c *counts) add(td ptrace.Traces) {
	c.requests++
	for i := 0; i < td.ResourceSpans().Len(); i++ {
		rs := td.ResourceSpans().At(i)
		ss := rs.ScopeSpans()
		for j := 0; j < ss.Len(); j++ {
			var outer []byte
			if withDigest {
				outer = appendMap(nil, rs.Resource().Attributes())
				outer = fmt.Appendf(outer, "|%s|%s|%s|%s|", rs.SchemaUrl(), ss.At(j).Scope().Name(), ss.At(j).Scope().Version(), ss.At(j).SchemaUrl())
			}
			spans := ss.At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				c.spans++
				if withDigest {
					c.digest += spanDigest(outer, spans.At(k))
				}
				if s := spans.At(k); s.Name() == "gpu.job" {
					c.jobs++
					c.ids[s.SpanID()] = struct{}{}
				}
			}
		}
	}
}

func run(format, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	c := counts{ids: map[pcommon.SpanID]struct{}{}}
	switch format {
	case "proto":
		var u ptrace.ProtoUnmarshaler
		var msg []byte
		for {
			var n [4]byte
			if _, err := io.ReadFull(r, n[:]); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				return fmt.Errorf("request %d: length prefix: %w", c.requests+1, err)
			}
			msg = append(msg[:0], make([]byte, binary.BigEndian.Uint32(n[:]))...)
			if _, err := io.ReadFull(r, msg); err != nil {
				return fmt.Errorf("request %d: %d bytes announced: %w", c.requests+1, len(msg), err)
			}
			td, err := u.UnmarshalTraces(msg)
			if err != nil {
				return fmt.Errorf("request %d: %w", c.requests+1, err)
			}
			c.add(td)
		}
	case "json":
		var u ptrace.JSONUnmarshaler
		for {
			line, err := r.ReadBytes('\n')
			if len(line) > 0 {
				if line[len(line)-1] != '\n' {
					return fmt.Errorf("request %d: no newline at the end of the file", c.requests+1)
				}
				td, uerr := u.UnmarshalTraces(line)
				if uerr != nil {
					return fmt.Errorf("request %d: %w", c.requests+1, uerr)
				}
				c.add(td)
			}
			if errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				return err
			}
		}
	default:
		return fmt.Errorf("-format %q: want json or proto", format)
	}
	if withDigest {
		fmt.Printf("%d\t%d\t%d\t%d\t%016x\n", c.requests, c.spans, c.jobs, len(c.ids), c.digest)
		return nil
	}
	fmt.Printf("%d\t%d\t%d\t%d\n", c.requests, c.spans, c.jobs, len(c.ids))
	return nil
}

// spanDigest hashes a span with its resource and scope (outer): every field the
// collector's file exporter can carry for the spans ghostdriver writes.
func spanDigest(outer []byte, s ptrace.Span) uint64 {
	b := append([]byte(nil), outer...)
	b = fmt.Appendf(b, "%x|%x|%x|%s|%d|%s|%d|%d|%d|", s.TraceID(), s.SpanID(), s.ParentSpanID(), s.TraceState().AsRaw(),
		s.Flags(), s.Name(), s.Kind(), s.StartTimestamp(), s.EndTimestamp())
	b = appendMap(b, s.Attributes())
	b = fmt.Appendf(b, "|%d|%d|%s|%d|%d|", s.DroppedAttributesCount(), s.Status().Code(), s.Status().Message(), s.Events().Len(), s.DroppedEventsCount())
	for i := 0; i < s.Links().Len(); i++ {
		l := s.Links().At(i)
		b = fmt.Appendf(b, "link %x|%x|%s|%d|", l.TraceID(), l.SpanID(), l.TraceState().AsRaw(), l.Flags())
		b = appendMap(b, l.Attributes())
	}
	b = fmt.Appendf(b, "|%d", s.DroppedLinksCount())
	h := fnv.New64a()
	h.Write(b)
	return h.Sum64()
}

// appendMap appends the attributes in their order, with their value types.
func appendMap(b []byte, m pcommon.Map) []byte {
	m.Range(func(k string, v pcommon.Value) bool {
		b = fmt.Appendf(b, "%q=%d:%q;", k, v.Type(), v.AsString())
		return true
	})
	return b
}
