// Package report writes one self-contained HTML file about a set of GPU jobs: a zoomable
// per-ring timeline (canvas, drawn by inline script from the jobs embedded as JSON) and
// the tables of where each ring's busy time went and what each stage and tenant cost.
// Nothing is fetched: the script, the style and the data are inline, and the page's
// Content-Security-Policy forbids any request.
package report

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"sort"
	"time"

	"github.com/ghostdriver/ghostdriver/internal/timeline"
)

//go:embed report.html.tmpl
var pageTemplate string

//go:embed report.js
var pageScript string

//go:embed report.css
var pageStyle string

// Options describe the input for the page's header.
type Options struct {
	Title  string // e.g. the input file's name
	Source string // what the jobs were read from, in words
	// SMI: nvidia-smi's utilization.gpu samples to set beside the GPU timeline (ReadSMI);
	// SMIFrom names where they came from.
	SMI     []SMISample
	SMIFrom string
}

// Summary is what the report shows in numbers (also returned for the CLI to print).
type Summary struct {
	Jobs, Failed   int
	Rings          []RingBreakdown
	RingStages     map[string][]StageRow
	Tenants        []TenantRow
	StageNames     []string // every stage name seen, in first-seen order
	StageSpans     int
	MeasuredStages int
	OtherSpans     int
	OrphanStages   int
	Window         int64
	// GPU: the NVIDIA GPU timeline per process and device (gpu.go).
	GPU []GPURow
}

// Summarize computes the report's numbers.
func Summarize(set *timeline.Set) *Summary { return summarize(set, nil) }

func summarize(set *timeline.Set, smi []SMISample) *Summary {
	s := &Summary{RingStages: map[string][]StageRow{}, OtherSpans: set.OtherSpans, OrphanStages: set.OrphanStages}
	start, end := set.Extent()
	s.Window = end - start
	byRing := map[string][]*timeline.Job{}
	byTenant := map[string][]*timeline.Job{}
	var ringNames, tenantNames []string
	seen := map[string]bool{}
	for i := range set.Jobs {
		j := &set.Jobs[i]
		s.Jobs++
		if j.Failed() {
			s.Failed++
		}
		r := j.Ring.String()
		if _, ok := byRing[r]; !ok {
			ringNames = append(ringNames, r)
		}
		byRing[r] = append(byRing[r], j)
		t := j.Tenant()
		if _, ok := byTenant[t]; !ok {
			tenantNames = append(tenantNames, t)
		}
		byTenant[t] = append(byTenant[t], j)
		for _, st := range j.Stages {
			s.StageSpans++
			if st.Source == "measured" {
				s.MeasuredStages++
			}
			if !seen[st.Name] {
				seen[st.Name] = true
				s.StageNames = append(s.StageNames, st.Name)
			}
		}
	}
	sort.Strings(ringNames)
	for _, r := range ringNames {
		s.Rings = append(s.Rings, busyBreakdown(r, byRing[r], s.Window))
		s.RingStages[r] = stageRows(byRing[r])
	}
	for _, t := range tenantNames {
		s.Tenants = append(s.Tenants, tenantRow(t, byTenant[t]))
	}
	sort.SliceStable(s.Tenants, func(a, b int) bool { return s.Tenants[a].InFlight > s.Tenants[b].InFlight })
	s.GPU = gpuRows(set.GPU, smi)
	return s
}

// timelineData is what the page's script draws: times in ns relative to Origin.
type timelineData struct {
	Origin   string     `json:"origin_unix_nano"`
	Extent   int64      `json:"extent"`
	Stages   []string   `json:"stages"`
	Category []int      `json:"category"` // per stage: index in timeline.Categories
	CatNames []string   `json:"category_names"`
	Tenants  []string   `json:"tenants"`
	Rings    []ringData `json:"rings"`
	Jobs     int        `json:"jobs"`
	Exec     string     `json:"execution_stage"`
}

type ringData struct {
	Name string `json:"name"`
	// Jobs: [queued, end, tenant index, failed 0/1, fence, [[stage index, start, end], ...]]
	Jobs [][]any `json:"jobs"`
}

