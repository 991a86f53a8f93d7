// End-to-end test of the ocb-built distribution: the collector binary replays the bundled
// real capture; its file exporter must hold exactly the capture's jobs as a second reading
// of it counts them (internal/rawcapture), every complete one with its six stage children, and a Prometheus scrape of its prometheus exporter must parse and carry
// the stage histograms. Its `validate` subcommand accepts the DaemonSet's embedded agent
// config in deploy/ (the gateway's: e2e/gateway_test.go). `make test-dist` builds the binary
// and sets GHOSTDRIVER_DIST.
package e2e

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.yaml.in/yaml/v3"

	"github.com/ghostdriver/ghostdriver/internal/rawcapture"
	"github.com/ghostdriver/ghostdriver/internal/testreq"
)

const epoch = int64(1500458400000000000) // 2017-07-19T10:00:00Z, the day the capture was taken

var capture, _ = filepath.Abs(filepath.Join("..", "testdata", "captures", "gpuvis_amdgpu_4.11_full.trace-cmd-report.txt.gz"))

func distBinary(t *testing.T) string {
	return builtBinary(t, "GHOSTDRIVER_DIST", "the ocb-built collector; `make test-dist`")
}

// builtBinary is the absolute path of the distribution binary the environment variable
// env names (what names it and which make target builds it: what), or a named skip.
func builtBinary(t *testing.T, env, what string) string {
	t.Helper()
	bin := os.Getenv(env)
	if bin == "" {
		testreq.Skip(t, testreq.Dist, env+" is not set: this test runs "+what+" builds it and sets the variable")
	}
	abs, err := filepath.Abs(bin)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(abs); err != nil {
		t.Fatalf("%s=%s: %v", env, bin, err)
	}
	return abs
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func TestDistributionReplay(t *testing.T) {
	bin := distBinary(t)
	raw, err := rawcapture.Read(capture)
	if err != nil {
		t.Fatal(err)
	}
	want := len(raw.Ring)
	if want == 0 {
		t.Fatal("the bundled capture reads as no jobs")
	}

	dir := t.TempDir()
	spans := filepath.Join(dir, "spans.json")
	port := freePort(t)
	cfg := fmt.Sprintf(`
receivers:
  ghostdriver:
    source: replay
    replay: {path: %q, epoch: "%d"}
    flush_interval: 50ms
    collection_interval: 200ms
processors:
  batch: {}
  memory_limiter: {check_interval: 1s, limit_percentage: 80, spike_limit_percentage: 20}
exporters:
  file: {path: %q}
  prometheus: {endpoint: "127.0.0.1:%d"}
service:
  telemetry: {metrics: {level: none}}
  pipelines:
    traces: {receivers: [ghostdriver], processors: [memory_limiter, batch], exporters: [file]}
    metrics: {receivers: [ghostdriver], processors: [memory_limiter, batch], exporters: [prometheus]}
`, capture, epoch, spans, port)
	cfgPath := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	cmd := exec.Command(bin, "--config", cfgPath)
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			t.Error("collector did not stop within 20s of SIGTERM")
		}
		if t.Failed() {
			t.Logf("collector log:\n%s", logs.String())
		}
	}()

	// Wait for all the jobs in the file exporter's output.
	var jobs int
	deadline := time.Now().Add(90 * time.Second)
	for {
		jobs, _ = countSpans(t, spans)
		if jobs >= want || time.Now().After(deadline) {
			break
		}
		select {
		case err := <-exited:
			t.Fatalf("collector exited early: %v", err)
		case <-time.After(250 * time.Millisecond):
		}
	}
	if jobs != want {
		t.Fatalf("file exporter holds %d gpu.job spans, the capture has %d jobs", jobs, want)
	}
	// The batch processor may still hold a last batch of stage spans: read until the job
	// tree agrees with the capture or the deadline passes.
	var bad []string
	for {
		all, err := rawcapture.ReadSpans(spans)
		if err != nil {
			t.Fatal(err)
		}
		if bad = raw.CheckCompleteJobs(rawcapture.JobTree(all), true); len(bad) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	for _, b := range bad {
		t.Errorf("file exporter: %s", b)
	}

	// Prometheus: scrape until the job counter has seen every job, then parse it all.
	var fams map[string]*dto.MetricFamily
	for {
		fams = scrape(t, port)
		if f, ok := fams["ghostdriver_jobs_total"]; ok && sumCounter(f) == float64(want) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("scrape never showed ghostdriver_jobs_total = %d; families: %v", want, names(fams))
		}
		time.Sleep(250 * time.Millisecond)
	}
	h, ok := fams["ghostdriver_stage_duration_seconds"]
	if !ok || h.GetType() != dto.MetricType_HISTOGRAM {
		t.Fatalf("no stage duration histogram in the scrape; families: %v", names(fams))
	}
	stages := map[string]bool{}
	for _, m := range h.GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		for _, k := range []string{"ghostdriver_stage_name", "ghostdriver_driver", "ghostdriver_ring"} {
			if labels[k] == "" {
				t.Fatalf("stage histogram series without %q label: %v", k, labels)
			}
		}
		if m.GetHistogram().GetSampleCount() == 0 {
			t.Fatalf("empty histogram series %v", labels)
		}
		stages[labels["ghostdriver_stage_name"]] = true
	}
	for _, s := range []string{"execution", "fence_signal", "ring_emission"} {
		if !stages[s] {
			t.Errorf("no %s series in the stage histogram (have %v)", s, stages)
		}
	}
}

