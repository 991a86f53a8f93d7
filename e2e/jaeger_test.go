//go:build linux

// End to end, live: application traces and GPU job spans come back from a real Jaeger as
// ONE trace, and a Prometheus scrape of the distribution shows the stage histograms with
// the default tenant dimension. `scripts/test-jaeger.sh` builds Jaeger and the
// distribution and sets GHOSTDRIVER_JAEGER and GHOSTDRIVER_DIST; it needs root.
//
// What is real and what is not (this host has no DRM driver):
//   - real: the applications (testdata/threadctx.c, built here with gcc) publishing OTEP
//     4947 thread context from two threads, TRACEPARENT in an environment; their submit
//     ioctls (ioctl(TCGETS) on /dev/null, the live source's device-major filter pointed at
//     major 1); the eBPF programs reading each thread's context in the kernel; the
//     enricher resolving the TLS recipe from /proc and pushing it into the kernel at the
//     first sight of the process; tenant attribution from /proc; the pipeline, the
//     distribution (otlp receiver → otlp_http exporter → Jaeger; → prometheus exporter),
//     Jaeger and its query API.
//   - synthetic: the scheduler and fence events of each job (queue inside the real ioctl,
//     add_dep on the previous job, run, hardware fence, done), added by synthSink to the
//     live stream at times derived from the real ioctl timestamps, named "synthetic:…"
//     so that every stage rule in the spans says so. The virtual GPU rig runs the same
//     pieces with a real DRM driver (`ghostdriver live`).
package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/ghostdriver/ghostdriver/internal/assemble"
	"github.com/ghostdriver/ghostdriver/internal/attr"
	"github.com/ghostdriver/ghostdriver/internal/ctxtier"
	"github.com/ghostdriver/ghostdriver/internal/emit"
	"github.com/ghostdriver/ghostdriver/internal/enrich"
	"github.com/ghostdriver/ghostdriver/internal/event"
	"github.com/ghostdriver/ghostdriver/internal/metadata"
	"github.com/ghostdriver/ghostdriver/internal/pipeline"
	"github.com/ghostdriver/ghostdriver/internal/probe"
	"github.com/ghostdriver/ghostdriver/internal/tenant"
	"github.com/ghostdriver/ghostdriver/internal/tenant/appctx"
	"github.com/ghostdriver/ghostdriver/internal/testreq"
)

const (
	ctxAppName   = "threadctx-app" // OTEP 4947 thread context from its threads
	plainAppName = "plain-app"     // no thread context (TRACEPARENT or nothing)
	appService   = "render-app"    // OTEL_SERVICE_NAME of ctxAppName, and of its own spans
)

// background starts a long-running command whose output is kept for failures.
func background(t *testing.T, name string, cmd *exec.Cmd) {
	t.Helper()
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("%s log:\n%s", name, logs.String())
		}
	})
}

