// live.cuda on a host without NVIDIA hardware (the CI host): the receiver comes up with
// whatever can attach and says, in one log line each, what could not and why.
package ghostdriverreceiver

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/ghostdriver/ghostdriver/internal/cuda/cudatest"
	"github.com/ghostdriver/ghostdriver/internal/metadata"
	"github.com/ghostdriver/ghostdriver/internal/testreq"
)

func TestLiveCUDADegradesWithoutNvidia(t *testing.T) {
	if _, err := os.Stat("/proc/driver/nvidia"); err == nil {
		testreq.Skip(t, testreq.NoNVIDIA, "this host has the NVIDIA driver: the test is about degrading without it")
	}
	core, logs := observer.New(zapcore.InfoLevel)
	set := receivertest.NewNopSettings(metadata.Type)
	set.Logger = zap.New(core)
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	cfg.Live.CUDA.Enabled = true
	cfg.Live.CUDA.Libraries = []string{"/usr/local/nvidia/lib64/libcuda.so.1"}
	cfg.Live.CUDA.RescanInterval = 100 * time.Millisecond
	cfg.FlushInterval = 10 * time.Millisecond

	f := NewFactory()
	r, err := f.CreateTraces(context.Background(), set, cfg, new(consumertest.TracesSink))
	if err != nil {
		t.Fatal(err)
	}
	err = r.Start(context.Background(), componenttest.NewNopHost())
	defer func() {
		if err := r.Shutdown(context.Background()); err != nil {
			t.Error(err)
		}
	}()
	for _, e := range logs.All() {
		if e.Level >= zapcore.WarnLevel || strings.Contains(e.Message, "CUDA capability") {
			t.Logf("%s %s %v", e.Level, e.Message, e.ContextMap())
		}
	}

	if os.Geteuid() != 0 {
		// Neither source can load: Start fails (error_mode propagate) naming both.
		if err == nil || !strings.Contains(err.Error(), "CUDA source") || !strings.Contains(err.Error(), "privileged") {
			t.Fatalf("Start without privileges: %v, want an error naming the CUDA source and privileges", err)
		}
		return
	}
	if err != nil {
		t.Fatalf("Start with live.cuda on a host without NVIDIA: %v (want the receiver up, degraded)", err)
	}
	// The configured driver library is missing: one capability line says so.
	if n := logs.FilterMessage("ghostdriver CUDA capability").FilterField(zap.String("hook", "/usr/local/nvidia/lib64/libcuda.so.1")).Len(); n != 1 {
		t.Errorf("%d capability lines for the missing libcuda.so.1, want 1", n)
	}
	// No DRM GPU on this host either: the CUDA source runs alone, and a warning says why.
	if drm := logs.FilterMessage("ghostdriver DRM source unavailable; running the CUDA source alone"); drm.Len() != 1 {
		t.Logf("DRM source attached on this host; no degradation message expected for it")
	} else if e := drm.All()[0]; !strings.Contains(e.ContextMap()["error"].(string), "hook") {
		t.Errorf("DRM degradation without a reason: %v", e.ContextMap())
	}
	if logs.FilterMessage("ghostdriver CUDA source unavailable; running the DRM source alone").Len() != 0 {
		t.Error("the CUDA source should have attached (it needs no NVIDIA hardware, only uprobes)")
	}
}

