// Command userbench measures two user-space properties that need a process of their own
// (BENCHMARKS.md, step 4):
//
//	userbench pending -jobs N -style 6.17   heap and RSS per pending job: N jobs queued and
//	                                        never finished, decoded from generated text and
//	                                        held by the assembler (one TSV row)
//	userbench delay -seconds S -rate R      end-to-end delay from a job's completion to the
//	                                        export of its span, through the real pipeline fed
//	                                        by the replay source paced in real time (TSV)
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/ghostdriver/ghostdriver/internal/assemble"
	"github.com/ghostdriver/ghostdriver/internal/event"
	"github.com/ghostdriver/ghostdriver/internal/ftrace"
	"github.com/ghostdriver/ghostdriver/internal/metadata"
	"github.com/ghostdriver/ghostdriver/internal/pipeline"
	"github.com/ghostdriver/ghostdriver/internal/replay"
	"github.com/ghostdriver/ghostdriver/internal/testcapture"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: userbench pending|delay [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "pending":
		err = cmdPending(os.Args[2:])
	case "delay":
		err = cmdDelay(os.Args[2:])
	default:
		err = fmt.Errorf("unknown mode %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "userbench:", err)
		os.Exit(1)
	}
}

// ---- pending ---------------------------------------------------------------------

func cmdPending(args []string) error {
	fs := flag.NewFlagSet("pending", flag.ExitOnError)
	jobs := fs.Int("jobs", 100_000, "pending jobs")
	style := fs.String("style", "6.17", "capture style")
	header := fs.Bool("header", false, "print the TSV header")
	fs.Parse(args)
	if *header {
		fmt.Println("pending_jobs\tstyle\theap_bytes_per_job\trss_bytes_per_job\theap_inuse_mb\trss_mb\tpending_reported")
	}

	// Generate in a goroutine into a pipe, so the text is never held whole.
	pr, pw := io.Pipe()
	go func() {
		pw.CloseWithError(testcapture.Write(pw, testcapture.Options{Style: *style, Jobs: *jobs, Rings: 4, Procs: 8, Pending: true}))
	}()
	heap0, rss0 := memNow()

	cfg := assemble.DefaultConfig()
	cfg.MaxPendingJobs = *jobs * 2
	cfg.JobTimeout = 1000 * time.Hour
	a := assemble.New(cfg, func(*assemble.Job) {})
	dec := ftrace.NewDecoder()
	sc := bufio.NewScanner(pr)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	batch := make([]event.Event, 0, 256)
	var ev event.Event
	var last int64
	flush := func() {
		a.Consume(batch)
		a.Watermark(last)
		clear(batch)
		batch = batch[:0]
	}
	for n := 1; sc.Scan(); n++ {
		if !dec.Decode(sc.Bytes(), n, &ev) {
			continue
		}
		last = max(last, ev.Time)
		batch = append(batch, ev)
		if len(batch) == cap(batch) {
			flush()
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	flush()
	heap1, rss1 := memNow()
	st := a.Stats()
	runtime.KeepAlive(a)
	runtime.KeepAlive(dec)
	n := float64(*jobs)
	fmt.Printf("%d\t%s\t%.0f\t%.0f\t%.1f\t%.1f\t%d\n", *jobs, *style, float64(heap1-heap0)/n, float64(rss1-rss0)/n,
		float64(heap1)/(1<<20), float64(rss1)/(1<<20), st.Pending)
	return nil
}

// memNow returns the live heap after a full collection and the resident set.
func memNow() (heap, rss uint64) {
	runtime.GC()
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b, _ := os.ReadFile("/proc/self/status")
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmRSS:") {
			f := strings.Fields(l)
			kb, _ := strconv.ParseUint(f[1], 10, 64)
			rss = kb << 10
		}
	}
	return ms.HeapAlloc, rss
}

// ---- delay -----------------------------------------------------------------------

func cmdDelay(args []string) error {
	fs := flag.NewFlagSet("delay", flag.ExitOnError)
	seconds := fs.Float64("seconds", 10, "capture length (replayed in real time)")
	rate := fs.Float64("rate", 2000, "jobs per second")
	style := fs.String("style", "6.17", "capture style")
	flushEvery := fs.Duration("flush-interval", 200*time.Millisecond, "pipeline flush interval (the receiver's default)")
	fs.Parse(args)

	dir, err := os.MkdirTemp("", "userbench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "paced.txt")
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	jobs := int(*rate * *seconds)
	if err := testcapture.Write(f, testcapture.Options{Style: *style, Jobs: jobs, Rings: 4, Procs: 8, Rate: *rate}); err != nil {
		return err
	}
	f.Close()

	src, err := replay.New(replay.Config{Path: path, Speed: 1})
	if err != nil {
		return err
	}
	var delays []time.Duration
	p := pipeline.New(pipeline.Config{
		Assemble:      assemble.DefaultConfig(),
		Metrics:       metadata.DefaultMetricsConfig(),
		FlushInterval: *flushEvery,
	}, src, pipeline.Outputs{Traces: func(_ context.Context, td ptrace.Traces) error {
		now := time.Now().UnixNano()
		rss := td.ResourceSpans()
		for i := 0; i < rss.Len(); i++ {
			sss := rss.At(i).ScopeSpans()
			for j := 0; j < sss.Len(); j++ {
				ss := sss.At(j).Spans()
				for k := 0; k < ss.Len(); k++ {
					s := ss.At(k)
					if !s.ParentSpanID().IsEmpty() {
						continue // stage children end with their job or before
					}
					delays = append(delays, time.Duration(now-int64(s.EndTimestamp())))
				}
			}
		}
		return nil
	}}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(*seconds*float64(time.Second))+10*time.Second)
	defer cancel()
	if err := p.Run(ctx); err != nil {
		return err
	}
	// The final flush at end of input exports what is left at once: only jobs exported
	// while the source was still running count (the last reorder window is cut short).
	slices.Sort(delays)
	if len(delays) == 0 {
		return fmt.Errorf("no job spans exported")
	}
	q := func(p float64) time.Duration { return delays[min(len(delays)-1, int(p*float64(len(delays))))] }
	fmt.Println("style\tjobs_per_s\tflush_interval_ms\treorder_window_ms\tspans\tp50_ms\tp90_ms\tp99_ms\tmax_ms")
	ms := func(d time.Duration) string { return fmt.Sprintf("%.1f", float64(d.Microseconds())/1000) }
	fmt.Printf("%s\t%.0f\t%d\t%d\t%d\t%s\t%s\t%s\t%s\n", *style, *rate, flushEvery.Milliseconds(),
		assemble.DefaultConfig().ReorderWindow.Milliseconds(), len(delays), ms(q(.5)), ms(q(.9)), ms(q(.99)), ms(delays[len(delays)-1]))
	return nil
}