func countSpans(t *testing.T, path string) (jobs, children int) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0
	}
	defer f.Close()
	var um ptrace.JSONUnmarshaler
	r := bufio.NewReaderSize(f, 1<<20)
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 1 && err == nil {
			td, uerr := um.UnmarshalTraces(line)
			if uerr != nil {
				t.Fatalf("file exporter line is not OTLP/JSON: %v", uerr)
			}
			rs := td.ResourceSpans()
			for i := 0; i < rs.Len(); i++ {
				for j := 0; j < rs.At(i).ScopeSpans().Len(); j++ {
					sp := rs.At(i).ScopeSpans().At(j).Spans()
					for k := 0; k < sp.Len(); k++ {
						if sp.At(k).Name() == "gpu.job" {
							jobs++
						} else {
							children++
						}
					}
				}
			}
		}
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

func scrape(t *testing.T, port int) map[string]*dto.MetricFamily {
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", port))
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("scrape is not valid Prometheus text format: %v", err)
	}
	return fams
}

func sumCounter(f *dto.MetricFamily) float64 {
	var s float64
	for _, m := range f.GetMetric() {
		s += m.GetCounter().GetValue()
	}
	return s
}

func names(f map[string]*dto.MetricFamily) string {
	var n []string
	for k := range f {
		n = append(n, k)
	}
	return strings.Join(n, " ")
}

