// OTLP files as the collector's file exporter writes them, streamed batch by batch:
//
//	json  one ExportTraceServiceRequest (ExportMetricsServiceRequest) per line, OTLP/JSON
//	proto each request as protobuf, preceded by its length as 4 bytes big-endian (the
//	      file exporter's `format: proto` framing)
//
// Spans are encoded straight from the assembled jobs by the pipeline's emit.JobEncoder
// (pdata's marshallers' bytes for the spans the builder would make, without building them)
// and written batch by batch. Where the spans are needed as pdata (replay --trace-json
// reads them), the pipeline builds them and emit.AppendTracesJSON / AppendTracesProto
// (the same bytes) encode them into a buffer reused across batches. Metrics, a few
// batches per run, are written by pdata's marshallers.

package main

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"

	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/ghostdriver/ghostdriver/internal/emit"
	"github.com/ghostdriver/ghostdriver/internal/pipeline"
)

// Output formats (--output-format).
const (
	formatJSON  = "json"
	formatProto = "proto"
)

// spanFilesFromPdata makes span files from pdata spans (the builder, then
// AppendTracesJSON/Proto) instead of from the jobs (emit.JobEncoder): the earlier path,
// which the tests hold the files to.
var spanFilesFromPdata = false

// otlpFile is one output file and its framing.
type otlpFile struct {
	f     *os.File
	w     *bufio.Writer
	proto bool
	buf   []byte // the encoding of the current batch, reused
}

func createOTLPFile(path, format string) (*otlpFile, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	return &otlpFile{f: f, w: bufio.NewWriterSize(f, 1<<20), proto: format == formatProto}, nil
}

// writeMessage writes one encoded request with the format's framing.
func (o *otlpFile) writeMessage(b []byte) error {
	if o.proto {
		var n [4]byte
		if uint64(len(b)) > 1<<32-1 {
			return fmt.Errorf("a batch of %d bytes does not fit the 4-byte length prefix", len(b))
		}
		binary.BigEndian.PutUint32(n[:], uint32(len(b)))
		if _, err := o.w.Write(n[:]); err != nil {
			return err
		}
		_, err := o.w.Write(b)
		return err
	}
	if _, err := o.w.Write(b); err != nil {
		return err
	}
	return o.w.WriteByte('\n')
}

func (o *otlpFile) writeTraces(td ptrace.Traces) error {
	if o.proto {
		o.buf = emit.AppendTracesProto(o.buf[:0], td)
	} else {
		o.buf = emit.AppendTracesJSON(o.buf[:0], td)
	}
	return o.writeMessage(o.buf)
}

// writeBatch writes one request encoded by the pipeline.
func (o *otlpFile) writeBatch(b *emit.TraceBatch) error {
	if o.proto {
		var n [4]byte
		size := b.Size()
		if uint64(size) > 1<<32-1 {
			return fmt.Errorf("a batch of %d bytes does not fit the 4-byte length prefix", size)
		}
		binary.BigEndian.PutUint32(n[:], uint32(size))
		if _, err := o.w.Write(n[:]); err != nil {
			return err
		}
	}
	if _, err := b.WriteTo(o.w); err != nil {
		return err
	}
	if !o.proto {
		return o.w.WriteByte('\n')
	}
	return nil
}

func (o *otlpFile) writeMetrics(md pmetric.Metrics) error {
	var b []byte
	var err error
	if o.proto {
		var m pmetric.ProtoMarshaler
		b, err = m.MarshalMetrics(md)
	} else {
		var m pmetric.JSONMarshaler
		b, err = m.MarshalMetrics(md)
	}
	if err != nil {
		return err
	}
	return o.writeMessage(b)
}

func (o *otlpFile) close() error {
	return errors.Join(o.w.Flush(), o.f.Close())
}

// fileOutputs writes OTLP/JSON lines (the CUDA command's and the default format).
func fileOutputs(tracesPath, metricsPath string) (pipeline.Outputs, func() error, error) {
	return fileOutputsAs(tracesPath, metricsPath, formatJSON, false, nil)
}

// fileOutputsAs writes spans to tracesPath and metrics to metricsPath (either may be
// empty) in format: spans encoded from the jobs (Outputs.Encoded), or, with pdataSpans,
// from the Traces output's pdata spans (for a caller that also reads them). The pipeline
// calls each output from one goroutine at a time. abort, when set, is called with the
// first write error (the file is then useless: it ends the run instead of failing batch
// after batch).
func fileOutputsAs(tracesPath, metricsPath, format string, pdataSpans bool, abort func(error)) (pipeline.Outputs, func() error, error) {
	var outs pipeline.Outputs
	if format == "" {
		format = formatJSON
	}
	if format != formatJSON && format != formatProto {
		return outs, nil, fmt.Errorf("--output-format %q: want %q or %q", format, formatJSON, formatProto)
	}
	var closers []func() error
	closeAll := func() error {
		var errs []error
		for _, c := range closers {
			errs = append(errs, c())
		}
		return errors.Join(errs...)
	}
	if tracesPath != "" {
		of, err := createOTLPFile(tracesPath, format)
		if err != nil {
			return outs, nil, fmt.Errorf("--output: %w", err)
		}
		closers = append(closers, of.close)
		if pdataSpans || spanFilesFromPdata {
			outs.Traces = func(_ context.Context, td ptrace.Traces) error {
				return failed(abort, "--output "+tracesPath, of.writeTraces(td))
			}
		} else {
			outs.EncodedFormat = emit.FormatJSON
			if of.proto {
				outs.EncodedFormat = emit.FormatProto
			}
			outs.Encoded = func(_ context.Context, b *emit.TraceBatch) error {
				return failed(abort, "--output "+tracesPath, of.writeBatch(b))
			}
		}
	}
	if metricsPath != "" {
		of, err := createOTLPFile(metricsPath, format)
		if err != nil {
			_ = closeAll()
			return outs, nil, fmt.Errorf("--metrics-output: %w", err)
		}
		closers = append(closers, of.close)
		outs.Metrics = func(_ context.Context, md pmetric.Metrics) error {
			return failed(abort, "--metrics-output "+metricsPath, of.writeMetrics(md))
		}
	}
	return outs, closeAll, nil
}

// failed passes err on as permanent (a file that failed a write is not retried), and to
// abort as well, named by what.
func failed(abort func(error), what string, err error) error {
	if err == nil {
		return nil
	}
	if abort != nil {
		abort(fmt.Errorf("%s: %w", what, err))
	}
	return consumererror.NewPermanent(err)
}

// warnLogger shows the pipeline's warnings on stderr: live, spans dropped because the
// output is slower than the source (with counts, at most every 10 s), and refused writes.
func warnLogger(stderr io.Writer) *zap.Logger {
	enc := zap.NewDevelopmentEncoderConfig()
	enc.TimeKey = ""
	return zap.New(zapcore.NewCore(zapcore.NewConsoleEncoder(enc), zapcore.AddSync(stderr), zapcore.WarnLevel))
}
