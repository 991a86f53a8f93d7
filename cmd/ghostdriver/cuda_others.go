//go:build !linux

package main

import "io"

func cmdCUDA(args []string, stdout, stderr io.Writer) int {
	return linuxOnly("cuda", args, stdout, stderr)
}