func waitHTTP(t *testing.T, url string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if resp, err := http.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode < 500 {
				return
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("%s never answered", url)
}

// startJaeger runs the all-in-one with in-memory storage on loopback.
func startJaeger(t *testing.T, bin string) (query, otlp int) {
	query, otlp = freePort(t), freePort(t)
	cfg := fmt.Sprintf(`
service:
  extensions: [jaeger_storage, jaeger_query]
  pipelines:
    traces: {receivers: [otlp], processors: [batch], exporters: [jaeger_storage_exporter]}
  telemetry: {metrics: {level: none}, traces: {level: none}}
extensions:
  jaeger_query:
    storage: {traces: mem}
    http: {endpoint: "127.0.0.1:%d"}
    grpc: {endpoint: "127.0.0.1:%d"}
  jaeger_storage:
    backends: {mem: {memory: {max_traces: 10000}}}
receivers:
  otlp:
    protocols: {http: {endpoint: "127.0.0.1:%d"}}
processors:
  batch: {timeout: 100ms}
exporters:
  jaeger_storage_exporter: {trace_storage: mem}
`, query, freePort(t), otlp)
	path := filepath.Join(t.TempDir(), "jaeger.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	background(t, "jaeger", exec.Command(bin, "--config", path))
	waitHTTP(t, fmt.Sprintf("http://127.0.0.1:%d/api/services", query))
	return query, otlp
}

// startAgent runs the distribution as an agent: OTLP in, traces to Jaeger, metrics to
// its Prometheus exporter.
func startAgent(t *testing.T, bin string, jaegerOTLP int) (otlp, prom int) {
	otlp, prom = freePort(t), freePort(t)
	cfg := fmt.Sprintf(`
receivers:
  otlp:
    protocols: {http: {endpoint: "127.0.0.1:%d"}}
processors:
  batch: {timeout: 100ms}
exporters:
  otlp_http: {endpoint: "http://127.0.0.1:%d"}
  prometheus: {endpoint: "127.0.0.1:%d"}
service:
  telemetry: {metrics: {level: none}}
  pipelines:
    traces: {receivers: [otlp], processors: [batch], exporters: [otlp_http]}
    metrics: {receivers: [otlp], exporters: [prometheus]}
`, otlp, jaegerOTLP, prom)
	path := filepath.Join(t.TempDir(), "agent.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	background(t, "agent", exec.Command(bin, "--config", path))
	waitHTTP(t, fmt.Sprintf("http://127.0.0.1:%d/metrics", prom))
	return otlp, prom
}

func post(url, contentType string, body []byte) error {
	resp, err := http.Post(url, contentType, bytes.NewReader(body))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		b, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("%s: %s: %s", url, resp.Status, b)
	}
	return nil
}

// synthSink adds, for every real submit ioctl of the watched executables, the scheduler
// and fence events a DRM driver would produce (see the file comment).
type synthSink struct {
	next  event.Sink
	comms map[string]bool
	enter map[uint32]event.Event    // a watched thread's open ioctl (live exits carry no comm)
	prev  map[uint32]event.FenceKey // last job of each process: the next one depends on it
	seq   uint64
	out   []event.Event
}

const (
	synthCtx    = 0x5e00 // scheduler finished-fence context of the synthetic ring
	synthHWCtx  = 0x5e01 // its hardware fences
	synthWorker = 0x7ffffff0
	synthRing   = "synthetic0"
	synthDriver = "synthetic"
	us          = int64(1000)
)

// The submitting thread's own events (queue, dependency) go in before its exit, where a
// driver's would be in the ring: the live source hands over each thread's events in the
// thread's order (event.Event.InThreadOrder), and the assembler relies on it (an enter
// followed by its exit is an ioctl that queued no job). The scheduler's and the fences'
// events, of other threads, follow the exit.
func (s *synthSink) Consume(batch []event.Event) {
	s.out = s.out[:0]
	for _, e := range batch {
		switch e.Kind {
		case event.IoctlEnter:
			if s.comms[e.Comm] {
				s.enter[e.TID] = e
			}
		case event.IoctlExit:
			in, ok := s.enter[e.TID]
			if !ok {
				break
			}
			delete(s.enter, e.TID)
			exit := e
			t0 := in.Time
			e.Comm = in.Comm
			s.seq++
			f := event.FenceKey{Context: synthCtx, Seqno: s.seq}
			hw := event.FenceKey{Context: synthHWCtx, Seqno: s.seq}
			tq := t0 + (e.Time-t0)/2
			sub := event.Event{Time: tq, TID: e.TID, PID: e.PID, Comm: e.Comm, CPU: e.CPU, Ring: synthRing, Fence: f, FenceWide: true}
			q := sub
			q.Kind, q.Name = event.JobQueue, "synthetic:drm_sched_job_queue"
			s.out = append(s.out, q)
			if p, ok := s.prev[e.PID]; ok {
				d := sub
				d.Kind, d.Name, d.Dep, d.DepWide = event.JobDependency, "synthetic:drm_sched_job_add_dep", p, true
				s.out = append(s.out, d)
			}
			s.prev[e.PID] = f
			s.out = append(s.out, exit)
			worker := event.Event{TID: synthWorker, Comm: "synthetic-sched", CPU: 0, Ring: synthRing}
			run := worker
			run.Kind, run.Name, run.Time, run.Fence, run.FenceWide = event.JobRun, "synthetic:drm_sched_job_run", e.Time+20*us, f, true
			hwInit := worker
			hwInit.Kind, hwInit.Name, hwInit.Time, hwInit.Driver, hwInit.Fence = event.FenceInit, "synthetic:dma_fence_init", e.Time+25*us, synthDriver, hw
			hwSig := event.Event{Kind: event.FenceSignaled, Name: "synthetic:dma_fence_signaled", Time: e.Time + 300*us, Driver: synthDriver, Fence: hw}
			done := event.Event{Kind: event.JobDone, Name: "synthetic:drm_sched_job_done", Time: e.Time + 310*us, Fence: f, FenceWide: true}
			finSig := event.Event{Kind: event.FenceSignaled, Name: "synthetic:dma_fence_signaled", Time: e.Time + 310*us, Driver: synthDriver, Fence: f.Truncated()}
			s.out = append(s.out, run, hwInit, hwSig, done, finSig)
			continue
		}
		s.out = append(s.out, e)
	}
	s.next.Consume(s.out)
}

func (s *synthSink) Watermark(t int64) { s.next.Watermark(t) }

// synthSource is the live source with synthSink in front of the pipeline.
type synthSource struct {
	*probe.Live
	comms map[string]bool
}

func (s synthSource) Run(ctx context.Context, sink event.Sink) error {
	return s.Live.Run(ctx, &synthSink{next: sink, comms: s.comms, enter: map[uint32]event.Event{}, prev: map[uint32]event.FenceKey{}})
}

// appThread is one line of the application's output.
type appThread struct {
	tid   uint32
	trace [16]byte
	span  [8]byte
	valid bool
}

// runApp runs the application; ready is called after its threads published (and its
// main thread made one submit ioctl), before they submit.
func runApp(t *testing.T, exe string, env []string, ready func(pid uint32)) (uint32, []appThread, time.Time, time.Time) {
	t.Helper()
	cmd := exec.Command(exe)
	cmd.Env = env
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	if !sc.Scan() {
		cmd.Wait()
		t.Fatalf("%s: no ready line: %s", exe, stderr.String())
	}
	var pid uint32
	fmt.Sscanf(sc.Text(), "ready %d", &pid)
	ready(pid)
	io.WriteString(stdin, "go\n")
	var threads []appThread
	for sc.Scan() {
		var th appThread
		var tr, sp string
		var valid int
		if _, err := fmt.Sscanf(sc.Text(), "thread %d %s %s %d", &th.tid, &tr, &sp, &valid); err != nil {
			t.Fatalf("%q: %v", sc.Text(), err)
		}
		hex.Decode(th.trace[:], []byte(tr))
		hex.Decode(th.span[:], []byte(sp))
		th.valid = valid == 1
		threads = append(threads, th)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%s: %v: %s", exe, err, stderr.String())
	}
	return pid, threads, start, time.Now()
}

// appSpans is what the applications' own SDK would export: one span per active context.
func appSpans(service string, spans []appSpan) ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", service)
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName("e2e-app-sdk")
	for _, a := range spans {
		sp := ss.Spans().AppendEmpty()
		sp.SetTraceID(a.trace)
		sp.SetSpanID(a.span)
		sp.SetName(a.name)
		sp.SetKind(ptrace.SpanKindServer)
		sp.SetStartTimestamp(pcommon.NewTimestampFromTime(a.start))
		sp.SetEndTimestamp(pcommon.NewTimestampFromTime(a.end))
	}
	return td
}

type appSpan struct {
	trace      [16]byte
	span       [8]byte
	name       string
	start, end time.Time
}

// jaegerTrace is the part of Jaeger's /api/traces/<id> answer the test reads.
type jaegerTrace struct {
	Data []struct {
		TraceID string `json:"traceID"`
		Spans   []struct {
			SpanID     string `json:"spanID"`
			Operation  string `json:"operationName"`
			ProcessID  string `json:"processID"`
			References []struct {
				RefType string `json:"refType"`
				TraceID string `json:"traceID"`
				SpanID  string `json:"spanID"`
			} `json:"references"`
			Tags []jaegerTag `json:"tags"`
		} `json:"spans"`
		Processes map[string]struct {
			ServiceName string `json:"serviceName"`
		} `json:"processes"`
	} `json:"data"`
}

func getTrace(t *testing.T, port int, trace [16]byte) jaegerTrace {
	var jt jaegerTrace
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/api/traces/%x", port, trace))
	if err != nil {
		return jt
	}
	defer resp.Body.Close()
	json.NewDecoder(resp.Body).Decode(&jt)
	return jt
}

// waitTrace polls Jaeger until the trace has at least n spans.
func waitTrace(t *testing.T, port int, trace [16]byte, n int) jaegerTrace {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		jt := getTrace(t, port, trace)
		if len(jt.Data) == 1 && len(jt.Data[0].Spans) >= n {
			return jt
		}
		if time.Now().After(deadline) {
			got := 0
			if len(jt.Data) > 0 {
				got = len(jt.Data[0].Spans)
			}
			t.Fatalf("trace %x: %d traces, %d spans after 30s, want one trace with ≥ %d", trace, len(jt.Data), got, n)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// jobStages are the stage children of every job here: the real submit ioctl measures t0
// and tx (ioctl); no buffer-object hook fires on /dev/null, so t1 falls back to the
// synthetic queue event (bo_validation); the queue and the dependency on the previous
// job resolve td (fence_dependency); the synthetic run and hardware fence init give te
// (ring_emission), ts follows from it (dma_scheduling), the hardware fence signal gives
// th (execution) and the job's done gives tf (fence_signal).
var jobStages = []string{
	assemble.StageIoctl.String(), assemble.StageBOValidation.String(),
	assemble.StageFenceDependency.String(), assemble.StageRingEmission.String(),
	assemble.StageDMAScheduling.String(), assemble.StageExecution.String(),
	assemble.StageFenceSignal.String(),
}

// spansPerJob is a gpu.job span and its stage children.
var spansPerJob = 1 + len(jobStages)

// checkJoined asserts the GPU job spans of one application span in one Jaeger trace, and
// the stage children of every GPU job span in that trace.
func checkJoined(t *testing.T, jt jaegerTrace, parent [8]byte, tier string, wantJobs int, appName, gpuService string) {
	t.Helper()
	tr := jt.Data[0]
	parentID := hex.EncodeToString(parent[:])
	jobs, app, links := 0, false, 0
	stages := map[string]map[string]int{} // gpu.job span id → stage name → count
	for _, sp := range tr.Spans {
		svc := tr.Processes[sp.ProcessID].ServiceName
		switch sp.Operation {
		case appName:
			app = sp.SpanID == parentID
		case emit.JobSpanName:
			stages[sp.SpanID] = map[string]int{}
			childOf := false
			for _, r := range sp.References {
				switch {
				case r.RefType == "CHILD_OF" && r.SpanID == parentID:
					childOf = true
				case r.RefType == "FOLLOWS_FROM":
					links++
				}
			}
			if !childOf {
				continue // a job of another thread of the same trace
			}
			jobs++
			tags := spanTags(sp.Tags)
			if tags[metadata.AttrContextTier] != tier {
				t.Errorf("gpu.job %s: tier %q, want %q", sp.SpanID, tags[metadata.AttrContextTier], tier)
			}
			if svc != gpuService {
				t.Errorf("gpu.job %s: service %q, want %q", sp.SpanID, svc, gpuService)
			}
		}
	}
	want := map[string]bool{}
	for _, s := range jobStages {
		want[s] = true
	}
	for _, sp := range tr.Spans {
		if !want[sp.Operation] {
			continue
		}
		job := ""
		for _, r := range sp.References {
			if _, ok := stages[r.SpanID]; ok && r.RefType == "CHILD_OF" {
				job = r.SpanID
			}
		}
		if job == "" {
			t.Errorf("stage span %s %s is not a CHILD_OF any gpu.job span of the trace: %+v", sp.Operation, sp.SpanID, sp.References)
			continue
		}
		stages[job][sp.Operation]++
		src := spanTags(sp.Tags)[metadata.AttrStageSource]
		if src != "measured" && src != "inferred" {
			t.Errorf("stage span %s of gpu.job %s: %s = %q, want measured or inferred", sp.Operation, job, metadata.AttrStageSource, src)
		}
		// Both bounds of the ioctl stage are real kprobe/tracepoint hits on this host.
		if sp.Operation == assemble.StageIoctl.String() && src != "measured" {
			t.Errorf("ioctl stage of gpu.job %s: %s = %q, want measured", job, metadata.AttrStageSource, src)
		}
	}
	for job, got := range stages {
		for _, s := range jobStages {
			if got[s] != 1 {
				t.Errorf("gpu.job %s: %d %s stage children, want 1 (has %v)", job, got[s], s, got)
			}
		}
	}
	if !app {
		t.Errorf("the application's own span %s is not in the trace", parentID)
	}
	if jobs != wantJobs {
		t.Errorf("%d gpu.job spans are children of %s, want %d", jobs, parentID, wantJobs)
	}
	if links == 0 {
		t.Error("no gpu.job span links the job it depended on")
	}
}

type jaegerTag struct {
	Key   string `json:"key"`
	Value any    `json:"value"`
}

func spanTags(tags []jaegerTag) map[string]string {
	m := make(map[string]string, len(tags))
	for _, tg := range tags {
		m[tg.Key] = fmt.Sprint(tg.Value)
	}
	return m
}

func TestLiveContextJoinsJaegerTrace(t *testing.T) {
	jaegerBin, dist := os.Getenv("GHOSTDRIVER_JAEGER"), os.Getenv("GHOSTDRIVER_DIST")
	if jaegerBin == "" || dist == "" {
		testreq.Skip(t, testreq.Jaeger, "GHOSTDRIVER_JAEGER and GHOSTDRIVER_DIST are not set: scripts/test-jaeger.sh builds both")
	}
	if os.Geteuid() != 0 {
		testreq.Skip(t, testreq.Root, "needs root: loads eBPF programs")
	}
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Fatal("needs gcc (apt-get install gcc)")
	}
	began := time.Now()
	queryPort, jaegerOTLP := startJaeger(t, jaegerBin)
	agentOTLP, promPort := startAgent(t, dist, jaegerOTLP)
	t.Logf("jaeger and agent up in %v", time.Since(began).Round(time.Millisecond))

	dir := t.TempDir()
	src, _ := filepath.Abs(filepath.Join("..", "internal", "probe", "testdata", "threadctx.c"))
	ctxApp, plainApp := filepath.Join(dir, ctxAppName), filepath.Join(dir, plainAppName)
	for _, args := range [][]string{
		{"-O1", "-pthread", "-DCTX_IN_EXE", "-rdynamic", "-o", ctxApp, src},
		{"-O1", "-pthread", "-o", plainApp, src, "-ldl"},
	} {
		if out, err := exec.Command("gcc", args...).CombinedOutput(); err != nil {
			t.Fatalf("gcc: %v\n%s", err, out)
		}
	}

	cfg := probe.DefaultConfig()
	cfg.DRMMajors = []uint32{1} // /dev/null stands in for a render node
	// Its ioctls stand in for submits, but nothing happens inside them: once the enricher
	// has resolved the process, the kernel would count them instead of sending them.
	cfg.SendJoblessIoctls = true
	live, rep, err := probe.Open(cfg, nil)
	if err != nil {
		t.Fatalf("probe: %v\n%s", err, rep)
	}
	defer live.Close()
	enr := enrich.New(enrich.Config{}, tenant.NewResolver(tenant.DefaultConfig()), live, nil)
	defer enr.Close()

	var mu sync.Mutex
	var jobs []assemble.Job
	outs := pipeline.Outputs{
		Traces: func(ctx context.Context, td ptrace.Traces) error {
			// TracesData and ExportTraceServiceRequest are the same message on the wire
			// (resource_spans = 1): an OTLP/HTTP protobuf export.
			b, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
			if err != nil {
				return err
			}
			return post(fmt.Sprintf("http://127.0.0.1:%d/v1/traces", agentOTLP), "application/x-protobuf", b)
		},
		Metrics: func(ctx context.Context, md pmetric.Metrics) error {
			b, err := (&pmetric.ProtoMarshaler{}).MarshalMetrics(md)
			if err != nil {
				return err
			}
			return post(fmt.Sprintf("http://127.0.0.1:%d/v1/metrics", agentOTLP), "application/x-protobuf", b)
		},
		Job: func(j *assemble.Job) {
			mu.Lock()
			jobs = append(jobs, *j)
			mu.Unlock()
		},
	}
	p := pipeline.New(pipeline.Config{
		Assemble:           assemble.DefaultConfig(),
		Metrics:            metadata.DefaultMetricsConfig(),
		FlushInterval:      100 * time.Millisecond,
		CollectionInterval: 300 * time.Millisecond,
		SpanOptions:        []emit.SpanOption{emit.WithIDSalt(probe.BootSalt())},
		Enricher:           enr,
	}, synthSource{Live: live, comms: map[string]bool{ctxAppName: true, plainAppName: true}}, outs, nil)
	ctx, cancel := context.WithCancel(context.Background())
	runErr := make(chan error, 1)
	go func() { runErr <- p.Run(ctx) }()

	// 1. OTEP 4947: the enricher pushes the recipe after the main thread's first ioctl.
	base := os.Environ()
	ctxPID, threads, s1, e1 := runApp(t, ctxApp, append(base, "OTEL_SERVICE_NAME="+appService), func(pid uint32) {
		deadline := time.Now().Add(10 * time.Second)
		for enr.Stats().Recipes == 0 {
			if time.Now().After(deadline) {
				t.Fatalf("no OTEP 4947 recipe pushed for pid %d: %+v", pid, enr.Stats())
			}
			time.Sleep(5 * time.Millisecond)
		}
	})
	// 2. TRACEPARENT only.
	tp, _ := appctx.ParseTraceParent("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
	// The applications live for about a millisecond: let the enricher's first read (queued
	// by the main thread's ioctl) finish before they submit and exit, as it would for any
	// process that lives longer than that.
	loaded := func() func(uint32) {
		loads := enr.Stats().Loads
		return func(uint32) {
			for deadline := time.Now().Add(10 * time.Second); enr.Stats().Loads == loads && time.Now().Before(deadline); {
				time.Sleep(2 * time.Millisecond)
			}
		}
	}
	tpPID, _, s2, e2 := runApp(t, plainApp, append(base, "CTX_NONE=1", "TRACEPARENT="+tp.String()), loaded())
	// 3. Neither.
	nonePID, _, _, _ := runApp(t, plainApp, append(base, "CTX_NONE=1"), loaded())

	// The applications' own spans, exported as an SDK would (OTLP/HTTP JSON) to the agent.
	var own []appSpan
	for i, th := range threads {
		if th.valid {
			own = append(own, appSpan{th.trace, th.span, fmt.Sprintf("render-thread-%d", i), s1, e1})
		}
	}
	var jm ptrace.JSONMarshaler
	b1, _ := jm.MarshalTraces(appSpans(appService, own))
	b2, _ := jm.MarshalTraces(appSpans("batch-launcher", []appSpan{{tp.TraceID, tp.SpanID, "batch-step", s2, e2}}))
	for _, b := range [][]byte{b1, b2} {
		if err := post(fmt.Sprintf("http://127.0.0.1:%d/v1/traces", agentOTLP), "application/json", b); err != nil {
			t.Fatal(err)
		}
	}

	time.Sleep(300 * time.Millisecond) // past the reorder window and the last synthetic completion
	cancel()
	if err := <-runErr; err != nil {
		t.Fatal(err)
	}

	// Jobs as the pipeline emitted them.
	byPID := map[uint32][]assemble.Job{}
	for _, j := range jobs {
		byPID[j.PID] = append(byPID[j.PID], j)
	}
	// threadctx.c: one ioctl of the main thread before the go, 5 of each of the 3 workers,
	// then 5 more of the main thread under a record of its own.
	const appJobs = 1 + 3*5 + 5
	if n := len(byPID[ctxPID]); n != appJobs {
		t.Errorf("%d jobs of the thread-context app, want %d", n, appJobs)
	}
	for _, j := range byPID[nonePID] {
		if j.CtxTier != ctxtier.None {
			t.Errorf("app without context: job tier %d", j.CtxTier)
		}
		if v, _ := attr.Lookup(j.Resource, "service.name"); v.Str != plainAppName {
			t.Errorf("app without context: service.name %q, want the executable name", v.Str)
		}
		if v, _ := attr.Lookup(j.Resource, "process.pid"); v.Int != int64(nonePID) {
			t.Errorf("app without context: process.pid %d", v.Int)
		}
	}
	if len(byPID[nonePID]) != appJobs || len(byPID[tpPID]) != appJobs {
		t.Errorf("jobs: %d without context, %d with TRACEPARENT; want %d each", len(byPID[nonePID]), len(byPID[tpPID]), appJobs)
	}

	// Jaeger: each application span and its GPU jobs are one trace.
	for i, th := range threads {
		if !th.valid {
			continue
		}
		jt := waitTrace(t, queryPort, th.trace, 1+5*spansPerJob)
		checkJoined(t, jt, th.span, metadata.ContextTierOTEP4947, 5, fmt.Sprintf("render-thread-%d", i), appService)
	}
	jt := waitTrace(t, queryPort, tp.TraceID, 1+appJobs*spansPerJob)
	checkJoined(t, jt, tp.SpanID, metadata.ContextTierTraceparent, appJobs, "batch-step", plainAppName)

	// Prometheus: the distribution's exporter, default tenant dimension present.
	deadline := time.Now().Add(30 * time.Second)
	for {
		fams := scrape(t, promPort)
		if h, ok := fams["ghostdriver_stage_duration_seconds"]; ok && hasSeries(h, "service_name", appService) {
			if h.GetType() != dto.MetricType_HISTOGRAM {
				t.Errorf("stage duration is %v", h.GetType())
			}
			for _, svc := range []string{appService, plainAppName} {
				if !hasSeries(h, "service_name", svc) {
					t.Errorf("no stage histogram series with service_name=%q", svc)
				}
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no stage histogram with service_name=%q in the scrape; families: %v", appService, names(fams))
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Logf("end to end in %v", time.Since(began).Round(time.Millisecond))
}

func hasSeries(f *dto.MetricFamily, label, value string) bool {
	for _, m := range f.GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == label && l.GetValue() == value && !strings.HasPrefix(value, "_") {
				return true
			}
		}
	}
	return false
}
