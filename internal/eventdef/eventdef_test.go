// The table's own consistency, and docs/stages.md's per-driver table generated from it.

package eventdef

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ghostdriver/ghostdriver/internal/event"
)

var update = flag.Bool("update", false, "rewrite docs/stages.md's generated table")

func TestRows(t *testing.T) {
	names := map[string]bool{}
	hooks := map[uint16]string{}
	kinds := map[event.Kind]string{}
	for _, e := range Events() {
		if len(e.Names) == 0 {
			t.Fatalf("a row without a name: %+v", e)
		}
		first := e.Names[0].Name
		for _, n := range e.Names {
			if names[n.Name] {
				t.Errorf("%s: name in two rows", n.Name)
			}
			names[n.Name] = true
		}
		if e.Kind == event.KindUnknown && e.Note == "" {
			t.Errorf("%s: known but not decoded, with no reason", first)
		}
		if e.Kind != event.KindUnknown && e.Kind != event.Marker && e.Formats == nil {
			t.Errorf("%s: decoded with no formats", first)
		}
		if e.Role != nil && (len(e.Points) == 0 || len(e.Points) > 2) {
			t.Errorf("%s: a role sets one or two points, not %d", first, len(e.Points))
		}
		if e.Driver != "" && e.Kind != event.KindUnknown {
			if k, dup := kinds[e.Kind]; dup && e.Role != nil {
				t.Errorf("%s: kind %v has a role in %s too", first, e.Kind, k)
			}
			kinds[e.Kind] = first
		}
		if e.Hook == nil {
			continue
		}
		if e.Driver == "" || e.System == "" || e.Kind == event.KindUnknown {
			t.Errorf("%s: a live hook needs a driver, a TRACE_SYSTEM and a kind", first)
		}
		if o, dup := hooks[e.Hook.Value]; dup {
			t.Errorf("%s: hook value %d is %s's too", first, e.Hook.Value, o)
		}
		hooks[e.Hook.Value] = first
	}
}

// The hook values follow the numbering of eventdef.go (Hook values): above the core's,
// below MaxHookValue (internal/probe's arrays), one block of ten per driver.
func TestHookValues(t *testing.T) {
	blockOf := map[uint16]string{}
	for _, e := range Hooks() {
		v, d := e.Hook.Value, e.Driver
		switch {
		case v >= MaxHookValue:
			t.Errorf("%s: hook value %d is not below MaxHookValue %d (internal/probe looks hooks up in arrays of that size): raise MaxHookValue in internal/eventdef/eventdef.go", e.Hook.Event, v, MaxHookValue)
		case v < FirstDriverHook || HookBlock(v) == 80:
			t.Errorf("%s: hook value %d is the core's (below %d, or 80..89: enum hook in bpf/include/ghostdriver.h): take the next free block of ten", e.Hook.Event, v, FirstDriverHook)
		}
		if o, taken := blockOf[HookBlock(v)]; taken && o != d {
			t.Errorf("%s: hook value %d is in %s's block %d..%d: each driver takes its own block of ten", e.Hook.Event, v, o, HookBlock(v), HookBlock(v)+9)
		}
		blockOf[HookBlock(v)] = d
	}
}

// docs/stages.md carries DriverTable between its markers.
func TestStagesDoc(t *testing.T) {
	path := filepath.Join("..", "..", DocsPath)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	i, j := strings.Index(doc, DocsBegin), strings.Index(doc, DocsEnd)
	if i < 0 || j < i {
		t.Fatalf("%s: no generated-table markers", DocsPath)
	}
	want := doc[:i+len(DocsBegin)] + "\n\n" + DriverTable() + "\n" + doc[j:]
	if want == doc {
		return
	}
	if *update {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s: the per-driver table is not the event table's: go test ./internal/eventdef -run TestStagesDoc -update", DocsPath)
}

// Every driver with a live hook has its row in the README's support matrix.
func TestReadmeMatrixHasEveryDriver(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, matrix, ok := strings.Cut(string(b), "## What works where")
	if !ok {
		t.Fatal("README.md: no support matrix (## What works where)")
	}
	if i := strings.Index(matrix, "\n| "); i >= 0 {
		matrix = matrix[i+1:]
	}
	matrix, _, _ = strings.Cut(matrix, "\n\n")
	rows := map[string]bool{}
	for _, l := range strings.Split(matrix, "\n") {
		if f := strings.Fields(strings.TrimPrefix(l, "|")); strings.HasPrefix(l, "| ") && len(f) > 0 {
			rows[f[0]] = true
		}
	}
	for _, e := range Hooks() {
		if !rows[e.Driver] {
			t.Errorf("README.md's support matrix has no row for %s", e.Driver)
			rows[e.Driver] = true // once
		}
	}
}
