// Replay of real captures, plain and gzipped, whole and truncated; long lines; pacing,
// cancellation and the clock.
package replay

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ghostdriver/ghostdriver/internal/event"
	"github.com/ghostdriver/ghostdriver/internal/testreq"
)

const gpuOnly = "../../testdata/captures/gpuvis_amdgpu_4.11_gpu_only.trace-cmd-report.txt"

// Events of the gpu_only capture (see internal/ftrace/capture_test.go for how these
// numbers were computed with grep).
const gpuOnlyEvents = 755 + 693 + 1976 + 6027

// recorder is a Sink that keeps copies of everything it is given.
type recorder struct {
	mu         sync.Mutex
	events     []event.Event
	batches    []int
	watermarks []int64
	firstAt    time.Time
	onConsume  func()
}

func (r *recorder) Consume(b []event.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.firstAt.IsZero() {
		r.firstAt = time.Now()
	}
	r.events = append(r.events, b...)
	r.batches = append(r.batches, len(b))
	if r.onConsume != nil {
		r.onConsume()
	}
}

func (r *recorder) Watermark(t int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.watermarks = append(r.watermarks, t)
}

func mustNew(t *testing.T, cfg Config) *Source {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestReplayCapture(t *testing.T) {
	const epoch = 1_500_000_000_000_000_000
	s := mustNew(t, Config{Path: gpuOnly, Epoch: epoch, HasEpoch: true})
	var rec recorder
	if err := s.Run(context.Background(), &rec); err != nil {
		t.Fatal(err)
	}
	if len(rec.events) != gpuOnlyEvents {
		t.Fatalf("%d events, want %d", len(rec.events), gpuOnlyEvents)
	}
	st := s.Stats()
	if st.EventsOf(event.JobQueue) != 755 || st.EventsOf(event.JobRun) != 693 || st.EventsOf(event.FenceSignaled) != 1976 ||
		st.EventsOf(event.Marker) != 6027 || st.Malformed != 0 || st.Unknown["drm_vblank_event"] != 247 {
		t.Errorf("stats %+v", st)
	}
	// batches of 256 but the last, a watermark after each = the batch's latest event.
	n := 0
	for i, b := range rec.batches {
		if b != DefaultBatchSize && i != len(rec.batches)-1 {
			t.Fatalf("batch %d has %d events", i, b)
		}
		n += b
		if w := rec.watermarks[i]; w != rec.events[n-1].Time {
			t.Errorf("watermark %d = %d, want %d", i, w, rec.events[n-1].Time)
		}
	}
	if len(rec.watermarks) != len(rec.batches) {
		t.Errorf("%d watermarks for %d batches", len(rec.watermarks), len(rec.batches))
	}
	// Epoch semantics: wall = epoch + capture time, exactly.
	first := rec.events[0]
	if first.Time != 630659_131_089_000 || s.Clock().WallNanos(first.Time) != epoch+first.Time {
		t.Errorf("first event at %d, wall %d", first.Time, s.Clock().WallNanos(first.Time))
	}
	// The events are the decoder's, copied out intact.
	if j := rec.events[1]; j.Kind != event.Marker || !strings.HasPrefix(j.Text, "[Compositor] After wait query") {
		t.Errorf("second event %+v", j)
	}
}

func TestEpochZeroIsAnEpoch(t *testing.T) {
	s := mustNew(t, Config{Path: gpuOnly, HasEpoch: true})
	if got := s.Clock().WallNanos(42); got != 42 {
		t.Errorf("WallNanos(42) = %d with epoch 0", got)
	}
}

// Without an epoch the first event is anchored to the time Run started.
func TestUnsetEpochAnchorsFirstEvent(t *testing.T) {
	s := mustNew(t, Config{Path: gpuOnly})
	var rec recorder
	before := time.Now().UnixNano()
	if err := s.Run(context.Background(), &rec); err != nil {
		t.Fatal(err)
	}
	firstWall := s.Clock().WallNanos(rec.events[0].Time)
	if firstWall < before || firstWall > rec.firstAt.UnixNano() {
		t.Errorf("first event's wall time %d not within [%d, %d]", firstWall, before, rec.firstAt.UnixNano())
	}
	last := rec.events[len(rec.events)-1]
	if got, want := s.Clock().WallNanos(last.Time)-firstWall, last.Time-rec.events[0].Time; got != want {
		t.Errorf("wall span %d, capture span %d", got, want)
	}
}

// gzipFile writes data gzipped to a file whose name does not say so.
func gzipFile(t *testing.T, data []byte) (path string, gz []byte) {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write(data)
	zw.Close()
	path = filepath.Join(t.TempDir(), "capture.txt")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, b.Bytes()
}

func TestReplayGzipByMagic(t *testing.T) {
	data, err := os.ReadFile(gpuOnly)
	if err != nil {
		t.Fatal(err)
	}
	path, _ := gzipFile(t, data)
	s := mustNew(t, Config{Path: path, BatchSize: 1000})
	var rec recorder
	if err := s.Run(context.Background(), &rec); err != nil {
		t.Fatal(err)
	}
	if len(rec.events) != gpuOnlyEvents || len(rec.batches) != 10 {
		t.Errorf("%d events in %d batches", len(rec.events), len(rec.batches))
	}
}

// A gzip cut in half: everything decodable is delivered, then a clear error; the stats
// keep what was decoded.
func TestReplayTruncatedGzip(t *testing.T) {
	data, err := os.ReadFile(gpuOnly)
	if err != nil {
		t.Fatal(err)
	}
	path, gz := gzipFile(t, data)
	if err := os.WriteFile(path, gz[:len(gz)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	s := mustNew(t, Config{Path: path})
	var rec recorder
	err = s.Run(context.Background(), &rec)
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "gzip") {
		t.Fatalf("err = %v", err)
	}
	st := s.Stats()
	var decoded uint64
	for _, k := range event.Kinds() {
		decoded += st.EventsOf(k)
	}
	if len(rec.events) < 1000 || uint64(len(rec.events)) != decoded {
		t.Errorf("delivered %d, stats say %d decoded", len(rec.events), decoded)
	}
	if st.Malformed > 1 {
		t.Errorf("malformed %d: %v", st.Malformed, st.MalformedSamples)
	}
	// every delivered event is exactly the one the plain file gives at that position
	s2 := mustNew(t, Config{Path: gpuOnly})
	var full recorder
	if err := s2.Run(context.Background(), &full); err != nil {
		t.Fatal(err)
	}
	for i, e := range rec.events {
		if e != full.events[i] {
			t.Fatalf("event %d differs:\n%+v\n%+v", i, e, full.events[i])
		}
	}
}

func TestReplayLongLines(t *testing.T) {
	good := "  x-1 [000] 1.000001: dma_fence_signaled: driver=a timeline=b context=1 seqno=2\n"
	var b bytes.Buffer
	b.WriteString(good)
	b.WriteString(strings.Repeat("m", MaxLineLen) + "\n") // read, then malformed (decoder limit)
	b.WriteString(good)
	b.WriteString(strings.Repeat("g", 3*MaxLineLen) + "\n") // skipped by the reader
	b.WriteString(good)
	b.WriteString(strings.TrimSuffix(good, "\n")) // no final newline
	path := filepath.Join(t.TempDir(), "long.txt")
	os.WriteFile(path, b.Bytes(), 0o644)
	s := mustNew(t, Config{Path: path})
	var rec recorder
	if err := s.Run(context.Background(), &rec); err != nil {
		t.Fatal(err)
	}
	st := s.Stats()
	if len(rec.events) != 3 || st.Malformed != 2 || st.Truncated != 1 {
		t.Errorf("%d events, %d malformed, %d truncated %v", len(rec.events), st.Malformed, st.Truncated, st.MalformedSamples)
	}
	if len(st.MalformedSamples) == 2 && !strings.HasPrefix(st.MalformedSamples[1], "line 4: line of 3145729 bytes") {
		t.Errorf("sample %q", st.MalformedSamples[1])
	}
}

// A capture cut inside its last line: the line is counted as truncated, never decoded
// (its "seqno=38" is the first two digits of 3832), in plain text, gzip and a pipe.
func TestReplayCutInsideLastLine(t *testing.T) {
	data, err := os.ReadFile(gpuOnly)
	if err != nil {
		t.Fatal(err)
	}
	const whole = "context=4929 seqno=3832\n"
	if !bytes.HasSuffix(data, []byte(whole)) {
		t.Fatalf("the capture no longer ends with %q", whole)
	}
	cut := data[:len(data)-3] // "... context=4929 seqno=38"
	check := func(t *testing.T, path string) {
		s := mustNew(t, Config{Path: path})
		var rec recorder
		if err := s.Run(context.Background(), &rec); err != nil {
			t.Fatal(err)
		}
		st := s.Stats()
		if len(rec.events) != gpuOnlyEvents-1 || st.Truncated != 1 || st.Malformed != 0 {
			t.Errorf("%d events (want %d), truncated %d, malformed %d", len(rec.events), gpuOnlyEvents-1, st.Truncated, st.Malformed)
		}
		for _, e := range rec.events {
			if e.Fence.Context == 4929 && e.Fence.Seqno == 38 {
				t.Fatalf("the cut line was decoded: %+v", e)
			}
		}
		if len(st.MalformedSamples) == 0 || !strings.Contains(st.MalformedSamples[len(st.MalformedSamples)-1], "line 9703: the input ends inside it") {
			t.Errorf("samples %q", st.MalformedSamples)
		}
	}
	t.Run("plain", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "cut.txt")
		if err := os.WriteFile(path, cut, 0o644); err != nil {
			t.Fatal(err)
		}
		check(t, path)
	})
	t.Run("gzip", func(t *testing.T) {
		path, _ := gzipFile(t, cut)
		check(t, path)
	})
	t.Run("pipe", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "fifo")
		if err := mkfifo(path); err != nil {
			testreq.Skip(t, testreq.FIFO, "no FIFO here: "+err.Error())
		}
		go func() {
			w, err := os.OpenFile(path, os.O_WRONLY, 0)
			if err != nil {
				return
			}
			// written in two parts, the second the line's end without a newline: a
			// reader waits for the rest of a line until the writer closes
			w.Write(cut[:len(cut)-40])
			time.Sleep(20 * time.Millisecond)
			w.Write(cut[len(cut)-40:])
			w.Close()
		}()
		check(t, path)
	})
}