// The receiver end to end on the stub CUDA libraries (internal/cuda/testdata/stub): a
// workload whose threads publish OTEP 4947 thread context gets cuda.submission spans
// parented to the span each thread had when it enqueued the work; the same workload
// without thread context falls back to its TRACEPARENT; the resource is the process's own
// (OTEL_SERVICE_NAME).
func TestLiveCUDASpansJoinApplicationTraces(t *testing.T) {
	cudatest.Need(t)
	stubs := cudatest.Build(t)
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	cfg.Live.CUDA.Enabled = true
	cfg.Live.CUDA.Libraries = stubs.Libraries()
	cfg.Live.CUDA.RescanInterval = 0
	cfg.FlushInterval = 10 * time.Millisecond
	// Every submission's span, whatever its parent's sampled flag (half the stub's spans
	// are unsampled): this test is about the links; TestLiveCUDASamplingFollowsTheParent
	// is about the sampler.
	off := false
	cfg.Sampling.Enabled = &off
	sink := new(consumertest.TracesSink)
	r, err := NewFactory().CreateTraces(context.Background(), receivertest.NewNopSettings(metadata.Type), cfg, sink)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := r.Shutdown(context.Background()); err != nil {
			t.Error(err)
		}
	}()

	const iters = 20
	const traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	envTrace := pcommon.TraceID{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36}
	envSpan := pcommon.SpanID{0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7}
	for _, tc := range []struct {
		name      string
		threadCtx bool
		// hold keeps the workload between its initialisation and its work once the process
		// row is in: a process row slower than the assembler's flush, made on purpose.
		hold time.Duration
	}{{"otep4947", true, 0}, {"traceparent", false, 0}, {"traceparent/slow-process-row", false, assemblerFlushAfter + 1500*time.Millisecond}} {
		t.Run(tc.name, func(t *testing.T) {
			env := append(os.Environ(), "TRACEPARENT="+traceparent, "OTEL_SERVICE_NAME=stub-trainer")
			if !tc.threadCtx {
				env = append(env, "STUB_NO_THREAD_CTX=1")
			}
			// Between its CUDA initialisation and its work the workload waits until the
			// enricher has read the process and pushed its row (thread-context recipe, or
			// none) into the CUDA source's kernel table, so that the threads' calls find it.
			var workAt time.Time
			pid := cudatest.Run(t, stubs.App, iters, env, nil, func(pid uint32) {
				waitProcsRow(t, pid)
				time.Sleep(tc.hold)
				workAt = time.Now()
			})
			// The work: 2 threads × iters stream syncs + 2 event syncs + 1 device sync.
			work, early := waitSubmissions(t, sink, pid, 2*iters+3, workAt)
			checkInitFree(t, sink, pid, work, early, tc.hold > 0)
			subs := append(early, work...)
			streams := map[int64]int{}
			for _, s := range subs {
				sp, res := s.span, s.res
				if name, _ := res.Get("service.name"); name.Str() != "stub-trainer" {
					t.Errorf("service.name %q, want the process's OTEL_SERVICE_NAME", name.Str())
				}
				tier, _ := sp.Attributes().Get(metadata.AttrContextTier)
				scope, _ := sp.Attributes().Get(metadata.AttrCUDASyncScope)
				if !tc.threadCtx {
					if tier.Str() != metadata.ContextTierTraceparent || sp.TraceID() != envTrace || sp.ParentSpanID() != envSpan {
						t.Errorf("%s submission: tier %s trace %v parent %v, want TRACEPARENT's", scope.Str(), tier.Str(), sp.TraceID(), sp.ParentSpanID())
					}
					continue
				}
				if scope.Str() != metadata.CUDASyncScopeStream {
					continue
				}
				stream, _ := sp.Attributes().Get(metadata.AttrCUDAStream)
				th := byte(stream.Int()-0x5000) + 1
				streams[stream.Int()]++
				wantTrace := pcommon.TraceID{0x7e, 0x57, 15: th}
				wantParent := pcommon.SpanID{6: th, 7: byte(streams[stream.Int()])}
				if tier.Str() != metadata.ContextTierOTEP4947 || sp.TraceID() != wantTrace || sp.ParentSpanID() != wantParent {
					t.Errorf("stream %#x submission %d: tier %s trace %v parent %v, want otep4947 %v %v",
						stream.Int(), streams[stream.Int()], tier.Str(), sp.TraceID(), sp.ParentSpanID(), wantTrace, wantParent)
				}
			}
			if tc.threadCtx && (streams[0x5000] != iters || streams[0x5001] != iters) {
				t.Errorf("stream submissions %v, want %d per stream", streams, iters)
			}
		})
	}
}

