// metadata.yaml, telemetry-extra.yaml and documentation.md against the code: every metric the recorder can emit
// is declared with its unit, type and attributes and vice versa; every span, span
// attribute, link attribute and resource attribute the builder emits is declared and vice
// versa; the documentation names them all. TestMetadataChecksCatchDrift shows each check
// failing on a drifted copy.
package emit

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.yaml.in/yaml/v3"

	"github.com/ghostdriver/ghostdriver/internal/assemble"
	"github.com/ghostdriver/ghostdriver/internal/event"
	"github.com/ghostdriver/ghostdriver/internal/metadata"
	"github.com/ghostdriver/ghostdriver/internal/sample"
)

const repoRoot = "../.."

type mdAttr struct {
	Description string   `yaml:"description"`
	Type        string   `yaml:"type"`
	Enum        []string `yaml:"enum"`
	Overflow    string   `yaml:"overflow"`
	Enabled     *bool    `yaml:"enabled"`
}

type mdSpan struct {
	Description    string   `yaml:"description"`
	Kind           string   `yaml:"kind"`
	Attributes     []string `yaml:"attributes"`
	LinkAttributes []string `yaml:"link_attributes"`
	// Events: span event name → its attribute keys (declared under span_attributes).
	Events map[string][]string `yaml:"events"`
}

type mdMetric struct {
	Enabled     bool   `yaml:"enabled"`
	Stability   string `yaml:"stability"`
	Description string `yaml:"description"`
	Unit        string `yaml:"unit"`
	Histogram   *struct {
		ValueType   string    `yaml:"value_type"`
		Temporality string    `yaml:"aggregation_temporality"`
		Bounds      []float64 `yaml:"bucket_boundaries"`
	} `yaml:"histogram"`
	Sum *struct {
		ValueType   string `yaml:"value_type"`
		Monotonic   bool   `yaml:"monotonic"`
		Temporality string `yaml:"aggregation_temporality"`
	} `yaml:"sum"`
	Gauge *struct {
		ValueType string `yaml:"value_type"`
	} `yaml:"gauge"`
	Attributes []string `yaml:"attributes"`
	// Dimensions: listed in telemetry-extra.yaml's metric_dimensions.
	Dimensions bool `yaml:"-"`
}

// mdFile is metadata.yaml (mdatagen's schema) and, in the fields tagged "-",
// telemetry-extra.yaml: each file is decoded strictly, so an extra section put back into
// metadata.yaml is an error.
type mdFile struct {
	Type      string `yaml:"type"`
	ScopeName string `yaml:"scope_name"`
	Status    struct {
		Class         string              `yaml:"class"`
		Stability     map[string][]string `yaml:"stability"`
		Distributions []string            `yaml:"distributions"`
	} `yaml:"status"`
	ResourceAttributes map[string]mdAttr   `yaml:"resource_attributes"`
	Attributes         map[string]mdAttr   `yaml:"attributes"`
	Metrics            map[string]mdMetric `yaml:"metrics"`
	// Telemetry: the receiver's internal telemetry (receiver/ghostdriverreceiver/telemetry.go,
	// whose tests check the instruments with mdatagen's metadatatest).
	Telemetry struct {
		Metrics map[string]mdTelemetryMetric `yaml:"metrics"`
	} `yaml:"telemetry"`

	Spans          map[string]mdSpan `yaml:"-"`
	SpanAttributes map[string]mdAttr `yaml:"-"`
	Dimensions     map[string]mdAttr `yaml:"-"`
	// DimensionsOfUnknown: metric_dimensions entries naming no metric of metadata.yaml.
	DimensionsOfUnknown []string `yaml:"-"`
}

// mdTelemetryMetric is a metric of metadata.yaml's telemetry section (mdatagen's schema).
type mdTelemetryMetric struct {
	Enabled     bool   `yaml:"enabled"`
	Stability   string `yaml:"stability"`
	Description string `yaml:"description"`
	Unit        string `yaml:"unit"`
	Sum         *struct {
		Async     bool   `yaml:"async"`
		ValueType string `yaml:"value_type"`
		Monotonic bool   `yaml:"monotonic"`
	} `yaml:"sum"`
	Attributes []string `yaml:"attributes"`
}

