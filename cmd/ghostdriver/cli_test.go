// The CLI's contract, command by command: exit codes (0 done and --help, 1 runtime
// failure, 2 usage error), one "ghostdriver CMD:" prefix per message, --version, and the
// synopses (ghostdriver --help, README.md) naming exactly the flags each command defines.
package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/ghostdriver/ghostdriver/internal/version"
)

// doubled matches "ghostdriver replay: replay: …".
var doubled = regexp.MustCompile(`^ghostdriver (\w+): (\w+): `)

// commands are main.go's synopses: a command added there is checked here.
var commands = func() []string {
	var out []string
	for _, s := range synopses {
		out = append(out, s.cmd)
	}
	return out
}()

func runCLI(args ...string) (code int, stdout, stderr string) {
	var o, e bytes.Buffer
	code = run(args, &o, &e)
	return code, o.String(), e.String()
}

func TestHelpExitsZero(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}} {
		if code, out, _ := runCLI(args...); code != 0 || !strings.Contains(out, "ghostdriver replay") {
			t.Errorf("%v: exit %d, stdout %q", args, code, out)
		}
	}
	for _, cmd := range commands {
		for _, h := range []string{"--help", "-h"} {
			code, out, errOut := runCLI(cmd, h)
			if code != 0 {
				t.Errorf("%s %s: exit %d, want 0 (stderr %q)", cmd, h, code, errOut)
			}
			if !strings.HasPrefix(out, "usage: ghostdriver "+cmd) {
				t.Errorf("%s %s: stdout does not start with the usage: %q", cmd, h, out)
			}
		}
	}
}

func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"version"}} {
		code, out, _ := runCLI(args...)
		if code != 0 || strings.TrimSpace(out) != version.Full("ghostdriver") || !strings.Contains(out, version.String()) {
			t.Errorf("%v: exit %d, stdout %q", args, code, out)
		}
	}
}

// Every usage error exits 2 with one message naming the problem on stderr; runtime
// failures exit 1 with a single prefix.
func TestExitCodes(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing")
	cases := []struct {
		name string
		args []string
		code int
		msg  string // stderr must contain it
	}{
		{"no command", nil, 2, "usage:"},
		{"unknown command", []string{"frobnicate"}, 2, `unknown command "frobnicate"`},
		{"replay unknown flag", []string{"replay", "--frob", "x"}, 2, "ghostdriver replay: flag provided but not defined: -frob"},
		{"replay bad speed", []string{"replay", "--speed", "-1", "x"}, 2, "ghostdriver replay: --speed -1"},
		{"replay speed not a number", []string{"replay", "--speed", "fast", "x"}, 2, `invalid value "fast" for flag -speed`},
		{"replay bad epoch", []string{"replay", "--epoch", "soon", "x"}, 2, "ghostdriver replay: --epoch"},
		{"replay no capture", []string{"replay"}, 2, "exactly one CAPTURE"},
		{"replay two captures", []string{"replay", "a", "b"}, 2, "exactly one CAPTURE"},
		{"replay bad job timeout", []string{"replay", "--job-timeout", "soon", "x"}, 2, "-job-timeout"},
		{"replay missing capture", []string{"replay", missing}, 1, "ghostdriver replay: capture stat " + missing},
		{"live bad tiers", []string{"live", "--context-tiers", "nope"}, 2, "ghostdriver live: --context-tiers"},
		{"live stray argument", []string{"live", "extra"}, 2, "takes no arguments"},
		{"live bad duration", []string{"live", "--duration", "long"}, 2, "-duration"},
		{"record bad buffer", []string{"record", "--buffer-kb", "1"}, 2, "ghostdriver record: --buffer-kb 1"},
		{"record negative duration", []string{"record", "--duration", "-1s"}, 2, "--duration -1s"},
		{"record stray argument", []string{"record", "x"}, 2, "takes no arguments"},
		{"cuda bad flag", []string{"cuda", "--frob"}, 2, "ghostdriver cuda: flag provided but not defined"},
		{"doctor stray argument", []string{"doctor", "x"}, 2, "takes no arguments"},
		{"spans no file", []string{"spans"}, 2, "exactly one FILE"},
		{"spans bad limit", []string{"spans", "--limit", "-3", "f"}, 2, "--limit -3"},
		{"spans missing file", []string{"spans", missing}, 1, "ghostdriver spans: open " + missing},
		{"version argument", []string{"version", "x"}, 2, "takes no arguments"},
	}
	for _, c := range cases {
		code, _, errOut := runCLI(c.args...)
		if code != c.code {
			t.Errorf("%s: exit %d, want %d (stderr %q)", c.name, code, c.code, errOut)
		}
		if !strings.Contains(errOut, c.msg) {
			t.Errorf("%s: stderr lacks %q: %q", c.name, c.msg, errOut)
		}
		first := strings.SplitN(errOut, "\n", 2)[0]
		if m := doubled.FindStringSubmatch(first); m != nil && m[1] == m[2] {
			t.Errorf("%s: doubled prefix: %q", c.name, first)
		}
	}
}

