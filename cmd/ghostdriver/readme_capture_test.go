// README.md's recording lines (the trace-cmd command and the Perfetto ftrace_config) must
// name exactly the events the live loader hooks as classic tracepoints (probe's hook
// table) that the replay decoder reads (ftrace's table): a capture made with them gives
// replay what the live source sees, and nothing it would only count as unknown.
package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ghostdriver/ghostdriver/internal/event"
	"github.com/ghostdriver/ghostdriver/internal/ftrace"
	"github.com/ghostdriver/ghostdriver/internal/probe"
)

func TestReadmeRecordingEventsAreTheTables(t *testing.T) {
	loader, err := probe.TracefsEvents()
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, e := range loader {
		_, name, _ := strings.Cut(e, "/")
		if k, ok := ftrace.Known(name); ok && k != event.KindUnknown {
			want = append(want, e)
		}
	}
	if len(want) < 30 {
		t.Fatalf("only %d tracefs events from the tables: %v", len(want), want)
	}
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	i := strings.Index(readme, "### Making a capture")
	if i < 0 {
		t.Fatal(`README.md has no "### Making a capture" section`)
	}
	section := readme[i:]
	if j := strings.Index(section[4:], "\n## "); j >= 0 {
		section = section[:j+4]
	}

	var traceCmd []string
	for _, m := range regexp.MustCompile(`-e ([a-z0-9_]+):([a-z0-9_]+)`).FindAllStringSubmatch(section, -1) {
		traceCmd = append(traceCmd, m[1]+"/"+m[2])
	}
	var perfetto []string
	for _, m := range regexp.MustCompile(`ftrace_events: "([a-z0-9_]+/[a-z0-9_]+)"`).FindAllStringSubmatch(section, -1) {
		perfetto = append(perfetto, m[1])
	}
	for name, got := range map[string][]string{"trace-cmd record": traceCmd, "Perfetto ftrace_config": perfetto} {
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("README's %s events\n  %v\nthe tables give\n  %v", name, got, want)
		}
	}
	for _, must := range []string{"-O record-tgid", "trace-cmd report", "ghostdriver record"} {
		if !strings.Contains(section, must) {
			t.Errorf("README's capture section lacks %q", must)
		}
	}
}
