// Command cheader writes bpf/include/driver_hooks.h from the event table
// (eventdef.CHeader); `make generate` runs it through go generate ./internal/probe.

package main

import (
	"fmt"
	"os"

	"github.com/ghostdriver/ghostdriver/internal/eventdef"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: cheader path/to/driver_hooks.h")
		os.Exit(2)
	}
	if err := os.WriteFile(os.Args[1], []byte(eventdef.CHeader()), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
