// Reads a capture line by line: plain text or gzip (by magic bytes, not by name), lines of
// any length without failing (the longest are reported, not buffered). A last line without
// its newline is reported as cut off: the capture was truncated inside it.

package replay

import (
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
)

// MaxLineLen is the longest line handed to the decoder; longer lines are skipped and
// counted malformed.
const MaxLineLen = 1 << 20

const readBufferSize = 256 << 10

// lineReader yields lines without their newline.
type lineReader struct {
	br      *bufio.Reader
	long    []byte // a line longer than the buffer, being assembled
	max     int
	gzipped bool
}

// newLineReader wraps r, decompressing when r starts with the gzip magic bytes.
func newLineReader(r io.Reader, max int) (*lineReader, error) {
	br := bufio.NewReaderSize(r, readBufferSize)
	lr := &lineReader{br: br, max: max}
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("gzip header: %w", err)
		}
		lr.br, lr.gzipped = bufio.NewReaderSize(zr, readBufferSize), true
	}
	return lr, nil
}

// errUnterminated is next's error for a last line that ends without its newline: the
// input ended inside the line (a capture cut short), whose text must not be trusted
// ("seqno=38" of "seqno=3832"). A stream still being written does not end here: the read
// waits for the rest of the line or for the end of the input.
var errUnterminated = errors.New("the input ends inside its last line (no newline)")

// next returns the next line. The slice is valid until the next call. tooLong is true
// when the line exceeded max (its content is dropped; n is its length). At the end it
// returns io.EOF; a last line without newline comes back as errUnterminated with its
// length in n, and a read error with the partial line read before it (cut short: the
// caller must not trust either).
func (r *lineReader) next() (line []byte, tooLong bool, n int, err error) {
	r.long = r.long[:0]
	for {
		chunk, err := r.br.ReadSlice('\n')
		n += len(chunk)
		switch {
		case errors.Is(err, io.EOF) && n > 0:
			return nil, tooLong, n, errUnterminated
		case err == nil:
			if tooLong {
				return nil, true, n, nil
			}
			if len(r.long) > 0 {
				r.long = append(r.long, chunk...)
				chunk = r.long
			}
			return trimEOL(chunk), false, n, nil
		case errors.Is(err, bufio.ErrBufferFull):
			if !tooLong && len(r.long)+len(chunk) <= r.max {
				r.long = append(r.long, chunk...)
			} else {
				tooLong = true
				r.long = r.long[:0]
			}
		default: // io.EOF with nothing read, or a real error
			if len(r.long) > 0 {
				chunk = append(r.long, chunk...)
			}
			return chunk, tooLong, n, err
		}
	}
}

// buffered reports how many bytes the next read can return without reading the input.
func (r *lineReader) buffered() int { return r.br.Buffered() }

func trimEOL(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
	}
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b = b[:n-1]
	}
	return b
}
