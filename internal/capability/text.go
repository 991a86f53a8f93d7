// The report as the CLI prints it and logs summarise it: the DRM source's table and
// coverage line (`ghostdriver doctor`, `live`), the CUDA source's table and per-stage
// counts (`ghostdriver cuda`).

package capability

import (
	"fmt"
	"strings"
	"text/tabwriter"
)

// String renders the entries as a table: stage, hook, status, reason.
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

// Text is the report as `ghostdriver live` and `ghostdriver cuda` print it at start: the
// DRM source's table (String), or the CUDA source's table (stage, status, hook, reason)
// followed by its summary line.
func (r Report) Text() string {
	if r.Source != SourceCUDA {
		return r.String()
	}
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "STAGE\tSTATUS\tHOOK\tREASON")
	for _, e := range r.Entries {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", e.Stage, e.Status, e.Hook, e.Reason)
	}
	tw.Flush()
	fmt.Fprintf(&b, "CUDA source: %s\n", r.Summary())
	return b.String()
}

// Summary is one line. DRM: how many hooks attached and which stages have none. CUDA:
// attached and unavailable hooks per stage.
func (r Report) Summary() string {
	if r.Source == SourceCUDA {
		return r.perStage()
	}
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

// perStage is the CUDA source's summary: "stage: n attached, m unavailable; ...".
func (r Report) perStage() string {
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
