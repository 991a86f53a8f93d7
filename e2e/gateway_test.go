// End-to-end test of the fleet's gateway: two collectors on loopback. The agent is the
// ocb-built ghostdriver distribution (GHOSTDRIVER_DIST) replaying the bundled capture; it
// writes its spans to a file of its own and sends them over OTLP to the gateway
// distribution (GHOSTDRIVER_GATEWAY) running deploy/gateway-config.yaml, taken from the
// kustomization as the gateway's ConfigMap carries it, with its tail_sampling policies as
// they are: only the endpoints, the exporters (a file), decision_wait and the latency
// threshold are changed. The oracle is the agent's own file, read here: every trace with a
// span in error and every trace longer than the threshold must reach the gateway's file
// whole, and of the others a share within a binomial bound of the probabilistic policy's
// percentage, each whole too. `make test-gateway` builds both and sets the variables.
package e2e

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.yaml.in/yaml/v3"

	"github.com/ghostdriver/ghostdriver/internal/rawcapture"
)

// gatewayLatencyMs replaces the latency policy's threshold_ms for the capture: its jobs
// take up to ~5.2ms (no application spans around them), so the deployed 100ms would keep
// none; 4 splits them into ~210 slow traces (5ms and more) and the rest (a gap lies
// between: one trace in 4–5ms).
const gatewayLatencyMs = 4

// gatewayDecisionWait replaces decision_wait: each job's spans leave the agent in one
// flush, so a trace is complete at the gateway the moment it arrives.
const gatewayDecisionWait = 2 * time.Second

func gatewayBinary(t *testing.T) string {
	return builtBinary(t, "GHOSTDRIVER_GATEWAY", "the ocb-built gateway distribution; `make test-gateway`")
}

// gatewayDeployment returns what the kustomization's gateway Deployment runs: its
// collector config (the ConfigMap entry), its container's other flags (the feature gates)
// and its environment.
func gatewayDeployment(t *testing.T) (cfg string, flags, env []string) {
	objs := kustomizedObjects(t)
	cfg, env = workloadConfig(t, objs, "Deployment")
	for _, o := range objs {
		if o.Kind == "Deployment" {
			for _, a := range o.Spec.Template.Spec.Containers[0].Args {
				if !strings.HasPrefix(a, "--config=") {
					flags = append(flags, a)
				}
			}
		}
	}
	return cfg, flags, env
}

