package cuda

import (
	"fmt"
	"strings"
)

// Hook status values of a Report entry (the same words as the DRM source's report).
const (
	StatusAttached    = "attached"
	StatusUnavailable = "unavailable"
)

// Entry is one hook the source tried.
type Entry struct {
	Stage  string `json:"stage"` // uprobe, entry_point, xid
	Hook   string `json:"hook"`
	Status string `json:"status"`
	Reason string `json:"reason"` // empty when attached
}

// Report is the CUDA source's capability report.
type Report struct{ Entries []Entry }

func (r *Report) add(stage, hook, status, reason string) {
	r.Entries = append(r.Entries, Entry{Stage: stage, Hook: hook, Status: status, Reason: reason})
}

func (r Report) clone() Report { return Report{Entries: append([]Entry(nil), r.Entries...)} }

// Summary is one line: attached and unavailable hooks per stage.
func (r Report) Summary() string {
	type n struct{ ok, no int }
	counts := map[string]*n{}
	var order []string
	for _, e := range r.Entries {
		c, ok := counts[e.Stage]
		if !ok {
			c = &n{}
			counts[e.Stage] = c
			order = append(order, e.Stage)
		}
		if e.Status == StatusAttached {
			c.ok++
		} else {
			c.no++
		}
	}
	var parts []string
	for _, st := range order {
		parts = append(parts, fmt.Sprintf("%s: %d attached, %d unavailable", st, counts[st].ok, counts[st].no))
	}
	return strings.Join(parts, "; ")
}
