// The GPU timeline end to end on the stubs: the stub driver loads the injection library
// at cuInit (CUDA_INJECTION64_PATH), the library loads the stub libcupti, the graph's
// timeline source finds its channel and turns it on, and the submissions come out with
// their kernels. Ground truth is the stubs' own: every stub kernel lasts STUB_KERNEL_NS
// (the stub driver's definition) and ends before the sync that waited for it returns
// (the stub driver's syncs wait for it), every launch makes one kernel.
package graph

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ghostdriver/ghostdriver/internal/cuda"
	"github.com/ghostdriver/ghostdriver/internal/cuda/cudatest"
	"github.com/ghostdriver/ghostdriver/internal/cupti"
	"github.com/ghostdriver/ghostdriver/internal/metadata"
	"github.com/ghostdriver/ghostdriver/internal/pipeline"
)

const stubKernelNs = 50_000

type timelineRun struct {
	subs  []*cuda.Submission
	stats pipeline.Stats
	tl    cupti.PollerStats
	pid   uint32
}

// runTimeline runs the stub workload for iters iterations under a graph whose timeline
// is on, with env added to the workload's; afterOn runs once the library said it is on.
func runTimeline(t *testing.T, iters int, env []string, preload func(cudatest.Stubs) string) timelineRun {
	t.Helper()
	cudatest.Need(t)
	if os.Getenv(cudatest.PrebuiltEnv) != "" {
		t.Skip("the run gave prebuilt (cross-built) stubs (" + cudatest.PrebuiltEnv + "), which come without the injection library: it is built here with gcc")
	}
	stubs := cudatest.Build(t)
	lib := cudatest.BuildInjection(t, t.TempDir())
	g, err := Open(Spec{
		CUDA: &CUDASpec{Libraries: stubs.Libraries(), Timeline: cupti.Policy{Mode: cupti.ModeOn}},
		Pipeline: pipeline.Config{
			Metrics:       metadata.DefaultMetricsConfig(),
			FlushInterval: 10 * time.Millisecond,
		},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	var mu sync.Mutex
	var run timelineRun
	g.OnSubmission(func(s *cuda.Submission) { mu.Lock(); run.subs = append(run.subs, s); mu.Unlock() })
	rec := &recorder{}
	p := g.Pipeline(rec.outputs(), nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()

	wenv := append(os.Environ(), "CUDA_INJECTION64_PATH="+lib,
		"GHOSTDRIVER_CUPTI_LIBRARY="+filepath.Join(stubs.Dir, "libcupti.so.13"),
		"GHOSTDRIVER_CUPTI_POLL_MS=5", "GHOSTDRIVER_CUPTI_FLUSH_MS=20", "GHOSTDRIVER_CUPTI_RETRY_MS=100",
		"STUB_KERNEL_NS=50000")
	wenv = append(wenv, env...)
	if preload != nil {
		wenv = append(wenv, "LD_PRELOAD="+preload(stubs))
	}
	w := cudatest.Start(t, stubs.App, iters, wenv)
	run.pid = w.PID
	w.Init(t) // cuInit: the injection library makes its channel
	cudatest.WaitFor(t, "the workload's timeline on", func() bool {
		for _, c := range g.Timeline().Stats().Channels {
			if c.PID == w.PID && c.State == cupti.StateOn {
				return true
			}
		}
		return false
	})
	w.Work(t)
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	run.stats = p.Stats()
	run.tl = g.Timeline().Stats()
	return run
}

func TestTimelineJoinsStubKernelsToSubmissions(t *testing.T) {
	run := runTimeline(t, 40, nil, nil)
	fused, kernels, launches, unmatched, overlapping := 0, 0, 0, 0, 0
	for _, s := range run.subs {
		if s.PID != run.pid || s.GPU == nil {
			continue
		}
		fused++
		w := s.GPU
		kernels += w.KernelCount
		launches += s.Launches
		unmatched += w.Unmatched
		if w.Matched+w.Unmatched != s.Launches || w.KernelCount != w.Matched {
			t.Errorf("submission at %d: %d launches, %d matched, %d unmatched, %d kernels; want every matched launch with its one kernel",
				s.Start, s.Launches, w.Matched, w.Unmatched, w.KernelCount)
		}
		if !w.Complete || w.ClockRuleViolations != 0 {
			t.Errorf("submission at %d: complete %v, clock rule violations %d", s.Start, w.Complete, w.ClockRuleViolations)
		}
		// SM weights from app.c's launch shapes (the runtime's launches 4 blocks, the
		// driver's 1) and the stub driver's 132 SMs, each kernel running alone on its stream.
		// Where a submission's kernels overlap (a kernel of the other thread's stream swapped
		// in before the fuser learnt the threads, see below) the weighted time is not a sum:
		// such a submission is left out of this check, counted.
		var wantSM float64
		overlap := false
		for i := 1; i < len(w.Kernels); i++ {
			if w.Kernels[i].Start < w.Kernels[i-1].End {
				overlap = true
			}
		}
		if overlap {
			overlapping++
		}
		for _, k := range w.Kernels {
			blocks := 4.0
			if k.Name == "stub_kernel_exported" {
				blocks = 1
			}
			wantSM += float64(k.End-k.Start) * blocks / 132
			if k.SMs != 132 {
				t.Errorf("kernel %s: SMs %d, the stub driver reports 132", k.Name, k.SMs)
			}
		}
		if !w.SMKnown || (!overlap && math.Abs(float64(w.SMWeightedBusy)-wantSM) > 1) {
			t.Errorf("submission at %d: SM-weighted busy %d ns (known %v), want %.0f", s.Start, w.SMWeightedBusy, w.SMKnown, wantSM)
		}
		for _, k := range w.Kernels {
			// The stub's kernel length, through CUPTI's clock and the batch conversion.
			if k.End-k.Start != stubKernelNs {
				t.Errorf("kernel %s: %d ns, the stub driver runs it %d", k.Name, k.End-k.Start, stubKernelNs)
			}
			// A second reading of the clock rule: inside the submission, before the sync returned.
			if k.Start < s.Start || (s.Sync != nil && k.End > s.Sync.End) {
				t.Errorf("kernel %s [%d, %d] outside its submission [%d, sync return %d]", k.Name, k.Start, k.End, s.Start, s.Sync.End)
			}
		}
	}
	// app.c: per thread, iters × (3 runtime + 1 driver launch) once running.
	if fused == 0 || launches < 2*40*4 {
		t.Fatalf("%d submissions with GPU work holding %d launches; want the workload's %d launches", fused, launches, 2*40*4)
	}
	if overlapping > 2 {
		t.Errorf("%d submissions hold overlapping kernels; a swap happens at most once a thread", overlapping)
	}
	// The two threads launch at the same instants; until the fuser has learnt which CUPTI
	// thread id is which thread (gpu.go), the first overlapping launch of a thread may
	// find its record taken by the other's: at most one a thread, and counted.
	if kernels+unmatched != launches || unmatched > 2 {
		t.Errorf("kernels joined %d, unmatched launches %d, launches %d; want all but at most one a thread joined", kernels, unmatched, launches)
	}
	f := run.stats.CUDA.GPU
	if f == nil || f.ClockRuleViolations != 0 || f.KernelsAttributed < uint64(kernels) || f.LaunchesUnmatched < uint64(unmatched) {
		t.Errorf("fuser stats %+v (unmatched launches here %d)", f, unmatched)
	}
	c := run.tl.Total.Counters
	// The stub makes one API record of a call that launches nothing before every launch's
	// (as a real runtime makes many): the library leaves each out of the ring, counted.
	if c.APIFiltered == 0 || c.APIFiltered != run.tl.Total.Decoder.APIs {
		t.Errorf("API records left out %d, API records decoded %d: want one left out per launch record", c.APIFiltered, run.tl.Total.Decoder.APIs)
	}
	if c.Enables != 1 || c.DroppedRingFull != 0 || c.RefusedLayout != 0 || run.tl.Total.Decoder.Corrupt != 0 {
		t.Errorf("library counters %+v, decoder %+v", c, run.tl.Total.Decoder)
	}
}

// The real driver's cuInit takes hundreds of milliseconds (an H100's), and the library's
// control thread starts inside it (InitializeInjection): a collector that finds the channel
// at once turns the timeline on while the driver still refuses device queries
// (CUDA_ERROR_NOT_INITIALIZED, as the stub driver does until its cuInit returns). The SM
// counts must still reach the collector, and every kernel be weighted by its device's
// 132 SMs. (The launch-bound loop on the device had no SM-weighted coverage this way.)
func TestTimelineWeighsKernelsWhenItCameOnInsideCuInit(t *testing.T) {
	// 2.5 s: longer than the poller's 1 s channel rescan and its visit.
	run := runTimeline(t, 10, []string{"STUB_CUINIT_HOLD_MS=2500"}, nil)
	fused := 0
	for _, s := range run.subs {
		if s.PID != run.pid || s.GPU == nil || s.GPU.KernelCount == 0 {
			continue
		}
		fused++
		if !s.GPU.SMKnown {
			t.Errorf("submission at %d: %d kernels, SM-weighted time unknown", s.Start, s.GPU.KernelCount)
		}
		for _, k := range s.GPU.Kernels {
			if k.SMs != 132 {
				t.Errorf("kernel %s: SMs %d, the stub driver reports 132", k.Name, k.SMs)
				break
			}
		}
	}
	if fused == 0 {
		t.Fatal("no submission with kernels")
	}
}

func TestTimelineRefusesUnknownCUPTIVersion(t *testing.T) {
	cudatest.Need(t)
	if os.Getenv(cudatest.PrebuiltEnv) != "" {
		t.Skip("the run gave prebuilt (cross-built) stubs (" + cudatest.PrebuiltEnv + "), which come without the injection library: it is built here with gcc")
	}
	stubs := cudatest.Build(t)
	lib := cudatest.BuildInjection(t, t.TempDir())
	g, err := Open(Spec{CUDA: &CUDASpec{Libraries: stubs.Libraries(), Timeline: cupti.Policy{Mode: cupti.ModeOn}},
		Pipeline: pipeline.Config{Metrics: metadata.DefaultMetricsConfig(), FlushInterval: 10 * time.Millisecond}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	p := g.Pipeline((&recorder{}).outputs(), nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = p.Run(ctx) }()
	w := cudatest.Start(t, stubs.App, 5, append(os.Environ(), "CUDA_INJECTION64_PATH="+lib,
		"GHOSTDRIVER_CUPTI_LIBRARY="+filepath.Join(stubs.Dir, "libcupti.so.13"), "GHOSTDRIVER_CUPTI_POLL_MS=5",
		"STUB_CUPTI_VERSION=120900"))
	w.Init(t)
	var msg string
	cudatest.WaitFor(t, "the library's refusal", func() bool {
		for _, c := range g.Timeline().Stats().Channels {
			if c.PID == w.PID && c.State == cupti.StateUnsupported {
				msg = c.StateMsg
				return true
			}
		}
		return false
	})
	if !strings.Contains(msg, "120900") {
		t.Errorf("state message %q does not name the version it refused", msg)
	}
	w.Work(t) // the application runs on without a timeline
}

func TestTimelineStepsAsideForTheUsersProfiler(t *testing.T) {
	out := filepath.Join(t.TempDir(), "peer.txt")
	run := runTimeline(t, 1000, []string{"PEER_OUT=" + out, "PEER_HOLD_MS=200"}, func(s cudatest.Stubs) string { return cudatest.BuildPeer(t, s) })
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("the peer profiler wrote nothing: %v", err)
	}
	peer := strings.TrimSpace(string(b))
	t.Logf("peer: %s", peer)
	if !strings.Contains(peer, "timeline_was_on=1 register=0 enable=0") || strings.Contains(peer, "kernels=0 ") {
		t.Errorf("the user's profiler did not get its session with kernels: %s", peer)
	}
	c := run.tl.Total.Counters
	if c.Backoffs < 1 || c.Enables < 2 {
		t.Errorf("library: %d back-offs, %d enables; want it to step aside once and come back after the peer ended", c.Backoffs, c.Enables)
	}
	// Nothing seen twice: the peer's kernels and the timeline's together are at most the
	// workload's launches (app.c: 2 threads × (iters × 4 + 1)), and the timeline has some
	// from after it came back.
	var peerKernels uint64
	for _, f := range strings.Fields(peer) {
		if v, ok := strings.CutPrefix(f, "kernels="); ok {
			peerKernels, _ = strconv.ParseUint(v, 10, 64)
		}
	}
	ours := run.tl.Total.Decoder.Kernels
	if total := uint64(2 * (1000*4 + 1)); ours == 0 || peerKernels+ours > total {
		t.Errorf("kernels: the peer's %d + the timeline's %d, of the workload's %d launches", peerKernels, ours, total)
	}
}