// flagsInHelp returns the flag names `ghostdriver CMD --help` lists.
func flagsInHelp(t *testing.T, cmd string) []string {
	t.Helper()
	code, out, _ := runCLI(cmd, "--help")
	if code != 0 {
		t.Fatalf("%s --help: exit %d", cmd, code)
	}
	var names []string
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "  -") {
			names = append(names, strings.Fields(line)[0][1:])
		}
	}
	sort.Strings(names)
	return names
}

var synopsisFlag = regexp.MustCompile(`\[--([a-z][a-z-]*)`)

// flagsInSynopsis returns the --flags a synopsis text names, per command: a line that
// starts with "ghostdriver CMD" opens CMD, indented lines continue it.
func flagsInSynopsis(text string) map[string][]string {
	out := map[string][]string{}
	cur := ""
	for _, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "ghostdriver ") {
			f := strings.Fields(trimmed)
			cur = f[1]
			if strings.HasPrefix(cur, "-") {
				cur = ""
				continue
			}
			out[cur] = out[cur][:0:0]
		} else if cur == "" || trimmed == "" || !strings.HasPrefix(line, " ") {
			cur = ""
			continue
		}
		for _, m := range synopsisFlag.FindAllStringSubmatch(trimmed, -1) {
			out[cur] = append(out[cur], m[1])
		}
	}
	for k := range out {
		sort.Strings(out[k])
	}
	return out
}

func checkSynopses(t *testing.T, where string, got map[string][]string) {
	t.Helper()
	for _, cmd := range commands {
		want := flagsInHelp(t, cmd)
		have, ok := got[cmd]
		if !ok {
			t.Errorf("%s: no synopsis of %q", where, cmd)
			continue
		}
		if strings.Join(have, " ") != strings.Join(want, " ") {
			t.Errorf("%s: %s synopsis names flags\n  %v\n--help lists\n  %v", where, cmd, have, want)
		}
	}
}

func TestSynopsisMatchesHelp(t *testing.T) {
	checkSynopses(t, "ghostdriver --help", flagsInSynopsis(usage()))
}

// README.md's CLI block (the first ``` block after "## The CLI") must be the synopsis.
func TestReadmeSynopsisMatchesHelp(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i := strings.Index(s, "## The CLI")
	if i < 0 {
		t.Fatal(`README.md has no "## The CLI" section`)
	}
	s = s[i:]
	start := strings.Index(s, "```\n")
	end := strings.Index(s[start+4:], "```")
	if start < 0 || end < 0 {
		t.Fatal("README.md's CLI section has no ``` block")
	}
	checkSynopses(t, "README.md", flagsInSynopsis(s[start+4:start+4+end]))
}
