// The cuda command's ring-buffer flag reaches the CUDA source's validation: a bad size is
// a runtime error (exit 1) naming the problem, before anything is loaded.
package main

import (
	"strings"
	"testing"
)

func TestCUDARingBufferSizeNamesTheProblem(t *testing.T) {
	for size, want := range map[string]string{
		"1000":   "smaller than one page",
		"12288":  "not a power of two",
		"-65536": "ring buffer size",
	} {
		code, _, stderr := runCLI("cuda", "--quiet", "--ring-buffer-size", size, "--", "true")
		if code != 1 || !strings.Contains(stderr, want) {
			t.Errorf("--ring-buffer-size %s: exit %d, stderr %q; want exit 1 naming %q", size, code, stderr, want)
		}
	}
}

// --layers reaches the source's validation the same way (exit 2 "flag provided but not
// defined" before the flag existed).
func TestCUDALayersNamesTheProblem(t *testing.T) {
	code, _, stderr := runCLI("cuda", "--quiet", "--layers", "kernel", "--", "true")
	if code != 1 || !strings.Contains(stderr, `cuda layers "kernel"`) {
		t.Errorf("--layers kernel: exit %d, stderr %q; want exit 1 naming the value", code, stderr)
	}
}
