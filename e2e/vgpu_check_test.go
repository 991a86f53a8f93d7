// The rig's own checker (testdata/vgpu/check.sh) against a property it must have: its verdicts
// on the engine model and the dependency rules are about differences of times, so moving every
// timestamp of a real run by the same offset must not change a line of its output. awk reads the
// fields as strings; compared without a numeric coercion, a time past 10 s (11 digits) sorted
// before one below it, and CI failed on a correct run whose jobs straddled 10 s of uptime.
package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// nsField matches the absolute times of app.txt and groundtruth.txt (one value or a comma list);
// engine_ns is a duration and stays as it is.
var nsField = regexp.MustCompile(`\b([a-z_]+_ns)=(-?[0-9]+(?:,-?[0-9]+)*)`)

// shiftTimes adds d to every absolute time in text; -1 ("no signal in the log") stays.
func shiftTimes(t *testing.T, text string, d int64) string {
	return nsField.ReplaceAllStringFunc(text, func(m string) string {
		sub := nsField.FindStringSubmatch(m)
		if sub[1] == "engine_ns" {
			return m
		}
		vals := strings.Split(sub[2], ",")
		for i, v := range vals {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatalf("%s: %v", m, err)
			}
			if n >= 0 {
				vals[i] = strconv.FormatInt(n+d, 10)
			}
		}
		return sub[1] + "=" + strings.Join(vals, ",")
	})
}

// allTimes lists every absolute time of the ground truth, sorted.
func allTimes(t *testing.T, text string) []int64 {
	var out []int64
	for _, sub := range nsField.FindAllStringSubmatch(text, -1) {
		if sub[1] == "engine_ns" {
			continue
		}
		for _, v := range strings.Split(sub[2], ",") {
			if n, err := strconv.ParseInt(v, 10, 64); err == nil && n >= 0 {
				out = append(out, n)
			}
		}
	}
	slices.Sort(out)
	return out
}

// runCheck copies the fixture with its times moved by d into a fresh directory and returns
// check.sh's verdict lines on the engine model and dependencies (the tracefs part has no input
// here and reports the same missing file every time).
func runCheck(t *testing.T, fixture string, d int64) string {
	dir := t.TempDir()
	for _, f := range []string{"app.txt", "groundtruth.txt", "modules.txt"} {
		b, err := os.ReadFile(filepath.Join(fixture, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), []byte(shiftTimes(t, string(b), d)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, _ := exec.Command("bash", "../testdata/vgpu/check.sh", "6.1-arm64", dir).CombinedOutput()
	var keep []string
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, "ok ") || strings.HasPrefix(l, "FAIL ") || strings.HasPrefix(l, "info ") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

func TestCheckScriptVerdictsDoNotMoveWithTheClock(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Fatal("bash is needed to run testdata/vgpu/check.sh")
	}
	const fixture = "../testdata/vgpu/check-fixture"
	gt, err := os.ReadFile(filepath.Join(fixture, "groundtruth.txt"))
	if err != nil {
		t.Fatal(err)
	}
	base := runCheck(t, fixture, 0)
	// The run itself is clean: the verdicts this test keeps constant are passes.
	for _, want := range []string{
		"ok    no job started on the engine before its dependency ended",
		"ok    engine model: serial per ring",
		"ok    no job ran before the scheduler rules made it runnable",
		"ok    dependency rules exercised",
	} {
		if !strings.Contains(base, want) {
			t.Fatalf("check.sh on the fixture as recorded lacks %q:\n%s", want, base)
		}
	}
	// Put a digit-count boundary (10 s, 100 s) at each decile of the run's own times, so that it
	// falls between a job and its dependency, a handover and its submit, one job and the next.
	times := allTimes(t, string(gt))
	for _, boundary := range []int64{10_000_000_000, 100_000_000_000} {
		for q := 0; q <= 10; q++ {
			at := times[min(len(times)-1, q*len(times)/10)]
			d := boundary - at
			if got := runCheck(t, fixture, d); got != base {
				t.Errorf("times moved by %d ns (boundary %d at decile %d): check.sh says\n%s\nwant\n%s", d, boundary, q, got, base)
			}
		}
	}
}