func buildData(set *timeline.Set, sum *Summary) timelineData {
	origin, end := set.Extent()
	for i := range set.Jobs {
		for _, st := range set.Jobs[i].Stages {
			origin = min(origin, st.Start)
		}
	}
	d := timelineData{Origin: fmt.Sprint(origin), Extent: end - origin, Stages: sum.StageNames, Jobs: len(set.Jobs),
		Exec: timeline.ExecutionStage}
	stageIdx := map[string]int{}
	catIdx := map[timeline.Category]int{}
	for i, c := range timeline.Categories {
		catIdx[c] = i
		d.CatNames = append(d.CatNames, c.String())
	}
	for i, n := range sum.StageNames {
		stageIdx[n] = i
		d.Category = append(d.Category, catIdx[timeline.StageCategory(n)])
	}
	tenantIdx := map[string]int{}
	ringIdx := map[string]int{}
	for _, r := range sum.Rings {
		ringIdx[r.Ring] = len(d.Rings)
		d.Rings = append(d.Rings, ringData{Name: r.Ring, Jobs: [][]any{}})
	}
	for i := range set.Jobs {
		j := &set.Jobs[i]
		t := j.Tenant()
		ti, ok := tenantIdx[t]
		if !ok {
			ti = len(d.Tenants)
			tenantIdx[t] = ti
			d.Tenants = append(d.Tenants, t)
		}
		failed := 0
		if j.Failed() {
			failed = 1
		}
		stages := make([][3]int64, 0, len(j.Stages))
		for _, st := range j.Stages {
			stages = append(stages, [3]int64{int64(stageIdx[st.Name]), st.Start - origin, max(st.End, st.Start) - origin})
		}
		r := &d.Rings[ringIdx[j.Ring.String()]]
		r.Jobs = append(r.Jobs, []any{j.Queued() - origin, max(j.End, j.Queued()) - origin, ti, failed, j.Fence, stages})
	}
	return d
}

// Write writes the report of set to w and returns its numbers.
func Write(w io.Writer, set *timeline.Set, opt Options) (*Summary, error) {
	sum := summarize(set, opt.SMI)
	data, err := json.Marshal(buildData(set, sum)) // escapes <, > and & for a script element
	if err != nil {
		return nil, err
	}
	funcs := template.FuncMap{
		"dur": fmtDur,
		"pct": func(part, whole int64) string {
			if whole <= 0 {
				return "–"
			}
			return fmt.Sprintf("%.1f %%", 100*float64(part)/float64(whole))
		},
		"width": func(part, whole int64) template.CSS {
			if whole <= 0 {
				return "width:0"
			}
			return template.CSS(fmt.Sprintf("width:%.3f%%", 100*float64(part)/float64(whole)))
		},
		"cats":     func() []timeline.Category { return timeline.Categories },
		"frac":     func(f float64) string { return fmt.Sprintf("%.1f %%", 100*f) },
		"share":    func(m map[timeline.Category]int64, c timeline.Category) int64 { return m[c] },
		"catClass": func(c timeline.Category) string { return fmt.Sprintf("c%d", int(c)) },
		"stageSum": func(rows []StageRow, name string) int64 {
			for _, r := range rows {
				if r.Stage == name {
					return r.Total
				}
			}
			return 0
		},
	}
	t, err := template.New("report").Funcs(funcs).Parse(pageTemplate)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	err = t.Execute(&buf, map[string]any{
		"Opt":    opt,
		"Sum":    sum,
		"Data":   template.JS(data),
		"Script": template.JS(pageScript),
		"Style":  template.CSS(pageStyle),
	})
	if err != nil {
		return nil, err
	}
	_, err = w.Write(buf.Bytes())
	return sum, err
}

// fmtDur prints ns the way the CLI summary does (time.Duration), rounded to the µs above 1 ms.
func fmtDur(ns int64) string {
	d := time.Duration(ns)
	if d >= time.Millisecond {
		d = d.Round(time.Microsecond)
	}
	return d.String()
}