// syntheticCapture writes n fence events spaced step apart, in tracefs layout.
func syntheticCapture(t *testing.T, n int, step time.Duration) string {
	var out strings.Builder
	for i := 0; i < n; i++ {
		ts := 100*time.Second + time.Duration(i)*step
		fmt.Fprintf(&out, "  x-1 [000] %d.%09d: dma_fence_signaled: driver=a timeline=b context=1 seqno=%d\n",
			ts/time.Second, ts%time.Second, i)
	}
	path := filepath.Join(t.TempDir(), "synthetic.txt")
	if err := os.WriteFile(path, []byte(out.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestReplaySpeed(t *testing.T) {
	path := syntheticCapture(t, 21, 10*time.Millisecond) // 200 ms of capture
	for _, tt := range []struct {
		speed    float64
		min, max time.Duration
	}{
		{0, 0, 150 * time.Millisecond},
		{1, 190 * time.Millisecond, 2 * time.Second},
		{4, 45 * time.Millisecond, time.Second},
	} {
		s := mustNew(t, Config{Path: path, Speed: tt.speed})
		var rec recorder
		begin := time.Now()
		if err := s.Run(context.Background(), &rec); err != nil {
			t.Fatal(err)
		}
		took := time.Since(begin)
		if len(rec.events) != 21 || took < tt.min || took > tt.max {
			t.Errorf("speed %v: %d events in %v, want within [%v, %v]", tt.speed, len(rec.events), took, tt.min, tt.max)
		}
		if tt.speed == 1 && len(rec.batches) < 10 {
			t.Errorf("speed 1 delivered in %d batches: not paced", len(rec.batches))
		}
	}
}

func TestReplayCancelDuringSleep(t *testing.T) {
	path := syntheticCapture(t, 3, time.Hour)
	s := mustNew(t, Config{Path: path, Speed: 1})
	ctx, cancel := context.WithCancel(context.Background())
	var rec recorder
	rec.onConsume = func() { go func() { time.Sleep(20 * time.Millisecond); cancel() }() }
	begin := time.Now()
	err := s.Run(ctx, &rec)
	if !errors.Is(err, context.Canceled) || time.Since(begin) > 2*time.Second || len(rec.events) != 1 {
		t.Errorf("err %v after %v with %d events", err, time.Since(begin), len(rec.events))
	}
}

func TestReplayCancelledBeforeStart(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s := mustNew(t, Config{Path: gpuOnly})
	var rec recorder
	if err := s.Run(ctx, &rec); !errors.Is(err, context.Canceled) || len(rec.events) > DefaultBatchSize {
		t.Errorf("err %v, %d events", err, len(rec.events))
	}
}

// Stats may be read while Run runs (go test -race checks the locking).
func TestStatsDuringRun(t *testing.T) {
	s := mustNew(t, Config{Path: gpuOnly, BatchSize: 16})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 2000; i++ {
			_ = s.Stats()
		}
	}()
	var rec recorder
	if err := s.Run(context.Background(), &rec); err != nil {
		t.Fatal(err)
	}
	<-done
	if st := s.Stats(); st.EventsOf(event.Marker) != 6027 {
		t.Errorf("markers %d", st.EventsOf(event.Marker))
	}
}

func TestNewValidates(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"no path", Config{}, "no capture path"},
		{"missing", Config{Path: filepath.Join(dir, "nope.txt")}, "no such file"},
		{"directory", Config{Path: dir}, "is a directory"},
		{"negative speed", Config{Path: gpuOnly, Speed: -1}, "speed"},
		{"NaN speed", Config{Path: gpuOnly, Speed: nan()}, "speed"},
		{"negative batch", Config{Path: gpuOnly, BatchSize: -5}, "batch size"},
	} {
		_, err := New(tt.cfg)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err %v, want %q", tt.name, err, tt.want)
		}
	}
	if _, err := New(Config{Path: gpuOnly, Speed: 2}); err != nil {
		t.Error(err)
	}
}

