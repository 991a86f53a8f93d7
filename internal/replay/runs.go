// Captures that are not in time order: per-CPU trace files (tracefs per_cpu/cpuN/trace,
// `trace-cmd report --cpu N`) concatenated, each in order but the whole not. Before
// replaying a regular file, Run scans it once for its sorted runs: a run ends where a
// line's timestamp is earlier than one before it in the run. A file of one run (every
// capture tracefs or trace-cmd report writes) is replayed as it is; a file of several is
// replayed by merging its runs by time, each read by its own reader over its byte range,
// so memory stays bounded (one small buffer a run) whatever the file's size. A gzipped
// capture of several runs is first decompressed into an unlinked temporary file (disk,
// not memory) so that its runs can be read in place.
//
// Lines without a timestamp (headers, "CPU:N [LOST n EVENTS]" notes) keep their place in
// their run: they go out after the run's line before them. The lines without a timestamp
// just before a run's first event (the next per-CPU file's header, a loss note at its
// start) belong to that run, not to the one before.

package replay

import (
	"bufio"
	"container/heap"
	"errors"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/ghostdriver/ghostdriver/internal/ftrace"
)

// MaxRuns is the most sorted runs a capture may have: one per CPU for concatenated
// per-CPU files, so thousands only for input that is not a capture in time order at all.
const MaxRuns = 4096

// mergeMemory bounds the read buffers of all runs together.
const mergeMemory = 16 << 20

// minRunBuffer is the smallest read buffer of a run (lines longer than it are assembled).
const minRunBuffer = 4 << 10

// segment is one sorted run: bytes [off, end) of the (decompressed) capture, starting at
// line number line.
type segment struct {
	off, end int64
	line     int
}

// errTooManyRuns is scanRuns' error for input with more than MaxRuns sorted runs.
var errTooManyRuns = errors.New("too many sorted runs")

// scanRuns reads the capture once and returns its sorted runs. An error means the scan
// could not read the input to its end (the replay then reads the file in order and
// reports the error where it meets it), or errTooManyRuns.
func scanRuns(f *os.File) (runs []segment, gzipped bool, err error) {
	lr, err := newLineReader(f, MaxLineLen)
	if err != nil {
		return nil, false, err
	}
	var (
		tr       ftrace.TimeReader
		off      int64      // offset of the line being read
		tail     int64 = -1 // start of the lines without time after the run's last timed line
		tailLine int        // its line number
		last     = int64(math.MinInt64)
		cur      = segment{line: 1}
		lineNo   = 0
	)
	for {
		line, tooLong, n, err := lr.next()
		lineNo++
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, errUnterminated) {
				cur.end = off + int64(n)
				return append(runs, cur), lr.gzipped, nil
			}
			return nil, lr.gzipped, err
		}
		if !tooLong {
			if t, ok := tr.Time(line); ok {
				if t < last {
					// a new run starts with the lines without time before this one
					start, startLine := off, lineNo
					if tail >= 0 {
						start, startLine = tail, tailLine
					}
					cur.end = start
					runs = append(runs, cur)
					if len(runs) >= MaxRuns {
						return nil, lr.gzipped, errTooManyRuns
					}
					cur = segment{off: start, line: startLine}
				}
				last, tail = t, -1
			} else if tail < 0 {
				tail, tailLine = off, lineNo
			}
		}
		off += int64(n)
	}
}

// spill decompresses a gzipped capture into an unlinked temporary file and returns it,
// positioned anywhere (readers use ReadAt through section readers).
func spill(path string) (*os.File, error) {
	src, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	lr, err := newLineReader(src, MaxLineLen)
	if err != nil {
		return nil, err
	}
	tmp, err := os.CreateTemp("", "ghostdriver-replay-*")
	if err != nil {
		return nil, fmt.Errorf("a temporary file to merge the gzipped capture's runs in: %w", err)
	}
	os.Remove(tmp.Name()) // unlinked: gone when closed, whatever happens
	if _, err := io.Copy(tmp, lr.br); err != nil {
		tmp.Close()
		return nil, fmt.Errorf("decompressing into %s: %w", os.TempDir(), err)
	}
	return tmp, nil
}

// lineSource yields the lines of a capture with their line numbers.
type lineSource interface {
	// next is lineReader.next with the line's number in the file.
	next() (line []byte, tooLong bool, n, lineNo int, err error)
	// buffered reports how many bytes the next read can return without waiting.
	buffered() int
}

// inOrder reads the capture from start to end.
type inOrder struct {
	lr     *lineReader
	lineNo int
}

func (r *inOrder) next() ([]byte, bool, int, int, error) {
	r.lineNo++
	line, tooLong, n, err := r.lr.next()
	return line, tooLong, n, r.lineNo, err
}

func (r *inOrder) buffered() int { return r.lr.buffered() }

// merged reads the runs of a capture merged by time.
type merged struct {
	runs []*runReader
	h    runHeap
	cur  *runReader // the run whose line was returned last: advanced on the next call
}

// runReader reads one run and holds its next line.
type runReader struct {
	idx     int
	lr      *lineReader
	tr      ftrace.TimeReader
	lineNo  int
	key     int64 // the time the pending line goes out at
	last    int64 // the run's last timestamp so far
	line    []byte
	tooLong bool
	n       int
	err     error // io.EOF, errUnterminated or a read error, with the pending line
}

func newMerged(f io.ReaderAt, runs []segment) *merged {
	size := min(max(mergeMemory/len(runs), minRunBuffer), readBufferSize)
	m := &merged{}
	for i, s := range runs {
		lr := &lineReader{br: bufio.NewReaderSize(io.NewSectionReader(f, s.off, s.end-s.off), size), max: MaxLineLen}
		r := &runReader{idx: i, lr: lr, lineNo: s.line - 1, last: math.MinInt64}
		if r.advance() {
			m.h = append(m.h, r)
		}
		m.runs = append(m.runs, r)
	}
	heap.Init(&m.h)
	return m
}

// advance reads the run's next line; false at the run's end (nothing pending).
func (r *runReader) advance() bool {
	r.line, r.tooLong, r.n, r.err = r.lr.next()
	r.lineNo++
	if errors.Is(r.err, io.EOF) {
		return false
	}
	r.key = r.last
	if r.err == nil && !r.tooLong {
		if t, ok := r.tr.Time(r.line); ok {
			r.key, r.last = t, t
		}
	}
	return true
}

func (m *merged) next() ([]byte, bool, int, int, error) {
	if m.cur != nil {
		if m.cur.err == nil && m.cur.advance() {
			heap.Push(&m.h, m.cur)
		}
		m.cur = nil
	}
	if len(m.h) == 0 {
		return nil, false, 0, 0, io.EOF
	}
	r := heap.Pop(&m.h).(*runReader)
	m.cur = r
	return r.line, r.tooLong, r.n, r.lineNo, r.err
}

// buffered: a merge only reads regular files, which never wait.
func (m *merged) buffered() int { return 1 }

// runHeap orders runs by the time of their pending line, then by their place in the file.
type runHeap []*runReader

func (h runHeap) Len() int { return len(h) }
func (h runHeap) Less(i, j int) bool {
	return h[i].key < h[j].key || h[i].key == h[j].key && h[i].idx < h[j].idx
}
func (h runHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *runHeap) Push(x any)   { *h = append(*h, x.(*runReader)) }
func (h *runHeap) Pop() any {
	old := *h
	r := old[len(old)-1]
	*h = old[:len(old)-1]
	return r
}
