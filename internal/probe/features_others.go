//go:build !linux

// The feature probes off Linux: each says the live source needs Linux with eBPF.

package probe

import "errors"

// errNotLinux is every feature probe's answer off Linux: the live source loads eBPF
// programs into the Linux kernel and reads tracefs; elsewhere only replay works.
var errNotLinux = errors.New("the live source needs Linux with eBPF; use replay on this platform")

// HaveKernelBTF reports whether the running kernel exposes its BTF: never off Linux.
func HaveKernelBTF() error { return errNotLinux }

// HaveFentry reports whether fentry/fexit programs can be loaded: never off Linux.
func HaveFentry() error { return errNotLinux }

// HaveTaskStorage reports whether BPF task-local storage maps exist: never off Linux.
func HaveTaskStorage() error { return errNotLinux }

// HaveTracefs reports whether tracefs is mounted: never off Linux.
func HaveTracefs() error { return errNotLinux }

func checkPrivileges() error { return errNotLinux }
