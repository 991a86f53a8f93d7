package probe

import (
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"
)

// Hook status values of a Report entry.
const (
	StatusAttached    = "attached"
	StatusUnavailable = "unavailable"
)

// Entry is one hook the loader tried (or deliberately did not try) for a stage.
type Entry struct {
	Stage  string `json:"stage"`
	Hook   string `json:"hook"`
	Status string `json:"status"`
	Reason string `json:"reason"` // why not; for an attached hook a note, or empty
}

// Report is the capability report: what each stage is hooked with, or why not.
// Rungs of a stage's ladder below the one that attached are not listed.
type Report struct {
	Entries []Entry
	// Tracefs is how the loader found tracefs: "mounted", mounted by ghostdriver, or why
	// it is not mounted (tracefs.go). Empty when the loader did not get that far.
	Tracefs string
}

// SyscallFallback reports whether the submit ioctls are hooked with raw_tp
// sys_enter/sys_exit, the rung that runs for every syscall of the host.
func (r Report) SyscallFallback() bool {
	for _, e := range r.Entries {
		if e.Stage == StageIoctl && e.Status == StatusAttached && e.Hook == "raw_tp/sys_enter" {
			return true
		}
	}
	return false
}

// syscallFallbackCost is the measured price of that rung (BENCHMARKS.md, "The syscall
// hook fallback", bench/syscallfallback): what a getppid loop paid per call, raw_tp vs
// nothing attached, on the H200 host (the 2-core CI VM: +166 ns of 1178).
const syscallFallbackCost = "measured: +86 ns on every syscall, getppid 139 → 225 ns on an H200 host; BENCHMARKS.md, \"The syscall hook fallback\""

// FallbackWarning is the one line said when SyscallFallback: why, and what it costs.
func (r Report) FallbackWarning() string {
	if !r.SyscallFallback() {
		return ""
	}
	why := "tracefs " + r.Tracefs
	if r.Tracefs == "" {
		why = "the syscall tracepoints are unavailable"
	}
	return "submit ioctls are hooked with raw_tp sys_enter/sys_exit, which run for every syscall of the host (" +
		syscallFallbackCost + "): " + why
}

func (r *Report) add(stage, hook, status, reason string) {
	r.Entries = append(r.Entries, Entry{Stage: stage, Hook: hook, Status: status, Reason: reason})
}

// Attached returns the hooks that are attached, as "stage hook" pairs in entry order.
func (r Report) Attached() []Entry {
	var out []Entry
	for _, e := range r.Entries {
		if e.Status == StatusAttached {
			out = append(out, e)
		}
	}
	return out
}

// anyJobHook reports whether a hook that observes GPU jobs is attached (not only the
// process-lifecycle hooks or OBI's map).
func (r *Report) anyJobHook() bool {
	for _, e := range r.Entries {
		if e.Status == StatusAttached && e.Stage != StageProcess && e.Stage != StageAppContext {
			return true
		}
	}
	return false
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

// JSON renders the report as a list of {"stage","hook","status","reason"}.
func (r Report) JSON() ([]byte, error) {
	entries := r.Entries
	if entries == nil {
		entries = []Entry{}
	}
	return json.MarshalIndent(entries, "", "  ")
}

// String renders the report as a text table.
func (r Report) String() string {
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "STAGE\tHOOK\tSTATUS\tREASON")
	for _, e := range r.Entries {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", e.Stage, e.Hook, e.Status, e.Reason)
	}
	w.Flush()
	return b.String()
}

// Summary is one line: how many hooks attached and which stages have none.
func (r Report) Summary() string {
	stages := []string{}
	seen := map[string]bool{}
	var attached int
	for _, e := range r.Entries {
		if e.Status == StatusAttached {
			attached++
		}
		if !seen[e.Stage] {
			seen[e.Stage] = true
			stages = append(stages, e.Stage)
		}
	}
	var missing []string
	for _, s := range stages {
		if !r.StageAttached(s) {
			missing = append(missing, s)
		}
	}
	if len(missing) == 0 {
		return fmt.Sprintf("%d hooks attached, every stage covered", attached)
	}
	return fmt.Sprintf("%d hooks attached; no hook for: %s", attached, strings.Join(missing, ", "))
}

// Lines returns the entries in report order (one per hook tried).
func (r Report) Lines() []Entry { return r.Entries }

// firstLine is the first line of a multi-line error (a verifier log, a format file's
// complaint): the report's entries are one line each.
func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}
