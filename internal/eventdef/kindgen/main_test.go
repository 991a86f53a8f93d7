// kindgen on the real table: the committed kinds_drivers.go is what it writes, a new row
// is all a new kind takes, and a row naming an undeclared kind without KindName is refused.

package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

const (
	tablePath = "../table.go"
	eventPath = "../../event/event.go"
)

func generate(t *testing.T, table string) ([]byte, error) {
	t.Helper()
	core, err := coreKinds(eventPath)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "table.go")
	if err := os.WriteFile(p, []byte(table), 0o644); err != nil {
		t.Fatal(err)
	}
	kinds, err := tableKinds(p, core)
	if err != nil {
		return nil, err
	}
	return source(kinds), nil
}

func readTable(t *testing.T) string {
	b, err := os.ReadFile(tablePath)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestCommittedKindsAreTheTables(t *testing.T) {
	got, err := generate(t, readTable(t))
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("../../event/kinds_drivers.go")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("internal/event/kinds_drivers.go is not the event table's: run go generate ./internal/event")
	}
}

// The anchor the rows below go in front of: the table's last rows (markers).
const anchor = "\tone(\"print\", event.Marker, nil, \"\"),"

func TestANewRowIsANewKind(t *testing.T) {
	table := readTable(t)
	if !strings.Contains(table, anchor) {
		t.Fatalf("table.go has no %q", anchor)
	}
	row := `	{Names: []Name{{Name: "xe_hw_fence_try_signal"}}, Kind: event.XeHwFenceTrySignal, KindName: "xe_hw_fence_try_signal",
		Driver: "xe", System: "xe", Formats: famXeHwFence},
`
	got, err := generate(t, strings.Replace(table, anchor, row+anchor, 1))
	if err != nil {
		t.Fatal(err)
	}
	src := string(got)
	last := strings.Index(src, "\tVC4RenderEndIRQ ")
	added := strings.Index(src, "\tXeHwFenceTrySignal ")
	if last < 0 || added < last || !regexp.MustCompile(`XeHwFenceTrySignal - firstDriverKind:\s+"xe_hw_fence_try_signal",`).MatchString(src) {
		t.Errorf("the new row's kind is not generated after the table's others:\n%s", src)
	}
}

func TestARowWithoutKindNameIsRefused(t *testing.T) {
	table := readTable(t)
	row := `	{Names: []Name{{Name: "xe_hw_fence_try_signal"}}, Kind: event.XeHwFenceTrySignal,
		Driver: "xe", System: "xe", Formats: famXeHwFence},
`
	_, err := generate(t, strings.Replace(table, anchor, row+anchor, 1))
	if err == nil || !strings.Contains(err.Error(), "event.XeHwFenceTrySignal is no kind of internal/event/event.go: give the row KindName") {
		t.Errorf("got %v, want the row refused for want of KindName", err)
	}
	row = `	{Names: []Name{{Name: "xe_hw_fence_try_signal"}}, Kind: event.XeHwFenceTrySignal, KindName: "xe_hw_fence_signal",
		Driver: "xe", System: "xe", Formats: famXeHwFence},
`
	if _, err = generate(t, strings.Replace(table, anchor, row+anchor, 1)); err == nil || !strings.Contains(err.Error(), `KindName "xe_hw_fence_signal" is event.XeHwFenceSignal's too`) {
		t.Errorf("got %v, want a name taken twice refused", err)
	}
}
