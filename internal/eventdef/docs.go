// The per-driver table of docs/stages.md, written from the rows of drivers' own events
// (a test keeps the committed text equal to it).

package eventdef

import (
	"fmt"
	"strings"
)

// Markers around the generated table in docs/stages.md.
const (
	DocsPath  = "docs/stages.md"
	DocsBegin = "<!-- generated from internal/eventdef/table.go: go test ./internal/eventdef -run TestStagesDoc -update -->"
	DocsEnd   = "<!-- end of generated table -->"
)

// DriverTable is the markdown table of every driver's own events: their names per
// kernel, the kind they decode to, the points they measure and how, and their live hook.
func DriverTable() string {
	var b strings.Builder
	b.WriteString("| driver | event (names per kernel) | kind | points | rule | live hook |\n")
	b.WriteString("|---|---|---|---|---|---|\n")
	for _, e := range Drivers() {
		names := make([]string, len(e.Names))
		for i, n := range e.Names {
			names[i] = "`" + n.Name + "`"
			if n.Kernels != "" {
				names[i] += " (" + n.Kernels + ")"
			}
		}
		kind, points, rule, hook := "—", "—", e.Rule, "—"
		if e.Kind != 0 {
			kind = "`" + e.Kind.String() + "`"
		} else {
			rule = "not decoded: " + e.Note
		}
		if len(e.Points) > 0 {
			p := make([]string, len(e.Points))
			for i, x := range e.Points {
				p[i] = x.Short()
			}
			points = strings.Join(p, ", ")
		}
		if e.Hook != nil {
			hook = fmt.Sprintf("`%s/%s` (%s): `%s`, else `%s`", e.System, e.Hook.Event, e.Hook.Kernels,
				e.Hook.BTFProgram(), e.Hook.ClassicProgram())
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", e.Driver, strings.Join(names, ", "), kind, points,
			strings.ReplaceAll(rule, "|", `\|`), hook)
	}
	return b.String()
}