// mdExtra is telemetry-extra.yaml.
type mdExtra struct {
	Spans            map[string]mdSpan `yaml:"spans"`
	SpanAttributes   map[string]mdAttr `yaml:"span_attributes"`
	Dimensions       map[string]mdAttr `yaml:"dimensions"`
	MetricDimensions []string          `yaml:"metric_dimensions"`
}

// decodeStrict decodes a repository file; a misspelt or misplaced key is an error, not a
// silently ignored field.
func decodeStrict(t *testing.T, name string, v any) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(repoRoot, name))
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	if err := dec.Decode(v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

func loadMetadata(t *testing.T) *mdFile {
	t.Helper()
	var md mdFile
	var extra mdExtra
	decodeStrict(t, "metadata.yaml", &md)
	decodeStrict(t, "telemetry-extra.yaml", &extra)
	md.Spans, md.SpanAttributes, md.Dimensions = extra.Spans, extra.SpanAttributes, extra.Dimensions
	for _, name := range extra.MetricDimensions {
		m, ok := md.Metrics[name]
		if !ok {
			md.DimensionsOfUnknown = append(md.DimensionsOfUnknown, name)
			continue
		}
		m.Dimensions = true
		md.Metrics[name] = m
	}
	return &md
}

// problems collects mismatches.
type problems []string

func (p *problems) addf(format string, args ...any) { *p = append(*p, fmt.Sprintf(format, args...)) }

// instrumentOf describes a yaml metric the way metadata.MetricDesc does.
func (m *mdMetric) instrument() (kind, valueType string, monotonic bool, temporality string) {
	switch {
	case m.Histogram != nil:
		return "histogram", m.Histogram.ValueType, false, m.Histogram.Temporality
	case m.Sum != nil:
		return "sum", m.Sum.ValueType, m.Sum.Monotonic, m.Sum.Temporality
	case m.Gauge != nil:
		return "gauge", m.Gauge.ValueType, false, ""
	}
	return "", "", false, ""
}

// checkDescriptors compares metadata.yaml with the Go tables of internal/metadata.
func checkDescriptors(md *mdFile) problems {
	var p problems
	if md.Type != metadata.Type.String() {
		p.addf("type %q, code %q", md.Type, metadata.Type)
	}
	if md.ScopeName != metadata.ScopeName {
		p.addf("scope_name %q, code %q", md.ScopeName, metadata.ScopeName)
	}
	if md.Status.Class != "receiver" || !reflect.DeepEqual(md.Status.Stability["development"], []string{"traces", "metrics"}) {
		p.addf("status %+v", md.Status)
	}
	for _, name := range md.DimensionsOfUnknown {
		p.addf("telemetry-extra.yaml metric_dimensions: %s is not a metric of metadata.yaml", name)
	}
	cfg := metadata.DefaultMetricsConfig()
	declared := map[string]bool{}
	for _, d := range metadata.Metrics {
		declared[d.Name] = true
		y, ok := md.Metrics[d.Name]
		if !ok {
			p.addf("metric %s: in code, not in metadata.yaml", d.Name)
			continue
		}
		kind, vt, mono, temp := y.instrument()
		wantVT := d.Value.String()
		if d.Instrument == metadata.Histogram {
			wantVT = "double"
		}
		switch {
		case kind != d.Instrument.String():
			p.addf("metric %s: yaml %s, code %s", d.Name, kind, d.Instrument)
		case vt != wantVT:
			p.addf("metric %s: yaml value_type %s, code %s", d.Name, vt, wantVT)
		case mono != d.Monotonic:
			p.addf("metric %s: yaml monotonic %v, code %v", d.Name, mono, d.Monotonic)
		case (d.Instrument == metadata.Sum || d.Instrument == metadata.Histogram) && temp != "cumulative":
			p.addf("metric %s: temporality %q, code cumulative", d.Name, temp)
		}
		// mdatagen's metric stability levels; it refuses a metric without one.
		if !slices.Contains([]string{"development", "alpha", "beta", "stable", "deprecated"}, y.Stability) {
			p.addf("metric %s: stability %q is not an mdatagen metric stability", d.Name, y.Stability)
		}
		if y.Unit != d.Unit {
			p.addf("metric %s: yaml unit %q, code %q", d.Name, y.Unit, d.Unit)
		}
		if strings.TrimSpace(y.Description) != d.Description {
			p.addf("metric %s: description differs:\n yaml %q\n code %q", d.Name, y.Description, d.Description)
		}
		if y.Enabled != cfg.Enabled(d.Name) {
			p.addf("metric %s: yaml enabled %v, default config %v", d.Name, y.Enabled, cfg.Enabled(d.Name))
		}
		if !slices.Equal(y.Attributes, d.Attributes) && !(len(y.Attributes) == 0 && len(d.Attributes) == 0) {
			p.addf("metric %s: yaml attributes %v, code %v", d.Name, y.Attributes, d.Attributes)
		}
		if y.Dimensions != d.Dimensions {
			p.addf("metric %s: yaml dimensions %v, code %v", d.Name, y.Dimensions, d.Dimensions)
		}
		if y.Histogram != nil && !slices.Equal(y.Histogram.Bounds, metadata.DurationBounds) {
			p.addf("metric %s: yaml bounds %v, code %v", d.Name, y.Histogram.Bounds, metadata.DurationBounds)
		}
		for _, a := range y.Attributes {
			if _, ok := md.Attributes[a]; !ok {
				p.addf("metric %s: attribute %s not declared under attributes", d.Name, a)
			}
		}
	}
	for name := range md.Metrics {
		if !declared[name] {
			p.addf("metric %s: in metadata.yaml, not in code", name)
		}
	}
	var dims []string
	for k := range md.Dimensions {
		dims = append(dims, k)
	}
	sort.Strings(dims)
	if allowed := slices.Sorted(slices.Values(metadata.AllowedDimensions)); !slices.Equal(dims, allowed) {
		p.addf("dimensions: yaml %v, code %v", dims, allowed)
	}

	// Enumerations that mirror Go types.
	var stages, kinds []string
	for s := assemble.Stage(0); int(s) < assemble.NumStages; s++ {
		stages = append(stages, s.String())
	}
	for _, k := range event.Kinds() {
		kinds = append(kinds, k.String())
	}
	outcomes := []string{assemble.Completed.String(), assemble.Incomplete.String(), assemble.Evicted.String()}
	for key, want := range map[string][]string{
		metadata.AttrStageName:  stages,
		metadata.AttrEventKind:  kinds,
		metadata.AttrJobOutcome: outcomes,
		metadata.AttrCUDASyncScope: {metadata.CUDASyncScopeStream, metadata.CUDASyncScopeEvent,
			metadata.CUDASyncScopeContext, metadata.CUDASyncScopeNone},
	} {
		if got := md.Attributes[key].Enum; !slices.Equal(got, want) {
			p.addf("attribute %s: enum %v, code %v", key, got, want)
		}
	}
	var spans []string
	for name := range md.Spans {
		spans = append(spans, name)
	}
	if want := append(append([]string{JobSpanName}, stages...), metadata.CUDASpans...); !slices.Equal(slices.Sorted(slices.Values(spans)), slices.Sorted(slices.Values(want))) {
		p.addf("spans: yaml %v, code %v", spans, want)
	}
	return p
}

func typeName(v pcommon.Value) string {
	switch v.Type() {
	case pcommon.ValueTypeStr:
		return "string"
	case pcommon.ValueTypeInt:
		return "int"
	case pcommon.ValueTypeDouble:
		return "double"
	case pcommon.ValueTypeBool:
		return "bool"
	}
	return v.Type().String()
}

// checkValue checks an emitted attribute against its declaration.
func checkValue(p *problems, where, key string, v pcommon.Value, decl mdAttr) {
	got := typeName(v)
	if got != decl.Type && !(got == "string" && decl.Overflow == "string") {
		p.addf("%s: %s is %s, declared %s", where, key, got, decl.Type)
	}
	if len(decl.Enum) > 0 && !slices.Contains(decl.Enum, v.AsString()) {
		p.addf("%s: %s = %q not in enum %v", where, key, v.AsString(), decl.Enum)
	}
}

// coverage records what an output used, for the "declared ⇒ emitted" direction.
type coverage map[string]bool

// checkEmittedMetrics checks every emitted metric and data point against metadata.yaml.
func checkEmittedMetrics(md *mdFile, out pmetric.Metrics, cov coverage) problems {
	var p problems
	for name, m := range metricsByName(out) {
		cov[name] = true
		y, ok := md.Metrics[name]
		if !ok {
			p.addf("emitted metric %s not declared", name)
			continue
		}
		kind, vt, mono, temp := y.instrument()
		if m.Unit() != y.Unit || m.Description() != strings.TrimSpace(y.Description) {
			p.addf("metric %s: emitted unit %q / description differ from metadata.yaml", name, m.Unit())
		}
		var attrs []pcommon.Map
		switch m.Type() {
		case pmetric.MetricTypeHistogram:
			if kind != "histogram" || m.Histogram().AggregationTemporality() != pmetric.AggregationTemporalityCumulative {
				p.addf("metric %s: emitted cumulative histogram, declared %s", name, kind)
			}
			for i := 0; i < m.Histogram().DataPoints().Len(); i++ {
				attrs = append(attrs, m.Histogram().DataPoints().At(i).Attributes())
			}
		case pmetric.MetricTypeSum:
			s := m.Sum()
			if kind != "sum" || s.IsMonotonic() != mono || temp != "cumulative" || s.AggregationTemporality() != pmetric.AggregationTemporalityCumulative {
				p.addf("metric %s: emitted sum monotonic=%v %v, declared %s monotonic=%v %s", name, s.IsMonotonic(), s.AggregationTemporality(), kind, mono, temp)
			}
			for i := 0; i < s.DataPoints().Len(); i++ {
				checkNumberType(&p, name, s.DataPoints().At(i), vt)
				attrs = append(attrs, s.DataPoints().At(i).Attributes())
			}
		case pmetric.MetricTypeGauge:
			if kind != "gauge" {
				p.addf("metric %s: emitted gauge, declared %s", name, kind)
			}
			for i := 0; i < m.Gauge().DataPoints().Len(); i++ {
				checkNumberType(&p, name, m.Gauge().DataPoints().At(i), vt)
				attrs = append(attrs, m.Gauge().DataPoints().At(i).Attributes())
			}
		default:
			p.addf("metric %s: emitted as %v", name, m.Type())
		}
		for _, a := range attrs {
			for k, v := range a.All() {
				decl, isDefault := md.Attributes[k]
				dim, isDim := md.Dimensions[k]
				switch {
				case slices.Contains(y.Attributes, k) && isDefault:
					checkValue(&p, "metric "+name, k, v, decl)
				case y.Dimensions && isDim:
					checkValue(&p, "metric "+name, k, v, dim)
				default:
					p.addf("metric %s: data point attribute %s not declared for it", name, k)
				}
				cov[name+"/"+k] = true
			}
		}
	}
	return p
}

func checkNumberType(p *problems, name string, dp pmetric.NumberDataPoint, vt string) {
	got := map[pmetric.NumberDataPointValueType]string{pmetric.NumberDataPointValueTypeInt: "int", pmetric.NumberDataPointValueTypeDouble: "double"}[dp.ValueType()]
	if got != vt {
		p.addf("metric %s: emitted %s value, declared %s", name, got, vt)
	}
}

// checkEmittedSpans checks every emitted span, attribute, link and resource.
func checkEmittedSpans(md *mdFile, td ptrace.Traces, cov coverage) problems {
	var p problems
	for _, e := range flatten(td) {
		for k, v := range e.res.All() {
			cov["resource/"+k] = true
			decl, ok := md.ResourceAttributes[k]
			if !ok {
				p.addf("resource attribute %s not declared", k)
				continue
			}
			checkValue(&p, "resource", k, v, decl)
		}
		name := e.span.Name()
		cov["span/"+name] = true
		y, ok := md.Spans[name]
		if !ok {
			p.addf("span %s not declared", name)
			continue
		}
		if kind := strings.ToLower(e.span.Kind().String()); kind != y.Kind {
			p.addf("span %s: kind %s, declared %s", name, e.span.Kind(), y.Kind)
		}
		for k, v := range e.span.Attributes().All() {
			cov["span/"+name+"/"+k] = true
			if !slices.Contains(y.Attributes, k) {
				p.addf("span %s: attribute %s not declared for it", name, k)
			}
			decl, ok := md.SpanAttributes[k]
			if !ok {
				p.addf("span attribute %s not declared under span_attributes", k)
				continue
			}
			checkValue(&p, "span "+name, k, v, decl)
		}
		for i := 0; i < e.span.Events().Len(); i++ {
			ev := e.span.Events().At(i)
			cov["event/"+name+"/"+ev.Name()] = true
			attrs, ok := y.Events[ev.Name()]
			if !ok {
				p.addf("span %s: event %s not declared", name, ev.Name())
			}
			for k, v := range ev.Attributes().All() {
				cov["event/"+name+"/"+ev.Name()+"/"+k] = true
				if !slices.Contains(attrs, k) {
					p.addf("span %s: event %s attribute %s not declared", name, ev.Name(), k)
				}
				checkValue(&p, "event "+ev.Name(), k, v, md.SpanAttributes[k])
			}
		}
		for i := 0; i < e.span.Links().Len(); i++ {
			for k, v := range e.span.Links().At(i).Attributes().All() {
				cov["link/"+name+"/"+k] = true
				if !slices.Contains(y.LinkAttributes, k) {
					p.addf("span %s: link attribute %s not declared", name, k)
				}
				checkValue(&p, "link of "+name, k, v, md.SpanAttributes[k])
			}
		}
	}
	return p
}

// checkCoverage is the other direction: everything declared was emitted by the fixtures.
func checkCoverage(md *mdFile, cov coverage) problems {
	var p problems
	for name, m := range md.Metrics {
		if !cov[name] {
			p.addf("declared metric %s never emitted", name)
		}
		for _, a := range m.Attributes {
			if !cov[name+"/"+a] {
				p.addf("declared attribute %s of metric %s never emitted", a, name)
			}
		}
	}
	for k := range md.ResourceAttributes {
		if !cov["resource/"+k] {
			p.addf("declared resource attribute %s never emitted", k)
		}
	}
	for name, s := range md.Spans {
		if !cov["span/"+name] {
			p.addf("declared span %s never emitted", name)
		}
		for _, a := range s.Attributes {
			if !cov["span/"+name+"/"+a] {
				p.addf("declared attribute %s of span %s never emitted", a, name)
			}
			if _, ok := md.SpanAttributes[a]; !ok {
				p.addf("span %s lists %s, not declared under span_attributes", name, a)
			}
		}
		for _, a := range s.LinkAttributes {
			if !cov["link/"+name+"/"+a] {
				p.addf("declared link attribute %s of span %s never emitted", a, name)
			}
		}
		for ev, attrs := range s.Events {
			if !cov["event/"+name+"/"+ev] {
				p.addf("declared event %s of span %s never emitted", ev, name)
			}
			for _, a := range attrs {
				if !cov["event/"+name+"/"+ev+"/"+a] {
					p.addf("declared attribute %s of event %s never emitted", a, ev)
				}
			}
		}
	}
	for k := range md.SpanAttributes {
		used := false
		for _, s := range md.Spans {
			used = used || slices.Contains(s.Attributes, k) || slices.Contains(s.LinkAttributes, k)
			for _, attrs := range s.Events {
				used = used || slices.Contains(attrs, k)
			}
		}
		if !used {
			p.addf("span attribute %s declared but on no span", k)
		}
	}
	return p
}

// checkDocumentation requires documentation.md to name every metric (as a heading), every
// attribute key and every span.
func checkDocumentation(md *mdFile, doc string) problems {
	var p problems
	for name := range md.Metrics {
		if !strings.Contains(doc, "\n### "+name+"\n") {
			p.addf("documentation.md: no heading for metric %s", name)
		}
	}
	for name := range md.Telemetry.Metrics {
		if !strings.Contains(doc, "\n### otelcol_"+name+"\n") {
			p.addf("documentation.md: no heading for internal telemetry metric otelcol_%s", name)
		}
	}
	var keys []string
	for _, m := range []map[string]mdAttr{md.Attributes, md.SpanAttributes, md.ResourceAttributes, md.Dimensions} {
		for k := range m {
			keys = append(keys, k)
		}
	}
	for name, s := range md.Spans {
		keys = append(keys, name)
		for ev := range s.Events {
			keys = append(keys, ev)
		}
	}
	for _, k := range keys {
		if !strings.Contains(doc, "`"+k+"`") {
			p.addf("documentation.md: %s not mentioned", k)
		}
	}
	return p
}

// fullOutputs renders every fixture with every option that adds something, so that
// everything declared can be emitted.
func fullOutputs() (ptrace.Traces, pmetric.Metrics) {
	b := NewSpanBuilder(testClock, WithHostName("gpu-node-7"))
	cfg := metadata.DefaultMetricsConfig()
	cfg.Dimensions = metadata.AllowedDimensions
	m := NewMetricsRecorder(cfg, t0)
	for _, j := range allJobs() {
		b.Append(j)
		m.RecordJob(j, testClock)
	}
	// a job the sampler kept under an unsampled application span: detached, linked to it
	b.AppendSampled(enrichedJob(), Sampled{TraceState: "ot=th:0", Detach: true})
	m.Watermark(100_000)
	var src event.SourceStats
	src.Events[event.JobQueue] = 1
	src.Unknown = map[string]uint64{"sched_switch": 2}
	src.Malformed, src.Lost = 1, 1
	src.KernelDrops = map[string]uint64{event.KernelDropProcessTableFull: 1}
	src.Hooks = []event.HookStatus{{Stage: "ioctl", Hook: "fentry/drm_ioctl", Status: "unavailable", Reason: "no fentry"}}
	td, md := b.Take(), m.Collect(t1, src, AssemblerCounters{EvictedTimeout: 1, EvictedCap: 1, Pending: 1, DroppedSpans: 1, Late: 1,
		Unmatched: map[string]uint64{event.FenceSignaled.String(): 3},
		Context:   ContextCounters{Enriched: true, Held: [4]uint64{1, 1, 1, 1}, Rediscovery: [3]uint64{1, 1, 1}}})
	// the sampler's metrics: every reason of both kinds, kept and sampled out
	var st sample.Stats
	for k := range sample.NumKinds {
		for r := range sample.NumReasons {
			st.SpansKept[k][r], st.SpansDropped[k][r] = 9, 9
		}
	}
	st.Probability = 0.25
	AppendSamplingMetrics(md, metadata.DefaultMetricsConfig(), t0, t1, st)
	if cudaOutputs != nil {
		ctd, cmd := cudaOutputs()
		ctd.ResourceSpans().MoveAndAppendTo(td.ResourceSpans())
		cmd.ResourceMetrics().MoveAndAppendTo(md.ResourceMetrics())
	}
	return td, md
}

// cudaOutputs renders the CUDA fixtures (internal/emit/cudaspans); set by
// cuda_fixture_test.go where internal/cuda builds (Linux, x86). Elsewhere the CUDA part of
// metadata.yaml is only checked for consistency, not for coverage.
var cudaOutputs func() (ptrace.Traces, pmetric.Metrics)

// isCUDAProblem tells the coverage problems of the CUDA path apart.
func isCUDAProblem(s string) bool {
	return strings.Contains(s, "cuda") || strings.Contains(s, "nvidia.xid")
}

func report(t *testing.T, what string, p problems) {
	t.Helper()
	for _, s := range p {
		t.Errorf("%s: %s", what, s)
	}
}

func TestMetadataYAMLMatchesCode(t *testing.T) {
	md := loadMetadata(t)
	report(t, "descriptors", checkDescriptors(md))

	td, out := fullOutputs()
	cov := coverage{}
	report(t, "emitted metrics", checkEmittedMetrics(md, out, cov))
	report(t, "emitted spans", checkEmittedSpans(md, td, cov))
	coverageProblems := checkCoverage(md, cov)
	if cudaOutputs == nil {
		coverageProblems = slices.DeleteFunc(coverageProblems, isCUDAProblem)
	}
	report(t, "coverage", coverageProblems)

	doc, err := os.ReadFile(filepath.Join(repoRoot, "documentation.md"))
	if err != nil {
		t.Fatal(err)
	}
	report(t, "documentation", checkDocumentation(md, string(doc)))
}

// Each check reports a drifted metadata.yaml: the test above can fail.
func TestMetadataChecksCatchDrift(t *testing.T) {
	td, out := fullOutputs()
	for name, drift := range map[string]func(md *mdFile){
		"metric missing": func(md *mdFile) { delete(md.Metrics, metadata.MetricJobs) },
		"unit changed": func(md *mdFile) {
			m := md.Metrics[metadata.MetricStageDuration]
			m.Unit = "ms"
			md.Metrics[metadata.MetricStageDuration] = m
		},
		"sum declared as gauge": func(md *mdFile) {
			m := md.Metrics[metadata.MetricJobs]
			m.Gauge, m.Sum = &struct {
				ValueType string `yaml:"value_type"`
			}{"int"}, nil
			md.Metrics[metadata.MetricJobs] = m
		},
		"metric attribute dropped": func(md *mdFile) {
			m := md.Metrics[metadata.MetricJobs]
			m.Attributes = m.Attributes[:2]
			md.Metrics[metadata.MetricJobs] = m
		},
		"extra metric": func(md *mdFile) {
			md.Metrics["ghostdriver.imaginary"] = mdMetric{Unit: "1", Gauge: &struct {
				ValueType string `yaml:"value_type"`
			}{"int"}}
		},
		"span attribute undeclared": func(md *mdFile) { delete(md.SpanAttributes, metadata.AttrThreadID) },
		"span attribute off the span": func(md *mdFile) {
			s := md.Spans[JobSpanName]
			s.Attributes = slices.DeleteFunc(slices.Clone(s.Attributes), func(k string) bool { return k == metadata.AttrRing })
			md.Spans[JobSpanName] = s
		},
		"span attribute type": func(md *mdFile) {
			a := md.SpanAttributes[metadata.AttrFenceSeqno]
			a.Overflow = ""
			md.SpanAttributes[metadata.AttrFenceSeqno] = a
		},
		"enum value missing": func(md *mdFile) {
			a := md.SpanAttributes[metadata.AttrContextTier]
			a.Enum = a.Enum[:2]
			md.SpanAttributes[metadata.AttrContextTier] = a
		},
		"declared, never emitted": func(md *mdFile) {
			md.SpanAttributes["ghostdriver.imaginary"] = mdAttr{Type: "string"}
			s := md.Spans["execution"]
			s.Attributes = append(slices.Clone(s.Attributes), "ghostdriver.imaginary")
			md.Spans["execution"] = s
		},
		"span kind changed":          func(md *mdFile) { s := md.Spans["ioctl"]; s.Kind = "consumer"; md.Spans["ioctl"] = s },
		"resource attribute missing": func(md *mdFile) { delete(md.ResourceAttributes, metadata.AttrServiceName) },
		"link attribute missing":     func(md *mdFile) { s := md.Spans[JobSpanName]; s.LinkAttributes = nil; md.Spans[JobSpanName] = s },
		"metric stability missing": func(md *mdFile) {
			m := md.Metrics[metadata.MetricJobs]
			m.Stability = ""
			md.Metrics[metadata.MetricJobs] = m
		},
		"histogram temporality": func(md *mdFile) {
			m := md.Metrics[metadata.MetricJobDuration]
			h := *m.Histogram
			h.Temporality = "delta"
			m.Histogram = &h
			md.Metrics[metadata.MetricJobDuration] = m
		},
		"dimensions mark dropped": func(md *mdFile) {
			m := md.Metrics[metadata.MetricJobs]
			m.Dimensions = false
			md.Metrics[metadata.MetricJobs] = m
		},
		"dimensions of an unknown metric": func(md *mdFile) { md.DimensionsOfUnknown = []string{"ghostdriver.imaginary"} },
		"scope name":                      func(md *mdFile) { md.ScopeName = "ghostdriver" },
	} {
		md := loadMetadata(t)
		drift(md)
		cov := coverage{}
		var p problems
		p = append(p, checkDescriptors(md)...)
		p = append(p, checkEmittedMetrics(md, out, cov)...)
		p = append(p, checkEmittedSpans(md, td, cov)...)
		p = append(p, checkCoverage(md, cov)...)
		if len(p) == 0 {
			t.Errorf("%s: drift not detected", name)
		}
	}

	md := loadMetadata(t)
	if p := checkDocumentation(md, "# nothing here\n"); len(p) == 0 {
		t.Error("an empty documentation.md passed")
	}
}
