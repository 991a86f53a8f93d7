// Package version is the one place the ghostdriver version comes from, for the CLI
// (`ghostdriver --version`) and for the receiver (logged at Start). The Makefile sets
// Version with -ldflags "-X github.com/ghostdriver/ghostdriver/internal/version.Version=…"
// from `git describe`; the same value goes to the ocb distribution's dist.version.
// Without it, the module version the Go toolchain recorded is used (`go install …@vX`),
// else "devel".
package version

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// Module is this project's Go module path.
const Module = "github.com/ghostdriver/ghostdriver"

// Version is set at link time; empty means "not set".
var Version string

// readBuildInfo is debug.ReadBuildInfo; tests replace it.
var readBuildInfo = debug.ReadBuildInfo

// String returns the version: the link-time value, else the version of this module
// recorded in the binary's build info (as the main module or as a dependency of a
// collector distribution), else "devel".
func String() string {
	if Version != "" {
		return Version
	}
	if bi, ok := readBuildInfo(); ok {
		if bi.Main.Path == Module && usable(bi.Main.Version) {
			return bi.Main.Version
		}
		for _, d := range bi.Deps {
			if d.Path == Module && usable(d.Version) {
				return d.Version
			}
		}
	}
	return "devel"
}

// usable: "(devel)" is what a build from a work tree records; v0.0.0 is the placeholder
// builder-config.yaml requires for the local replace.
func usable(v string) bool {
	return v != "" && v != "(devel)" && v != "v0.0.0"
}

// Full is the one-line form `ghostdriver --version` prints.
func Full(program string) string {
	return fmt.Sprintf("%s %s (%s, %s/%s)", program, String(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
