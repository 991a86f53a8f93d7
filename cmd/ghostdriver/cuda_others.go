//go:build !linux

// `ghostdriver cuda` off Linux: the CUDA source needs Linux.

package main

import "io"

func cmdCUDA(args []string, stdout, stderr io.Writer) int {
	return linuxOnly("cuda", args, stdout, stderr)
}
