//go:build !linux

// live, doctor and record need Linux (eBPF, tracefs).

package main

import (
	"fmt"
	"io"
)

func cmdLive(args []string, stdout, stderr io.Writer) int {
	return linuxOnly("live", args, stdout, stderr)
}

func cmdDoctor(args []string, stdout, stderr io.Writer) int {
	return linuxOnly("doctor", args, stdout, stderr)
}

func cmdRecord(args []string, stdout, stderr io.Writer) int {
	return linuxOnly("record", args, stdout, stderr)
}

// linuxOnly answers --help with the synopsis (exit 0) and anything else with exit 1.
func linuxOnly(cmd string, args []string, stdout, stderr io.Writer) int {
	for _, a := range args {
		if a == "-h" || a == "--help" || a == "-help" {
			fmt.Fprintf(stdout, "usage: %s\n(needs Linux)\n", synopsis(cmd))
			return 0
		}
	}
	fmt.Fprintf(stderr, "ghostdriver %s: needs Linux with eBPF/tracefs\n", cmd)
	return 1
}
