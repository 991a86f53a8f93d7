// The numbers of the report: per ring, where its busy time went (the utilization
// paradox: a ring reported busy while a job is in flight on it, against the time its
// hardware executes, waits on fences, or spends in driver work), and per ring, stage and
// tenant the stage durations.

package report

import (
	"sort"

	"github.com/ghostdriver/ghostdriver/internal/timeline"
)

// interval is [start, end) in ns.
type interval struct{ start, end int64 }

// RingBreakdown is one ring's busy time split into exclusive shares.
type RingBreakdown struct {
	Ring   string
	Jobs   int
	Failed int // incomplete or evicted (error status)
	// Window is the input's extent (the same for every ring): first job start to last end.
	Window int64
	// Busy is the time at least one job was in flight on the ring (queued → finished):
	// what a "GPU busy" counter that counts submitted work reports.
	Busy int64
	// Shares split Busy: each instant goes to the first category (timeline.Categories
	// order) that has a stage of a job of this ring active then; InFlightOnly is busy
	// time with no stage active (a job in flight between stages the input did not see).
	Shares       map[timeline.Category]int64
	InFlightOnly int64
}

// StageRow is one stage's durations on one ring, or of one tenant.
type StageRow struct {
	Stage    string
	Category timeline.Category
	Count    int
	Measured int // both bounds from hooks (ghostdriver.stage.source = measured)
	Total    int64
	P50, P99 int64
	Max      int64
}

// Mean is Total / Count.
func (r StageRow) Mean() int64 {
	if r.Count == 0 {
		return 0
	}
	return r.Total / int64(r.Count)
}

// TenantRow is what one tenant's jobs spent, summed over its jobs (tenants overlap in
// time, so these are sums, not shares of a window).
type TenantRow struct {
	Tenant   string
	Jobs     int
	Failed   int
	InFlight int64                       // Σ finish − queue
	ByCat    map[timeline.Category]int64 // Σ stage durations by category
	Stages   []StageRow
}

// busyBreakdown computes a ring's breakdown from its jobs.
func busyBreakdown(name string, jobs []*timeline.Job, window int64) RingBreakdown {
	rb := RingBreakdown{Ring: name, Jobs: len(jobs), Window: window, Shares: map[timeline.Category]int64{}}
	type edge struct {
		at    int64
		cat   int // index in timeline.Categories, or -1 for "in flight"
		delta int
	}
	var edges []edge
	catIndex := map[timeline.Category]int{}
	for i, c := range timeline.Categories {
		catIndex[c] = i
	}
	for _, j := range jobs {
		if j.Failed() {
			rb.Failed++
		}
		if q, e := j.Queued(), j.End; e > q {
			edges = append(edges, edge{q, -1, +1}, edge{e, -1, -1})
		}
		for _, s := range j.Stages {
			if s.End > s.Start {
				c := catIndex[timeline.StageCategory(s.Name)]
				edges = append(edges, edge{s.Start, c, +1}, edge{s.End, c, -1})
			}
		}
	}
	sort.Slice(edges, func(a, b int) bool { return edges[a].at < edges[b].at })
	active := make([]int, len(timeline.Categories))
	inFlight := 0
	for i := 0; i < len(edges); {
		at := edges[i].at
		for ; i < len(edges) && edges[i].at == at; i++ {
			if edges[i].cat < 0 {
				inFlight += edges[i].delta
			} else {
				active[edges[i].cat] += edges[i].delta
			}
		}
		if i == len(edges) || inFlight == 0 {
			continue
		}
		d := edges[i].at - at
		rb.Busy += d
		share := -1
		for c, n := range active {
			if n > 0 {
				share = c
				break
			}
		}
		if share < 0 {
			rb.InFlightOnly += d
		} else {
			rb.Shares[timeline.Categories[share]] += d
		}
	}
	return rb
}

// stageRows summarises the stages of jobs, in order of first appearance of each name.
func stageRows(jobs []*timeline.Job) []StageRow {
	idx := map[string]int{}
	var rows []StageRow
	var durs [][]int64
	for _, j := range jobs {
		for _, s := range j.Stages {
			i, ok := idx[s.Name]
			if !ok {
				i = len(rows)
				idx[s.Name] = i
				rows = append(rows, StageRow{Stage: s.Name, Category: timeline.StageCategory(s.Name)})
				durs = append(durs, nil)
			}
			d := max(s.End-s.Start, 0)
			r := &rows[i]
			r.Count++
			if s.Source == "measured" {
				r.Measured++
			}
			r.Total += d
			r.Max = max(r.Max, d)
			durs[i] = append(durs[i], d)
		}
	}
	for i := range rows {
		d := durs[i]
		sort.Slice(d, func(a, b int) bool { return d[a] < d[b] })
		rows[i].P50 = quantile(d, 0.50)
		rows[i].P99 = quantile(d, 0.99)
	}
	return rows
}

// quantile is the nearest-rank quantile of sorted values.
func quantile(sorted []int64, q float64) int64 {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(q*float64(len(sorted)) + 0.999999999)
	rank = min(max(rank, 1), len(sorted))
	return sorted[rank-1]
}

func tenantRow(name string, jobs []*timeline.Job) TenantRow {
	tr := TenantRow{Tenant: name, Jobs: len(jobs), ByCat: map[timeline.Category]int64{}}
	for _, j := range jobs {
		if j.Failed() {
			tr.Failed++
		}
		tr.InFlight += max(j.End-j.Queued(), 0)
		for _, s := range j.Stages {
			tr.ByCat[timeline.StageCategory(s.Name)] += max(s.End-s.Start, 0)
		}
	}
	tr.Stages = stageRows(jobs)
	return tr
}
