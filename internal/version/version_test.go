// The version's precedence: link-time value, then the build info, then "devel".
package version

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestStringPrecedence(t *testing.T) {
	oldV, oldRead := Version, readBuildInfo
	t.Cleanup(func() { Version, readBuildInfo = oldV, oldRead })

	info := func(main string, deps ...*debug.Module) func() (*debug.BuildInfo, bool) {
		return func() (*debug.BuildInfo, bool) {
			return &debug.BuildInfo{Main: debug.Module{Path: Module, Version: main}, Deps: deps}, true
		}
	}
	cases := []struct {
		name, ldflag string
		read         func() (*debug.BuildInfo, bool)
		want         string
	}{
		{"ldflags win", "v1.2.3-4-gabc", info("v9.9.9"), "v1.2.3-4-gabc"},
		{"go install @version", "", info("v0.3.0"), "v0.3.0"},
		{"work tree build", "", info("(devel)"), "devel"},
		{"no build info", "", func() (*debug.BuildInfo, bool) { return nil, false }, "devel"},
		{"collector dependency", "", func() (*debug.BuildInfo, bool) {
			return &debug.BuildInfo{Main: debug.Module{Path: "example.com/otelcol", Version: "(devel)"},
				Deps: []*debug.Module{{Path: Module, Version: "v0.4.1"}}}, true
		}, "v0.4.1"},
		{"replaced placeholder", "", func() (*debug.BuildInfo, bool) {
			return &debug.BuildInfo{Main: debug.Module{Path: "example.com/otelcol"},
				Deps: []*debug.Module{{Path: Module, Version: "v0.0.0"}}}, true
		}, "devel"},
	}
	for _, c := range cases {
		Version, readBuildInfo = c.ldflag, c.read
		if got := String(); got != c.want {
			t.Errorf("%s: String() = %q, want %q", c.name, got, c.want)
		}
	}
	Version = "v7"
	if f := Full("ghostdriver"); !strings.HasPrefix(f, "ghostdriver v7 (go") {
		t.Errorf("Full = %q", f)
	}
}
