//go:build !linux

// The live source and doctor need Linux eBPF.
package main

import (
	"fmt"
	"io"
)

func cmdLive(_ []string, _, stderr io.Writer) int {
	fmt.Fprintln(stderr, "ghostdriver live: needs Linux with eBPF")
	return 1
}

func cmdDoctor(_ []string, _, stderr io.Writer) int {
	fmt.Fprintln(stderr, "ghostdriver doctor: needs Linux with eBPF")
	return 1
}
