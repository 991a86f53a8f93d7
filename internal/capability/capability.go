// Package capability is the capability report of a live source: for each stage, which
// hook measures it, or why none does. The DRM source (internal/probe) and the CUDA
// source (internal/cuda) fill one, the graph (internal/graph) logs and keeps it, and
// `ghostdriver doctor`, `live` and `cuda` print it; the same entries become the
// ghostdriver.source.hooks metric.
package capability

import "encoding/json"

// Hook status values of an Entry.
const (
	StatusAttached    = "attached"
	StatusUnavailable = "unavailable"
)

// Sources of a Report.
const (
	SourceDRM  = "drm"
	SourceCUDA = "cuda"
)

// Entry is one hook a source tried (or deliberately did not try) for a stage.
type Entry struct {
	Stage  string `json:"stage"`
	Hook   string `json:"hook"`
	Status string `json:"status"`
	Reason string `json:"reason"` // why not; for an attached hook a note, or empty
}

// Report is one source's capability report. The DRM source lists the rungs of a stage's
// ladder down to the one that attached, not below it.
type Report struct {
	Source  string // SourceDRM or SourceCUDA ("" is read as SourceDRM)
	Entries []Entry
	// Tracefs is how the DRM source found tracefs: "mounted", mounted by ghostdriver, or
	// why it is not mounted (internal/probe/tracefs.go). Empty when it did not get that
	// far, and for the CUDA source.
	Tracefs string
}

// Add appends an entry.
func (r *Report) Add(stage, hook, status, reason string) {
	r.Entries = append(r.Entries, Entry{Stage: stage, Hook: hook, Status: status, Reason: reason})
}

// Clone is a copy whose entries do not share r's array (a source that keeps adding to
// its own hands out clones).
func (r Report) Clone() Report {
	r.Entries = append([]Entry(nil), r.Entries...)
	return r
}

// Attached returns the entries of attached hooks, in entry order.
func (r Report) Attached() []Entry {
	var out []Entry
	for _, e := range r.Entries {
		if e.Status == StatusAttached {
			out = append(out, e)
		}
	}
	return out
}

// StageAttached reports whether any hook of stage is attached.
func (r Report) StageAttached(stage string) bool {
	for _, e := range r.Entries {
		if e.Stage == stage && e.Status == StatusAttached {
			return true
		}
	}
	return false
}

// JSON renders the entries as a list of {"stage","hook","status","reason"}.
func (r Report) JSON() ([]byte, error) {
	entries := r.Entries
	if entries == nil {
		entries = []Entry{}
	}
	return json.MarshalIndent(entries, "", "  ")
}
