// A guard on the tests themselves: every skip in the repository's tests goes through this
// package (a named requirement that GHOSTDRIVER_REQUIRE can turn into a failure), except
// the few kinds that are not about the machine — a benchmark waiting for its output
// variable, -short, a test that runs only as another's child, and the rig phases a run
// was told to leave out. A new plain t.Skip for a missing tool or kernel feature fails here.

package testreq

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var plainSkip = regexp.MustCompile(`\b[tb]\.Skip(f|Now)?\(`)

// notEnvironmental are the messages a plain skip may start with (after its opening quote).
var notEnvironmental = []string{
	"benchmark: set ",                     // a benchmark runs only when asked for its output
	"GHOSTDRIVER_EXPORT_CAPTURE names no", // a benchmark of a capture the user names
	"-short:",                             // go test -short
	"run by ", "runs only as the child",   // a child process of another test
	"the run left",          // a rig phase the run turned off (its variable set empty)
	"the run gave prebuilt", // cross-built stubs come without what this test builds
}

func TestNoPlainEnvironmentSkips(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "testdata", "build", "node_modules":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") || path == filepath.Join(root, "internal", "testreq", "skips_test.go") {
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		for n := 1; sc.Scan(); n++ {
			line := sc.Text()
			loc := plainSkip.FindStringIndex(line)
			if loc == nil || strings.HasPrefix(strings.TrimSpace(line), "//") {
				continue
			}
			seen++
			msg := strings.TrimLeft(line[loc[1]:], "\"` ")
			ok := false
			for _, p := range notEnvironmental {
				if strings.HasPrefix(msg, p) {
					ok = true
				}
			}
			if !ok {
				rel, _ := filepath.Rel(root, path)
				t.Errorf("%s:%d: a plain skip (%s): an environment skip goes through testreq.Skip with a name, so that GHOSTDRIVER_REQUIRE can make it a failure", rel, n, strings.TrimSpace(line))
			}
		}
		return sc.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen == 0 {
		t.Fatal("no plain skip found at all: the scan read nothing (wrong root?)")
	}
}