func nan() float64 { return math.NaN() }

func TestParseEpoch(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"1700000000000000000", 1700000000000000000, true},
		{" 0 ", 0, true},
		{"-5", -5, true},
		{"2023-11-14T22:13:20Z", 1700000000000000000, true},
		{"2023-11-14T22:13:20.123456789Z", 1700000000123456789, true},
		{"2023-11-14T23:13:20.5+01:00", 1700000000500000000, true},
		{"99999999999999999999", 0, false},
		{"2300-01-01T00:00:00Z", 0, false},
		{"2023-11-14", 0, false},
		{"", 0, false},
		{"yesterday", 0, false},
	} {
		got, err := ParseEpoch(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParseEpoch(%q) = %d, %v; want %d, ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

// A FIFO (what trace_pipe behaves like): events arrive while the writer is still
// writing, and cancelling unblocks a Run that waits for input.
func TestReplayPipe(t *testing.T) {
	path := filepath.Join(t.TempDir(), "trace_pipe")
	if err := mkfifo(path); err != nil {
		testreq.Skip(t, testreq.FIFO, "no FIFO: "+err.Error())
	}
	s := mustNew(t, Config{Path: path})
	got := make(chan int, 16)
	rec := &recorder{}
	rec.onConsume = func() { got <- len(rec.events) }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx, rec) }()
	w, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	fmt.Fprintf(w, "  x-1 [000] 1.000001: dma_fence_signaled: driver=a timeline=b context=1 seqno=1\n")
	fmt.Fprintf(w, "  x-1 [000] 1.000002: dma_fence_signaled: driver=a timeline=b context=1 seqno=2\n")
	select {
	case n := <-got:
		if n < 1 {
			t.Errorf("%d events", n)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("events written to the pipe were not delivered while it stayed open")
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Run returned %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after cancel while blocked on the pipe")
	}
}
