// The kinds are the table's: internal/event's driver kinds are generated from the rows
// that name one (kindgen), and the two lists of every kind outside Go, metadata.yaml's
// ghostdriver.event.kind enum and documentation.md's attribute row, are checked against
// event.Kinds() here (-update rewrites them; make generate-metadata then regenerates
// docs/metrics.md and internal/metadata from metadata.yaml).

package eventdef

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ghostdriver/ghostdriver/internal/event"
)

// Every row that defines a kind is that kind, by name: a KindName changed or a row added
// without go generate ./internal/event fails here (or does not compile).
func TestRowKindsAreGenerated(t *testing.T) {
	defined := map[event.Kind]bool{}
	for _, e := range Events() {
		if e.KindName == "" {
			continue
		}
		if got := e.Kind.String(); got != e.KindName {
			t.Errorf("%s: KindName %q, but its kind is %q: run go generate ./internal/event", e.Names[0].Name, e.KindName, got)
		}
		defined[e.Kind] = true
	}
	// Every kind of a driver's own row is one a row defines (none left over in event.go).
	for _, e := range Drivers() {
		if e.Kind != event.KindUnknown && e.Role != nil && !defined[e.Kind] && e.Kind != event.JobQueue && e.Kind != event.JobRun {
			t.Errorf("%s: kind %v is no row's KindName", e.Names[0].Name, e.Kind)
		}
	}
}

func kindNames() []string {
	var out []string
	for _, k := range event.Kinds() {
		out = append(out, k.String())
	}
	return out
}

// metadataEnum is the ghostdriver.event.kind attribute's enum in metadata.yaml: its
// span in the text and its values.
var metadataEnum = regexp.MustCompile(`(?s)\n  ghostdriver\.event\.kind:\n(?:    [^\n]*\n)*?    enum: \[([^\]]*)\]\n`)

func metadataKindEnum(names []string) string {
	var b strings.Builder
	line := "    enum: ["
	for i, n := range names {
		item := n
		if i < len(names)-1 {
			item += ","
		}
		if len(line)+1+len(item) > 100 {
			b.WriteString(line + "\n")
			line = "     "
		}
		if !strings.HasSuffix(line, "[") {
			line += " "
		}
		line += item
	}
	b.WriteString(line + "]\n")
	return b.String()
}

const docRowPrefix = "| `ghostdriver.event.kind` | string | "

func documentationRow(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = "`" + n + "`"
	}
	return docRowPrefix + "The decoder's normalised event kinds (internal/event; the drivers' own from the event table, internal/eventdef): " +
		strings.Join(q, ", ") + ". `process_exec` and `process_exit` come from the live source only (exec/exit of a process the enricher resolved), `events_lost` from a capture's `CPU:N [LOST n EVENTS]` note. |"
}

func TestKindLists(t *testing.T) {
	names := kindNames()
	root := filepath.Join("..", "..")

	path := filepath.Join(root, "metadata.yaml")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	meta := string(b)
	m := metadataEnum.FindStringSubmatchIndex(meta)
	if m == nil {
		t.Fatal("metadata.yaml: no ghostdriver.event.kind attribute with an enum")
	}
	var have []string
	for _, f := range strings.Split(meta[m[2]:m[3]], ",") {
		have = append(have, strings.TrimSpace(f))
	}
	enumAt := strings.LastIndex(meta[:m[2]], "    enum: [")
	wantMeta := meta[:enumAt] + metadataKindEnum(names) + meta[m[1]:]
	if strings.Join(have, " ") != strings.Join(names, " ") {
		if *update {
			if err := os.WriteFile(path, []byte(wantMeta), 0o644); err != nil {
				t.Fatal(err)
			}
		} else {
			t.Errorf("metadata.yaml: ghostdriver.event.kind's enum is not event.Kinds():\n have %v\n want %v\nrun go test ./internal/eventdef -run TestKindLists -update, then make generate-metadata", have, names)
		}
	}

	path = filepath.Join(root, "documentation.md")
	b, err = os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	found := false
	for i, l := range lines {
		if !strings.HasPrefix(l, docRowPrefix) {
			continue
		}
		found = true
		if want := documentationRow(names); l != want {
			if *update {
				lines[i] = want
				if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
					t.Fatal(err)
				}
			} else {
				t.Errorf("documentation.md: the ghostdriver.event.kind row does not list event.Kinds(): run go test ./internal/eventdef -run TestKindLists -update")
			}
		}
	}
	if !found {
		t.Errorf("documentation.md: no %q row", docRowPrefix)
	}
}