// k8sObject is the part of a Kubernetes manifest the deploy check reads.
type k8sObject struct {
	Kind     string `yaml:"kind"`
	Metadata struct {
		Name      string `yaml:"name"`
		Namespace string `yaml:"namespace"`
	} `yaml:"metadata"`
	Data map[string]string `yaml:"data"`
	Spec struct {
		Selector yaml.Node `yaml:"selector"` // a Service's label map, a workload's {matchLabels}
		Ports    []struct {
			Port int `yaml:"port"`
		} `yaml:"ports"`
		Template struct {
			Metadata struct {
				Labels map[string]string `yaml:"labels"`
			} `yaml:"metadata"`
			Spec struct {
				Containers []struct {
					Name string   `yaml:"name"`
					Args []string `yaml:"args"`
					Env  []struct {
						Name  string `yaml:"name"`
						Value string `yaml:"value"`
					} `yaml:"env"`
					VolumeMounts []struct {
						Name      string `yaml:"name"`
						MountPath string `yaml:"mountPath"`
					} `yaml:"volumeMounts"`
				} `yaml:"containers"`
				Volumes []struct {
					Name      string `yaml:"name"`
					ConfigMap struct {
						Name string `yaml:"name"`
					} `yaml:"configMap"`
				} `yaml:"volumes"`
			} `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

// kustomizedObjects reads deploy/kustomization.yaml as `kubectl apply -k deploy/` would
// (resources, and configMapGenerator entries as ConfigMaps keyed by file name).
func kustomizedObjects(t *testing.T) []k8sObject {
	dir := filepath.Join("..", "deploy")
	b, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var k struct {
		Resources          []string `yaml:"resources"`
		ConfigMapGenerator []struct {
			Name      string   `yaml:"name"`
			Namespace string   `yaml:"namespace"`
			Files     []string `yaml:"files"`
		} `yaml:"configMapGenerator"`
		GeneratorOptions struct {
			DisableNameSuffixHash bool `yaml:"disableNameSuffixHash"`
		} `yaml:"generatorOptions"`
	}
	if err := yaml.Unmarshal(b, &k); err != nil {
		t.Fatalf("kustomization.yaml: %v", err)
	}
	var objs []k8sObject
	for _, r := range k.Resources {
		path := filepath.Join(dir, r)
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		for dec := yaml.NewDecoder(f); ; {
			var o k8sObject
			if err := dec.Decode(&o); err == io.EOF {
				break
			} else if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			objs = append(objs, o)
		}
		f.Close()
	}
	if len(k.ConfigMapGenerator) > 0 && !k.GeneratorOptions.DisableNameSuffixHash {
		t.Fatal("kustomization.yaml: generated ConfigMaps get a hash suffix, but the workloads mount them by name")
	}
	for _, g := range k.ConfigMapGenerator {
		var o k8sObject
		o.Kind, o.Metadata.Name, o.Metadata.Namespace, o.Data = "ConfigMap", g.Name, g.Namespace, map[string]string{}
		for _, file := range g.Files {
			b, err := os.ReadFile(filepath.Join(dir, file))
			if err != nil {
				t.Fatal(err)
			}
			o.Data[filepath.Base(file)] = string(b)
		}
		objs = append(objs, o)
	}
	return objs
}

// workloadConfig returns the collector config the workload of that kind runs: the
// ConfigMap entry behind the container's --config path, and the container's environment
// (a valueFrom entry gets a placeholder: validate only needs ${env:…} to resolve).
func workloadConfig(t *testing.T, objs []k8sObject, kind string) (cfg string, env []string) {
	path := "deploy/ (kustomization)"
	configMaps := map[string]map[string]string{}
	for _, o := range objs {
		if o.Kind == "ConfigMap" {
			configMaps[o.Metadata.Name] = o.Data
		}
	}
	for _, o := range objs {
		if o.Kind != kind {
			continue
		}
		pod := o.Spec.Template.Spec
		if len(pod.Containers) != 1 {
			t.Fatalf("%s %s: %d containers, want the collector alone", kind, o.Metadata.Name, len(pod.Containers))
		}
		c := pod.Containers[0]
		var cfgPath string
		for _, a := range c.Args {
			if v, ok := strings.CutPrefix(a, "--config="); ok {
				cfgPath = v
			}
		}
		if cfgPath == "" {
			t.Fatalf("%s %s: no --config= in args %q", kind, o.Metadata.Name, c.Args)
		}
		for _, e := range c.Env {
			v := e.Value
			if v == "" {
				v = "placeholder-" + strings.ToLower(e.Name)
			}
			env = append(env, e.Name+"="+v)
		}
		for _, m := range c.VolumeMounts {
			key, ok := strings.CutPrefix(cfgPath, strings.TrimSuffix(m.MountPath, "/")+"/")
			if !ok {
				continue
			}
			for _, v := range pod.Volumes {
				if v.Name != m.Name {
					continue
				}
				data, ok := configMaps[v.ConfigMap.Name]
				if !ok {
					t.Fatalf("--config=%s is in volume %q, which is not a ConfigMap of %s", cfgPath, v.Name, path)
				}
				if cfg, ok = data[key]; !ok {
					t.Fatalf("--config=%s: ConfigMap %s has no key %q", cfgPath, v.ConfigMap.Name, key)
				}
				return cfg, env
			}
		}
		t.Fatalf("%s %s: --config=%s is in none of its volume mounts", kind, o.Metadata.Name, cfgPath)
	}
	t.Fatalf("%s: no %s", path, kind)
	return "", nil
}

// The agents' config shipped in deploy/ is valid for the distribution: every component it
// names is in builder-config.yaml and every setting passes the components' own Validate.
// The gateway's config needs the gateway distribution (tail_sampling):
// TestGatewayValidatesDeployConfig (e2e/gateway_test.go) validates it with that.
func TestDistributionValidatesDeployConfigs(t *testing.T) {
	bin := distBinary(t)
	objs := kustomizedObjects(t)
	dir := t.TempDir()
	for name, kind := range map[string]string{"daemonset": "DaemonSet"} {
		t.Run(name, func(t *testing.T) {
			cfg, env := workloadConfig(t, objs, kind)
			path := filepath.Join(dir, name+".yaml")
			if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(bin, "validate", "--config="+path)
			cmd.Env = append(os.Environ(), env...)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%s validate (%s's config): %v\n%s", filepath.Base(bin), kind, err, out)
			}
		})
	}
	// The agents' OTLP endpoint is a Service of the kustomization that selects the
	// gateway's pods on that port.
	agent, _ := workloadConfig(t, objs, "DaemonSet")
	var ac struct {
		Exporters map[string]struct {
			Endpoint string `yaml:"endpoint"`
		} `yaml:"exporters"`
	}
	if err := yaml.Unmarshal([]byte(agent), &ac); err != nil {
		t.Fatal(err)
	}
	endpoint := ac.Exporters["otlp_grpc"].Endpoint
	host, port, ok := strings.Cut(endpoint, ":")
	svcName, ns, _ := strings.Cut(strings.TrimSuffix(host, ".svc"), ".")
	if !ok || svcName == "" || ns == "" {
		t.Fatalf("agent otlp_grpc endpoint %q is not <service>.<namespace>.svc:<port>", endpoint)
	}
	var gatewayLabels map[string]string
	for _, o := range objs {
		if o.Kind == "Deployment" {
			gatewayLabels = o.Spec.Template.Metadata.Labels
		}
	}
	found := false
	for _, o := range objs {
		if o.Kind != "Service" || o.Metadata.Name != svcName || o.Metadata.Namespace != ns {
			continue
		}
		var sel map[string]string
		if err := o.Spec.Selector.Decode(&sel); err != nil || len(sel) == 0 {
			t.Fatalf("Service %s/%s: selector %v (%v)", ns, svcName, sel, err)
		}
		for k, v := range sel {
			if gatewayLabels[k] != v {
				t.Errorf("Service %s/%s selects %s=%s; the gateway's pods are labelled %v", ns, svcName, k, v, gatewayLabels)
			}
		}
		for _, p := range o.Spec.Ports {
			if strconv.Itoa(p.Port) == port {
				found = true
			}
		}
	}
	if !found {
		t.Errorf("no Service %s in namespace %s with port %s (the agents' endpoint %s)", svcName, ns, port, endpoint)
	}
}
