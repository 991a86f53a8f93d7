// Bounded memory under a flood of jobs that never complete: the pending table holds
// max_pending_jobs, the rest are evicted, output and counted; the heap stays flat and
// within what the configured caps allow, and so does resident memory.
package pipeline

import (
	"bytes"
	"context"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/ghostdriver/ghostdriver/internal/assemble"
)

func TestFloodOfUnfinishedJobsStaysBounded(t *testing.T) {
	const N = 5000
	var b bytes.Buffer
	for i := 0; i < 20*N; i++ {
		// queued, never run, never done; 2 µs apart: all within job_timeout
		b.WriteString(queueLine(base+int64(i)*2, "flood", 1000+i%64, 4, uint64(i+1)).text)
		b.WriteByte('\n')
	}

	heapAt := map[int]uint64{}
	rssAt := map[int]uint64{}
	out := 0
	var exported int
	cfg := Config{
		Assemble:        assemble.Config{MaxPendingJobs: N},
		MaxBufferedJobs: 1024,
	}
	outputs := Outputs{
		Job: func(j *assemble.Job) {
			out++
			if out%N == 0 { // every N jobs output (evicted), from 1N to 19N
				runtime.GC()
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				heapAt[out/N] = ms.HeapAlloc
				rssAt[out/N] = residentBytes(t)
			}
		},
		Traces: func(_ context.Context, td ptrace.Traces) error { exported += jobSpans(td); return nil },
	}
	runtime.GC()
	var ms0 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	rss0 := residentBytes(t)
	o := runCaptureWith(t, b.Bytes(), cfg, outputs)
	a := o.stats.Assembler
	if a.EvictedCap != 19*N || a.Incomplete != N || a.EvictedTimeout != 0 || a.Completed != 0 {
		t.Fatalf("evicted %d (want %d), incomplete %d (want %d): %s", a.EvictedCap, 19*N, a.Incomplete, N, o)
	}
	if a.Pending != 0 || out != 20*N {
		t.Fatalf("pending %d after the end, %d jobs output", a.Pending, out)
	}
	// Every job is either exported as a span or counted as dropped by the span buffer.
	if uint64(exported)+o.stats.DroppedJobs != 20*N {
		t.Errorf("spans: %d exported + %d dropped != %d", exported, o.stats.DroppedJobs, 20*N)
	}
	// The heap once the table is full (after 2N outputs) against every later sample: a
	// leak of evicted jobs would grow it by ≈ 1 KiB per job, tens of MiB here.
	ref := heapAt[2]
	var peak uint64
	for k := 2; k <= 19; k++ {
		if h, ok := heapAt[k]; !ok {
			t.Fatalf("no heap sample after %d×N jobs", k)
		} else if h > peak {
			peak = h
		}
	}
	t.Logf("heap after 2N: %.1f MiB, peak to 19N: %.1f MiB", float64(ref)/(1<<20), float64(peak)/(1<<20))
	if peak > ref+4<<20 {
		t.Errorf("heap grew from %.1f MiB to %.1f MiB while the pending table was full", float64(ref)/(1<<20), float64(peak)/(1<<20))
	}
	// Against the configured caps: N pending jobs at ≤ 1 KiB each (BENCHMARKS.md), a span
	// buffer of MaxBufferedJobs jobs at ≤ 8 KiB each, plus 8 MiB for the indexes, the
	// decoder and the runtime.
	limit := uint64(N)<<10 + uint64(cfg.MaxBufferedJobs)<<13 + 8<<20
	if peak > ms0.HeapAlloc+limit {
		t.Errorf("heap peak %.1f MiB is %.1f MiB above the start: over the %.1f MiB the caps allow",
			float64(peak)/(1<<20), float64(peak-ms0.HeapAlloc)/(1<<20), float64(limit)/(1<<20))
	}
	// Resident memory: within the same allowance (twice: the GC's headroom) of the start,
	// and flat while the table was full.
	var rssPeak uint64
	for k := 2; k <= 19; k++ {
		rssPeak = max(rssPeak, rssAt[k])
	}
	t.Logf("resident: %.1f MiB before, %.1f MiB after 2N, peak %.1f MiB", float64(rss0)/(1<<20), float64(rssAt[2])/(1<<20), float64(rssPeak)/(1<<20))
	if rssPeak > rss0+2*limit {
		t.Errorf("resident peak %.1f MiB is over %.1f MiB + twice the caps' %.1f MiB", float64(rssPeak)/(1<<20), float64(rss0)/(1<<20), float64(limit)/(1<<20))
	}
	if rssPeak > rssAt[2]+8<<20 {
		t.Errorf("resident memory grew from %.1f MiB to %.1f MiB while the pending table was full", float64(rssAt[2])/(1<<20), float64(rssPeak)/(1<<20))
	}
}

// residentBytes is this process's VmRSS.
func residentBytes(t *testing.T) uint64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatalf("reading VmRSS: %v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				t.Fatalf("VmRSS %q: %v", rest, err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmRSS in /proc/self/status")
	return 0
}

// jobSpans counts the gpu.job spans (one per job; stages are their children).
func jobSpans(td ptrace.Traces) int {
	n := 0
	for i := 0; i < td.ResourceSpans().Len(); i++ {
		ss := td.ResourceSpans().At(i).ScopeSpans()
		for j := 0; j < ss.Len(); j++ {
			spans := ss.At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				if spans.At(k).Name() == "gpu.job" {
					n++
				}
			}
		}
	}
	return n
}