// The gateway's deploy config is valid for the gateway distribution, with the flags its
// Deployment passes: every component it names is in gateway-builder-config.yaml.
func TestGatewayValidatesDeployConfig(t *testing.T) {
	bin := gatewayBinary(t)
	cfg, flags, env := gatewayDeployment(t)
	path := filepath.Join(t.TempDir(), "gateway.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, append([]string{"validate", "--config=" + path}, flags...)...)
	cmd.Env = append(os.Environ(), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s validate (the gateway Deployment's config, flags %q): %v\n%s", filepath.Base(bin), flags, err, out)
	}
}

// collector is a collector process whose output is kept for failure messages.
type collector struct {
	name   string
	cmd    *exec.Cmd
	logs   *lockedBuffer
	exited chan error
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startCollector runs bin with config cfg; at the test's end it is stopped (SIGTERM, then
// kill after 20s) and, if the test failed, its log is printed.
func startCollector(t *testing.T, name, bin, cfg string, flags, env []string) *collector {
	t.Helper()
	path := filepath.Join(t.TempDir(), name+".yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	c := &collector{name: name, logs: &lockedBuffer{}, exited: make(chan error, 1)}
	c.cmd = exec.Command(bin, append([]string{"--config=" + path}, flags...)...)
	c.cmd.Env = append(os.Environ(), env...)
	c.cmd.Stdout, c.cmd.Stderr = c.logs, c.logs
	if err := c.cmd.Start(); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	go func() { c.exited <- c.cmd.Wait() }()
	t.Cleanup(func() {
		_ = c.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-c.exited:
		case <-time.After(20 * time.Second):
			_ = c.cmd.Process.Kill()
			<-c.exited
			t.Errorf("%s did not stop within 20s of SIGTERM", name)
		}
		if t.Failed() {
			t.Logf("%s log (config %s):\n%s", name, path, c.logs.String())
		}
	})
	return c
}

// alive fails the test if the collector has exited.
func (c *collector) alive(t *testing.T) {
	t.Helper()
	select {
	case err := <-c.exited:
		c.exited <- err
		t.Fatalf("%s exited early: %v", c.name, err)
	default:
	}
}

// traceSpans is one trace of a span file: its spans by span id.
type traceSpans map[pcommon.SpanID]ptrace.Span

// duration is the trace's extent: earliest span start to latest span end.
func (tr traceSpans) duration() time.Duration {
	var lo, hi pcommon.Timestamp
	for _, s := range tr {
		if lo == 0 || s.StartTimestamp() < lo {
			lo = s.StartTimestamp()
		}
		if s.EndTimestamp() > hi {
			hi = s.EndTimestamp()
		}
	}
	return hi.AsTime().Sub(lo.AsTime())
}

func (tr traceSpans) hasError() bool {
	for _, s := range tr {
		if s.Status().Code() == ptrace.StatusCodeError {
			return true
		}
	}
	return false
}

// missing lists the spans of want (by name and id) that tr lacks.
func (tr traceSpans) missing(want traceSpans) []string {
	var out []string
	for id, s := range want {
		if _, ok := tr[id]; !ok {
			out = append(out, s.Name()+" "+id.String())
		}
	}
	sort.Strings(out)
	return out
}

// readTraceFile reads an OTLP/JSON lines span file (the file exporter's) into traces. A
// last line without its newline is a write in progress and is left for the next read.
func readTraceFile(t *testing.T, path string) map[pcommon.TraceID]traceSpans {
	t.Helper()
	out := map[pcommon.TraceID]traceSpans{}
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return out
	} else if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var um ptrace.JSONUnmarshaler
	r := bufio.NewReaderSize(f, 1<<20)
	for {
		line, err := r.ReadBytes('\n')
		if err == io.EOF {
			return out
		} else if err != nil {
			t.Fatal(err)
		}
		td, err := um.UnmarshalTraces(line)
		if err != nil {
			t.Fatalf("%s: a line is not OTLP/JSON: %v", path, err)
		}
		for _, rs := range td.ResourceSpans().All() {
			for _, ss := range rs.ScopeSpans().All() {
				for _, s := range ss.Spans().All() {
					tr := out[s.TraceID()]
					if tr == nil {
						tr = traceSpans{}
						out[s.TraceID()] = tr
					}
					tr[s.SpanID()] = s
				}
			}
		}
	}
}

func countJobSpans(traces map[pcommon.TraceID]traceSpans) int {
	n := 0
	for _, tr := range traces {
		for _, s := range tr {
			if s.Name() == "gpu.job" {
				n++
			}
		}
	}
	return n
}

// gatewayTestConfig is the deployed gateway config with only what a loopback test must
// change: its OTLP endpoints, its exporters (traces to a file, metrics to a loopback
// Prometheus endpoint), decision_wait, the latency policies' threshold, and no internal
// telemetry port. It returns the config and the probabilistic policy's percentage.
func gatewayTestConfig(t *testing.T, deployed string, grpcPort, httpPort, promPort int, spans string) (string, float64) {
	var cfg map[string]any
	if err := yaml.Unmarshal([]byte(deployed), &cfg); err != nil {
		t.Fatalf("the gateway's config: %v", err)
	}
	section := func(m map[string]any, key string) map[string]any {
		v, ok := m[key].(map[string]any)
		if !ok {
			t.Fatalf("the gateway's config: no %q map (in %v)", key, m)
		}
		return v
	}
	protocols := section(section(section(cfg, "receivers"), "otlp"), "protocols")
	section(protocols, "grpc")["endpoint"] = fmt.Sprintf("127.0.0.1:%d", grpcPort)
	section(protocols, "http")["endpoint"] = fmt.Sprintf("127.0.0.1:%d", httpPort)

	pipelines := section(section(cfg, "service"), "pipelines")
	traces, metrics := section(pipelines, "traces"), section(pipelines, "metrics")
	exporters := map[string]any{"file": map[string]any{"path": spans}}
	for name, c := range section(cfg, "exporters") {
		if strings.HasPrefix(name, "prometheus") {
			c.(map[string]any)["endpoint"] = fmt.Sprintf("127.0.0.1:%d", promPort)
			exporters[name] = c
			metrics["exporters"] = []any{name}
		}
	}
	cfg["exporters"] = exporters
	traces["exporters"] = []any{"file"}
	section(cfg, "service")["telemetry"] = map[string]any{"metrics": map[string]any{"level": "none"}}

	// The tail_sampling processors of the traces pipeline, as deployed.
	percentage := -1.0
	procs, _ := traces["processors"].([]any)
	for _, p := range procs {
		name, _ := p.(string)
		if name != "tail_sampling" && !strings.HasPrefix(name, "tail_sampling/") {
			continue
		}
		ts := section(section(cfg, "processors"), name)
		ts["decision_wait"] = gatewayDecisionWait.String()
		policies, _ := ts["policies"].([]any)
		for _, p := range policies {
			pol, _ := p.(map[string]any)
			switch pol["type"] {
			case "latency":
				section(pol, "latency")["threshold_ms"] = gatewayLatencyMs
			case "probabilistic":
				v := section(pol, "probabilistic")["sampling_percentage"]
				switch v := v.(type) {
				case int:
					percentage = float64(v)
				case float64:
					percentage = v
				default:
					t.Fatalf("the gateway's probabilistic policy %v: sampling_percentage %v", pol["name"], v)
				}
			}
		}
	}
	if percentage < 0 {
		// The share of ordinary traces is part of what the gateway promises (README,
		// Deployment): without a probabilistic policy there is no bound to check it against.
		t.Fatalf("deploy/gateway-config.yaml: the traces pipeline (processors %v) has no tail_sampling probabilistic policy: the gateway must keep a share of the ordinary traces", procs)
	}
	b, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return string(b), percentage
}

// waitListening polls until something accepts TCP connections on the loopback port.
func waitListening(t *testing.T, c *collector, port int) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		conn, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
		if err == nil {
			conn.Close()
			return
		}
		c.alive(t)
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("%s never listened on 127.0.0.1:%d", c.name, port)
}

// gatewayRun is one agent → gateway run: what the agent sent (its own file) and what the
// gateway kept, split by what the gateway's policies must do with each trace.
type gatewayRun struct {
	sent, got  map[pcommon.TraceID]traceSpans
	percentage float64 // the probabilistic policy's share
	// failed: traces with a span in error; slow: longer than the latency threshold by a
	// millisecond or more; rest: the others (neither kept by a rule nor on its edge).
	failed, slow, rest []pcommon.TraceID
}

// runGateway starts the deployed gateway and an agent replaying the bundled capture with
// the receiver's sampling keys agentSampling (YAML flow map, "" for the replay default:
// unsampled), waits until the agent has sent every job it keeps and the gateway's file holds
// every trace its rules must keep (or a deadline), and returns both files read.
func runGateway(t *testing.T, agentSampling string) gatewayRun {
	agentBin, gatewayBin := distBinary(t), gatewayBinary(t)
	raw, err := rawcapture.Read(capture)
	if err != nil {
		t.Fatal(err)
	}
	wantJobs := len(raw.Ring)
	deployed, flags, env := gatewayDeployment(t)

	dir := t.TempDir()
	agentSpans, gatewaySpans := filepath.Join(dir, "agent-spans.json"), filepath.Join(dir, "gateway-spans.json")
	grpcPort, httpPort, promPort := freePort(t), freePort(t), freePort(t)
	gwCfg, percentage := gatewayTestConfig(t, deployed, grpcPort, httpPort, promPort, gatewaySpans)
	start := time.Now()
	gw := startCollector(t, "gateway", gatewayBin, gwCfg, flags, env)
	waitListening(t, gw, grpcPort)

	sampling := ""
	if agentSampling != "" {
		sampling = "\n    sampling: " + agentSampling
	}
	agentCfg := fmt.Sprintf(`
receivers:
  ghostdriver:
    source: replay
    replay: {path: %q, epoch: "%d"}
    flush_interval: 50ms
    collection_interval: 200ms%s
processors:
  memory_limiter: {check_interval: 1s, limit_percentage: 80, spike_limit_percentage: 20}
  batch: {}
exporters:
  otlp_grpc: {endpoint: "127.0.0.1:%d", tls: {insecure: true}}
  file: {path: %q}
service:
  telemetry: {metrics: {level: none}}
  pipelines:
    traces: {receivers: [ghostdriver], processors: [memory_limiter, batch], exporters: [otlp_grpc, file]}
    metrics: {receivers: [ghostdriver], processors: [memory_limiter, batch], exporters: [otlp_grpc]}
`, capture, epoch, sampling, grpcPort, agentSpans)
	agent := startCollector(t, "agent", agentBin, agentCfg, nil, nil)

	// The oracle: the agent's own output, once it holds every job of the capture (every
	// job it keeps, when it samples: then its file stops growing).
	deadline := time.Now().Add(90 * time.Second)
	var sent map[pcommon.TraceID]traceSpans
	for last, stable := -1, 0; ; {
		sent = readTraceFile(t, agentSpans)
		n := countJobSpans(sent)
		if n >= wantJobs {
			break
		}
		if agentSampling != "" && n > 0 {
			if n == last {
				stable++
			} else {
				last, stable = n, 0
			}
			if stable >= 12 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the agent's file holds %d gpu.job spans after 90s, the capture has %d jobs", n, wantJobs)
		}
		agent.alive(t)
		time.Sleep(250 * time.Millisecond)
	}
	// The batch processor may still hold a last batch: read again after its timeout.
	time.Sleep(time.Second)
	sent = readTraceFile(t, agentSpans)

	r := gatewayRun{sent: sent, percentage: percentage}
	threshold := gatewayLatencyMs * time.Millisecond
	for id, tr := range sent {
		switch d := tr.duration(); {
		case tr.hasError():
			r.failed = append(r.failed, id)
		case d >= threshold+time.Millisecond:
			r.slow = append(r.slow, id)
		case d <= threshold:
			r.rest = append(r.rest, id)
		default:
			// Over the threshold by less than a millisecond: the latency policy compares
			// whole milliseconds, so such a trace is neither kept by it nor ordinary.
		}
	}
	t.Logf("agent: %d traces (%d jobs of the capture's %d): %d with an error, %d of %v or longer, %d others",
		len(sent), countJobSpans(sent), wantJobs, len(r.failed), len(r.slow), threshold+time.Millisecond, len(r.rest))
	if len(r.failed) == 0 || len(r.slow) == 0 || len(r.rest) < 100 {
		t.Fatalf("the capture no longer gives the classes this test needs (traces with an error, slow ones, 100 others)")
	}

	// The gateway decides decision_wait after a trace's first span; wait until every trace
	// that must be kept is there whole, then until the file stops growing (the other
	// decisions of the same ticks, the batch processor's last batch).
	mustKeep := r.mustKeep()
	deadline = time.Now().Add(gatewayDecisionWait + 60*time.Second)
	var got map[pcommon.TraceID]traceSpans
	for {
		got = readTraceFile(t, gatewaySpans)
		whole := 0
		for _, id := range mustKeep {
			if tr, ok := got[id]; ok && len(tr.missing(sent[id])) == 0 {
				whole++
			}
		}
		if whole == len(mustKeep) || time.Now().After(deadline) {
			break
		}
		gw.alive(t)
		time.Sleep(250 * time.Millisecond)
	}
	for last, stable := -1, 0; stable < 12 && time.Now().Before(deadline); {
		st, err := os.Stat(gatewaySpans)
		if err == nil && int(st.Size()) == last {
			stable++
		} else {
			stable = 0
			if err == nil {
				last = int(st.Size())
			}
		}
		time.Sleep(250 * time.Millisecond)
	}
	r.got = readTraceFile(t, gatewaySpans)
	t.Logf("gateway: %d traces after %v", len(r.got), time.Since(start).Round(100*time.Millisecond))
	return r
}

func (r gatewayRun) mustKeep() []pcommon.TraceID {
	return append(append([]pcommon.TraceID{}, r.failed...), r.slow...)
}

// checkRules fails the test unless every trace with an error and every slow trace is in
// the gateway's file whole, and the gateway invents nothing and keeps nothing partly.
func (r gatewayRun) checkRules(t *testing.T) {
	t.Helper()
	check := func(policy string, ids []pcommon.TraceID) {
		absent, partial := 0, 0
		var examples []string
		for _, id := range ids {
			tr, ok := r.got[id]
			if !ok {
				absent++
				if len(examples) < 5 {
					examples = append(examples, fmt.Sprintf("trace %s (%d spans, %v) absent", id, len(r.sent[id]), r.sent[id].duration()))
				}
			} else if m := tr.missing(r.sent[id]); len(m) > 0 {
				partial++
				if len(examples) < 5 {
					examples = append(examples, fmt.Sprintf("trace %s lacks %v", id, m))
				}
			}
		}
		if absent+partial > 0 {
			t.Errorf("policy %s: of %d traces that must be kept, %d are absent from the gateway's file and %d are there without all their spans; e.g.\n  %s",
				policy, len(ids), absent, partial, strings.Join(examples, "\n  "))
		}
	}
	check("errors (status_code ERROR)", r.failed)
	check(fmt.Sprintf("slow (latency over %dms)", gatewayLatencyMs), r.slow)

	for id, tr := range r.got {
		if _, ok := r.sent[id]; !ok {
			t.Errorf("the gateway's file has trace %s (%d spans), which the agent never sent", id, len(tr))
		} else if m := tr.missing(r.sent[id]); len(m) > 0 {
			t.Errorf("the gateway kept trace %s without %v", id, m)
		}
	}
}

// checkProbabilities fails the test unless every span of a kept trace says in its
// tracestate (`ot=th:`) the probability want gives for its trace.
func (r gatewayRun) checkProbabilities(t *testing.T, want map[pcommon.TraceID]float64) {
	t.Helper()
	bad := 0
	for id, p := range want {
		for _, sp := range r.got[id] {
			prob, ok := otProbability(sp.TraceState().AsRaw())
			if !ok || math.Abs(1/prob-1/p) > 1e-6*(1/p) {
				if bad++; bad <= 5 {
					t.Errorf("trace %s span %s: tracestate %q, want ot=th: of probability %g (is the gateway started with the Deployment's --feature-gates?)", id, sp.Name(), sp.TraceState().AsRaw(), p)
				}
			}
		}
	}
}

// The agent unsampled (the replay default): the gateway's rules keep the failed and the
// slow traces, its probabilistic policy a binomial share of the rest.
func TestGatewayTailSampling(t *testing.T) {
	r := runGateway(t, "")
	r.checkRules(t)

	// The others: each is kept with probability p, independently of the rest (a hash of
	// its trace id): the count kept is binomial(n, p). 4.5 standard deviations leave a
	// correct gateway failing about once in 150000 runs; with p = 10% of ~420 traces the
	// band is ~14..70, so a gateway keeping none or all of them fails.
	p := r.percentage / 100
	kept := 0
	for _, id := range r.rest {
		if _, ok := r.got[id]; ok {
			kept++
		}
	}
	n := float64(len(r.rest))
	mean, sd := n*p, math.Sqrt(n*p*(1-p))
	lo, hi := math.Floor(mean-4.5*sd), math.Ceil(mean+4.5*sd)
	t.Logf("others: %d of %d kept (probabilistic %g%%: expected %.1f ± %.1f, bound %g..%g)", kept, len(r.rest), r.percentage, mean, sd, lo, hi)
	if float64(kept) < lo || float64(kept) > hi {
		t.Errorf("policy baseline (probabilistic %g%%): %d of %d ordinary traces kept, outside the binomial bound %g..%g", r.percentage, kept, len(r.rest), lo, hi)
	}

	// The Deployment's usetracestate gate: kept spans say in their tracestate at what
	// probability they were kept (OpenTelemetry consistent probability sampling,
	// `ot=th:T`, T the rejection threshold in 56-bit hex, probability 1 − T/2^56), so
	// adjusted counts stay right: 1 for a trace kept for an error or its latency (the
	// capture's spans carry no head threshold), 1/p for one kept only by the share.
	want := map[pcommon.TraceID]float64{}
	for _, id := range r.mustKeep() {
		want[id] = 1
	}
	for _, id := range r.rest {
		want[id] = p
	}
	r.checkProbabilities(t, want)
}

// gatewayHeadProbability is the agent's sampling.probability in the head-sampled run: above
// the gateway's share, so that the gateway thins what the agent kept.
const gatewayHeadProbability = 0.5

// The agent samples at the source (consistent probability 0.5, its keep rules on, as a
// busy node would): the fleet's two samplers must compose. Each span the agent sends
// carries its head threshold (`ot=th:`, 0 for a job a keep rule kept); the gateway's
// probabilistic policy, with the Deployment's usetracestate gate, draws on the same
// randomness (the tracestate's rv, else the trace id's low 56 bits), so it keeps an
// ordinary trace exactly when that randomness is at or above its own threshold
// (1 − q)·2^56 — decided here per trace from the trace id, not as a count — and writes
// that stricter threshold into the kept spans; the failed and slow traces keep their head
// threshold. Adjusted counts (1/p) then stay right across both samplers.
func TestGatewayTailSamplingAfterHeadSampling(t *testing.T) {
	r := runGateway(t, fmt.Sprintf("{enabled: true, probability: %g}", gatewayHeadProbability))
	r.checkRules(t)

	// What the agent sent: only head-kept jobs, each with its threshold, and the
	// probability share's ones with randomness at or above the head's threshold.
	headTh := uint64((1 - gatewayHeadProbability) * (1 << 56))
	head := map[pcommon.TraceID]float64{}
	byShare := 0
	for id, tr := range r.sent {
		prob := -1.0
		for _, sp := range tr {
			ts := sp.TraceState().AsRaw()
			p, ok := otProbability(ts)
			if !ok {
				t.Fatalf("the sampling agent sent span %s of trace %s without ot=th: (tracestate %q)", sp.Name(), id, ts)
			}
			if prob >= 0 && p != prob {
				t.Fatalf("trace %s: its spans carry different thresholds (%g, %g)", id, prob, p)
			}
			prob = p
			if p < 1 {
				if rv := traceRandomness(id, ts); rv < headTh {
					t.Errorf("trace %s was kept at probability %g with randomness %#x below the threshold %#x", id, p, rv, headTh)
				}
			}
		}
		if prob < 1 {
			byShare++
		}
		head[id] = prob
	}
	t.Logf("agent: %d traces kept by the probability share (p=%g), %d by keep rules (p=1)", byShare, gatewayHeadProbability, len(r.sent)-byShare)
	if byShare == 0 || byShare == len(r.sent) {
		t.Fatalf("the agent's head sampling kept %d of %d traces by its probability share: this test needs both kinds", byShare, len(r.sent))
	}

	// The gateway's share, trace by trace. A trace whose randomness lies within 2^-12 of
	// the threshold is left out: the policy's threshold is the percentage rounded to its
	// encoding's precision, which the test does not restate.
	q := r.percentage / 100
	gwTh := (1 - q) * (1 << 56)
	edge := float64(uint64(1) << 44)
	wrong, judged, kept := 0, 0, 0
	want := map[pcommon.TraceID]float64{}
	for _, id := range r.mustKeep() {
		want[id] = head[id]
	}
	for _, id := range r.rest {
		rv := float64(traceRandomness(id, anyTraceState(r.sent[id])))
		if math.Abs(rv-gwTh) < edge {
			continue
		}
		judged++
		shouldKeep := rv >= gwTh
		_, ok := r.got[id]
		if ok {
			kept++
			want[id] = math.Min(q, head[id])
		}
		if ok != shouldKeep {
			if wrong++; wrong <= 5 {
				t.Errorf("trace %s (head p=%g, randomness %.4f of 2^56): kept by the gateway %v, want %v (threshold %.4f)", id, head[id], rv/(1<<56), ok, shouldKeep, 1-q)
			}
		}
	}
	t.Logf("gateway share: %d of %d ordinary traces judged kept, %d decisions wrong", kept, judged, wrong)
	if kept == 0 || kept == judged {
		t.Errorf("the gateway kept %d of %d ordinary traces: the test needs both decisions to mean anything", kept, judged)
	}
	r.checkProbabilities(t, want)
}

// traceRandomness is a span's randomness value in OpenTelemetry consistent probability
// sampling: the tracestate's `ot=rv:` (14 hex digits) when present, else the trace id's
// low 56 bits.
func traceRandomness(id pcommon.TraceID, ts string) uint64 {
	for _, member := range strings.Split(ts, ",") {
		v, ok := strings.CutPrefix(strings.TrimSpace(member), "ot=")
		if !ok {
			continue
		}
		for _, kv := range strings.Split(v, ";") {
			if rv, ok := strings.CutPrefix(kv, "rv:"); ok && len(rv) == 14 {
				var n uint64
				if _, err := fmt.Sscanf(rv, "%x", &n); err == nil {
					return n
				}
			}
		}
	}
	var n uint64
	for _, b := range id[9:] {
		n = n<<8 | uint64(b)
	}
	return n
}

// anyTraceState is the tracestate of one span of tr (the agent gives every span of a job
// the same).
func anyTraceState(tr traceSpans) string {
	for _, sp := range tr {
		return sp.TraceState().AsRaw()
	}
	return ""
}

// otProbability reads the sampling probability of an `ot=th:` tracestate entry.
func otProbability(ts string) (float64, bool) {
	for _, member := range strings.Split(ts, ",") {
		v, ok := strings.CutPrefix(strings.TrimSpace(member), "ot=")
		if !ok {
			continue
		}
		for _, kv := range strings.Split(v, ";") {
			th, ok := strings.CutPrefix(kv, "th:")
			if !ok || th == "" || len(th) > 14 {
				continue
			}
			th += strings.Repeat("0", 14-len(th)) // trailing zeros are dropped
			var n uint64
			if _, err := fmt.Sscanf(th, "%x", &n); err != nil {
				return 0, false
			}
			return 1 - float64(n)/(1<<56), true
		}
	}
	return 0, false
}