// The receiver's sampler on live CUDA work, parent-based alone (no budget, no keep rule):
// the stub's threads publish OTEP 4947 spans whose W3C sampled flag is set on odd
// iterations only (testdata/stub/app.c), so exactly the stream submissions enqueued under
// an odd span are exported, in that span's trace, and the others are counted as sampled out.
func TestLiveCUDASamplingFollowsTheParent(t *testing.T) {
	cudatest.Need(t)
	stubs := cudatest.Build(t)
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	cfg.Live.CUDA.Enabled = true
	cfg.Live.CUDA.Libraries = stubs.Libraries()
	cfg.Live.CUDA.RescanInterval = 0
	cfg.FlushInterval = 10 * time.Millisecond
	cfg.Sampling.SpansPerSecond = 0
	cfg.Sampling.Keep = SamplingKeepConfig{}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	sink := new(consumertest.TracesSink)
	r, err := NewFactory().CreateTraces(context.Background(), receivertest.NewNopSettings(metadata.Type), cfg, sink)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := r.Shutdown(context.Background()); err != nil {
			t.Error(err)
		}
	}()
	const iters = 20
	var workAt time.Time
	pid := cudatest.Run(t, stubs.App, iters, append(os.Environ(), "OTEL_SERVICE_NAME=stub-trainer"), nil, func(pid uint32) {
		waitProcsRow(t, pid)
		workAt = time.Now()
	})
	streamSubs := func() (n int, bad []string) {
		for _, s := range pidSpans(sink, pid, metadata.SpanCUDASubmission) {
			if s.span.EndTimestamp().AsTime().Before(workAt) {
				continue
			}
			if scope, _ := s.span.Attributes().Get(metadata.AttrCUDASyncScope); scope.Str() != metadata.CUDASyncScopeStream {
				continue
			}
			n++
			stream, _ := s.span.Attributes().Get(metadata.AttrCUDAStream)
			th := byte(stream.Int()-0x5000) + 1
			parent := s.span.ParentSpanID()
			if s.span.TraceID() != (pcommon.TraceID{0x7e, 0x57, 15: th}) || parent[6] != th || parent[7]&1 != 1 {
				bad = append(bad, fmt.Sprintf("stream %#x: trace %v parent %v", stream.Int(), s.span.TraceID(), parent))
			}
		}
		return n, bad
	}
	// 2 threads × iters/2 sampled spans; wait for them, then a little more for any other
	deadline := time.Now().Add(15 * time.Second)
	for n, _ := streamSubs(); n < iters && time.Now().Before(deadline); n, _ = streamSubs() {
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond)
	n, bad := streamSubs()
	if n != iters || len(bad) > 0 {
		t.Fatalf("%d stream submissions exported, want %d (those under a sampled span); off their parent: %v", n, iters, bad)
	}
}

// waitProcsRow waits until a CUDA source of this process has pid in its kernel table
// procs (read from the kernel: the procs maps of the cuda_enter programs whose map this
// process holds open), i.e. cuda.Source.SetProcess has run for pid.
func waitProcsRow(t *testing.T, pid uint32) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		for _, m := range ownCUDAProcsMaps(t) {
			v, err := m.LookupBytes(pid)
			m.Close()
			if err == nil && v != nil {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("pid %d has no row in the CUDA source's procs table after 15s: the enricher did not push it", pid)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// ownCUDAProcsMaps are the maps named procs of the kernel's cuda_enter programs that
// this process has open (other test processes may run CUDA sources of their own).
func ownCUDAProcsMaps(t *testing.T) []*ebpf.Map {
	t.Helper()
	own := map[ebpf.MapID]bool{}
	fds, _ := os.ReadDir("/proc/self/fdinfo")
	for _, fd := range fds {
		b, err := os.ReadFile("/proc/self/fdinfo/" + fd.Name())
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "map_id:"); ok {
				if id, err := strconv.ParseUint(strings.TrimSpace(v), 10, 32); err == nil {
					own[ebpf.MapID(id)] = true
				}
			}
		}
	}
	var maps []*ebpf.Map
	for id := ebpf.ProgramID(0); ; {
		var err error
		if id, err = ebpf.ProgramGetNextID(id); err != nil {
			break
		}
		p, err := ebpf.NewProgramFromID(id)
		if err != nil {
			continue
		}
		info, err := p.Info()
		p.Close()
		if err != nil || info.Name != "cuda_enter" {
			continue
		}
		ids, _ := info.MapIDs()
		for _, mid := range ids {
			if !own[mid] {
				continue
			}
			m, err := ebpf.NewMapFromID(mid)
			if err != nil {
				continue
			}
			if mi, err := m.Info(); err == nil && mi.Name == "procs" {
				maps = append(maps, m)
			} else {
				m.Close()
			}
		}
	}
	return maps
}

type submissionSpan struct {
	span ptrace.Span
	res  pcommon.Map
}

