// The busy split on the real amdgpu capture against a second reading of its spans: the
// executing share is, by its priority, the union of the execution spans of each ring, which
// is computed here from the OTLP/JSON with encoding/json and a sort-and-merge.
package report

import (
	"bytes"
	"encoding/json"
	"sort"
	"strconv"
	"testing"

	"github.com/ghostdriver/ghostdriver/internal/timeline"
)

func TestRealCaptureExecutingIsTheUnionOfExecutions(t *testing.T) {
	otlp := captureOTLP(t)
	type span struct {
		Name       string `json:"name"`
		SpanID     string `json:"spanId"`
		Parent     string `json:"parentSpanId"`
		Start      string `json:"startTimeUnixNano"`
		End        string `json:"endTimeUnixNano"`
		Attributes []struct {
			Key   string         `json:"key"`
			Value map[string]any `json:"value"`
		} `json:"attributes"`
	}
	ringOf := map[string]string{} // job span id → "driver/ring"
	var execs []span
	for _, line := range bytes.Split(bytes.TrimSpace(otlp), []byte("\n")) {
		var req struct {
			ResourceSpans []struct {
				ScopeSpans []struct {
					Spans []span `json:"spans"`
				} `json:"scopeSpans"`
			} `json:"resourceSpans"`
		}
		if err := json.Unmarshal(line, &req); err != nil {
			t.Fatal(err)
		}
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					switch s.Name {
					case "gpu.job":
						var driver, ring string
						for _, a := range s.Attributes {
							switch a.Key {
							case "ghostdriver.driver":
								driver, _ = a.Value["stringValue"].(string)
							case "ghostdriver.ring":
								ring, _ = a.Value["stringValue"].(string)
							}
						}
						ringOf[s.SpanID] = driver + "/" + ring
					case "execution":
						execs = append(execs, s)
					}
				}
			}
		}
	}
	type iv struct{ s, e int64 }
	byRing := map[string][]iv{}
	for _, x := range execs {
		s, _ := strconv.ParseInt(x.Start, 10, 64)
		e, _ := strconv.ParseInt(x.End, 10, 64)
		byRing[ringOf[x.Parent]] = append(byRing[ringOf[x.Parent]], iv{s, e})
	}
	want := map[string]int64{}
	for ring, ivs := range byRing {
		sort.Slice(ivs, func(a, b int) bool { return ivs[a].s < ivs[b].s })
		var total, curS, curE int64 = 0, -1, -1
		for _, v := range ivs {
			if v.s > curE {
				total += curE - curS
				curS, curE = v.s, v.e
			} else if v.e > curE {
				curE = v.e
			}
		}
		want[ring] = total + curE - curS
	}
	if len(want) == 0 {
		t.Fatal("no execution spans in the capture's spans")
	}

	set, err := timeline.Read(bytes.NewReader(otlp))
	if err != nil {
		t.Fatal(err)
	}
	sum := Summarize(set)
	for _, r := range sum.Rings {
		if got := r.Shares[timeline.CategoryExecuting]; got != want[r.Ring] {
			t.Errorf("%s: executing %d ns, the union of its execution spans is %d ns", r.Ring, got, want[r.Ring])
		}
		var parts int64 = r.InFlightOnly
		for _, v := range r.Shares {
			parts += v
		}
		if parts != r.Busy || r.Busy > r.Window {
			t.Errorf("%s: shares add up to %d, busy %d, window %d", r.Ring, parts, r.Busy, r.Window)
		}
	}
	if want["amdgpu/gfx"] == 0 {
		t.Error("the gfx ring executed nothing")
	}
}
