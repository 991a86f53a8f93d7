// The span model's tables (spanmodel.go) against the equality runs of jobencoder_test.go:
// every row's attribute is compared there, in every value form, and every attribute the
// builder sets comes from a row or from a tenant.
package emit

import (
	"slices"
	"sync"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/ghostdriver/ghostdriver/internal/assemble"
	"github.com/ghostdriver/ghostdriver/internal/metadata"
)

// attrCoverage is what an equality run compared: by role ("job" for the gpu.job span,
// "stage" for a stage span, "link" for a link), each attribute key and the value types
// it took.
type attrCoverage map[string]map[string]map[pcommon.ValueType]bool

func (c attrCoverage) put(role string, m pcommon.Map) {
	if c[role] == nil {
		c[role] = map[string]map[pcommon.ValueType]bool{}
	}
	m.Range(func(k string, v pcommon.Value) bool {
		if c[role][k] == nil {
			c[role][k] = map[pcommon.ValueType]bool{}
		}
		c[role][k][v.Type()] = true
		return true
	})
}

func (c attrCoverage) add(td ptrace.Traces) {
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		sss := rss.At(i).ScopeSpans()
		for k := 0; k < sss.Len(); k++ {
			spans := sss.At(k).Spans()
			for n := 0; n < spans.Len(); n++ {
				sp := spans.At(n)
				role := "stage"
				if sp.Name() == JobSpanName {
					role = "job"
				}
				c.put(role, sp.Attributes())
				for l := 0; l < sp.Links().Len(); l++ {
					c.put("link", sp.Links().At(l).Attributes())
				}
			}
		}
	}
}

func (c attrCoverage) merge(o attrCoverage) {
	for role, keys := range o {
		if c[role] == nil {
			c[role] = map[string]map[pcommon.ValueType]bool{}
		}
		for k, types := range keys {
			if c[role][k] == nil {
				c[role][k] = map[pcommon.ValueType]bool{}
			}
			for ty := range types {
				c[role][k][ty] = true
			}
		}
	}
}

// The equality runs are the one guard of the span model (spanmodel.go): they must compare
// every row of its tables, in every value form a row can take (a kernel uint64 above
// MaxInt64 becomes a string), or a new row would pass untested.
func TestJobEncoderComparesEveryTableAttribute(t *testing.T) {
	cov := attrCoverage{}
	for _, c := range encoderCases {
		cov.merge(sameAsBuilder(t, c, [][]*assemble.Job{allJobs()}, nil))
		cov.merge(sameAsBuilder(t, c, randomBatches(), nil))
	}
	check := func(role string, keys []string) {
		for _, k := range keys {
			if len(cov[role][k]) == 0 {
				t.Errorf("no %s span in the equality runs carries %s: add a fixture job that sets it", role, k)
			}
		}
	}
	check("job", tableKeys(jobAttributes[:]))
	check("stage", tableKeys(stageAttributes[:]))
	check("link", tableKeys(linkAttributes[:]))
	for _, k := range []string{metadata.AttrHWFenceSeqno, metadata.AttrJobID, metadata.AttrJobLostEventCount} {
		if ty := cov["job"][k]; !ty[pcommon.ValueTypeInt] || !ty[pcommon.ValueTypeStr] {
			t.Errorf("%s was compared as %v: want both an int and a uint64 above MaxInt64 (a string)", k, ty)
		}
	}
	// and the tables hold every attribute the builder sets
	for role, keys := range cov {
		var table []string
		switch role {
		case "job":
			table = tableKeys(jobAttributes[:])
		case "stage":
			table = tableKeys(stageAttributes[:])
		case "link":
			table = tableKeys(linkAttributes[:])
		}
		for k := range keys {
			if !slices.Contains(table, k) && !tenantKey(k) {
				t.Errorf("%s spans carry %s, which no table row of spanmodel.go sets", role, k)
			}
		}
	}
}

func tableKeys[T any](table []ownAttr[T]) []string {
	var keys []string
	for _, row := range table {
		keys = append(keys, row.key.name)
	}
	return keys
}

// tenantKey reports whether k is a tenant attribute of the fixtures (Job.Attrs), which
// the equality runs compare too but no table sets.
func tenantKey(k string) bool {
	tenantKeysOnce.Do(func() {
		tenantKeys = map[string]bool{}
		for _, batch := range append(randomBatches(), allJobs()) {
			for _, j := range batch {
				for _, a := range j.Attrs {
					tenantKeys[a.Key] = true
				}
			}
		}
	})
	return tenantKeys[k]
}

var (
	tenantKeysOnce sync.Once
	tenantKeys     map[string]bool
)
