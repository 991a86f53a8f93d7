//go:build !linux

package main

import (
	"fmt"
	"io"
)

func cmdCUDA(_ []string, _, stderr io.Writer) int {
	fmt.Fprintln(stderr, "ghostdriver cuda: needs Linux with eBPF uprobes")
	return 1
}