// waitSubmissions waits until pid has n cuda.submission spans in sink that end at or
// after the work began (workAt), and returns them and those that ended before it.
func waitSubmissions(t *testing.T, sink *consumertest.TracesSink, pid uint32, n int, workAt time.Time) (work, early []submissionSpan) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		work, early = nil, nil
		for _, sp := range pidSpans(sink, pid, metadata.SpanCUDASubmission) {
			if sp.span.EndTimestamp().AsTime().Before(workAt) {
				early = append(early, sp)
			} else {
				work = append(work, sp)
			}
		}
		if len(work) >= n || time.Now().After(deadline) {
			if len(work) != n {
				t.Fatalf("%d cuda.submission spans of the work for pid %d, want %d", len(work), pid, n)
			}
			return work, early
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// pidSpans are pid's spans called name in sink.
func pidSpans(sink *consumertest.TracesSink, pid uint32, name string) []submissionSpan {
	var out []submissionSpan
	for _, td := range sink.AllTraces() {
		for i := 0; i < td.ResourceSpans().Len(); i++ {
			rs := td.ResourceSpans().At(i)
			if p, _ := rs.Resource().Attributes().Get("process.pid"); p.Int() != int64(pid) {
				continue
			}
			for j := 0; j < rs.ScopeSpans().Len(); j++ {
				spans := rs.ScopeSpans().At(j).Spans()
				for k := 0; k < spans.Len(); k++ {
					if spans.At(k).Name() == name {
						out = append(out, submissionSpan{spans.At(k), rs.Resource().Attributes()})
					}
				}
			}
		}
	}
	return out
}

// assemblerFlushAfter is cuda.AssemblerConfig's default FlushAfter (the receiver sets
// none): open work that no call touched for this long is closed as unsynchronized.
const assemblerFlushAfter = 2 * time.Second

// checkInitFree checks where the workload's initialisation (cudaFree(0), work on stream
// 0 with no sync of its own) went: the next call on stream 0 is a worker's cudaMemcpy,
// so the free waits for the device sync after the join, unless the wait for the process
// row kept the workload longer than the assembler's FlushAfter; then it was closed alone,
// as unsynchronized, before the work. Either way it is in exactly one submission; slow
// says the test held the workload past FlushAfter on purpose.
func checkInitFree(t *testing.T, sink *consumertest.TracesSink, pid uint32, work, early []submissionSpan, slow bool) {
	t.Helper()
	frees := pidSpans(sink, pid, metadata.SpanCUDAFree)
	copies := pidSpans(sink, pid, metadata.SpanCUDAMemcpy)
	if len(frees) != 1 || len(copies) != 2 {
		t.Fatalf("%d cuda.free and %d cuda.memcpy spans, want the initialisation's cudaFree(0) and one copy per thread", len(frees), len(copies))
	}
	free := frees[0].span
	var parent *submissionSpan
	for i, s := range append(early, work...) {
		if s.span.SpanID() == free.ParentSpanID() {
			parent = &append(early, work...)[i]
		}
	}
	if parent == nil {
		t.Fatalf("the cudaFree(0) span's parent %v is no submission of pid %d", free.ParentSpanID(), pid)
	}
	scope, _ := parent.span.Attributes().Get(metadata.AttrCUDASyncScope)
	outcome, _ := parent.span.Attributes().Get(metadata.AttrCUDASubmissionOutcome)
	ops, _ := parent.span.Attributes().Get(metadata.AttrCUDAOpCount)
	firstCopy := min(copies[0].span.StartTimestamp(), copies[1].span.StartTimestamp()).AsTime()
	gap := firstCopy.Sub(free.EndTimestamp().AsTime())
	alone := len(early) == 1 && early[0].span.SpanID() == parent.span.SpanID()
	switch {
	case len(early) > 1 || len(early) == 1 && !alone:
		t.Errorf("%d submissions ended before the work, want at most the initialisation's", len(early))
	case alone:
		if scope.Str() != metadata.CUDASyncScopeNone || outcome.Str() != "unsynchronized" || ops.Int() != 1 {
			t.Errorf("the initialisation closed alone as scope %s, %s, %d ops; want none, unsynchronized, 1", scope.Str(), outcome.Str(), ops.Int())
		}
		// Closed by the watermark: nothing touched stream 0 for FlushAfter.
		if gap < assemblerFlushAfter {
			t.Errorf("the initialisation closed alone although a copy touched stream 0 %v after it (FlushAfter %v)", gap, assemblerFlushAfter)
		}
	default:
		if scope.Str() != metadata.CUDASyncScopeContext || outcome.Str() != "synchronized" {
			t.Errorf("the initialisation went into a %s submission (%s), want the device sync's", scope.Str(), outcome.Str())
		}
		if slow {
			t.Errorf("the workload was held %v past FlushAfter, yet its initialisation waited for the device sync", gap)
		}
	}
}
