// The graph's copies of the probe's limits, which configurations validate against where
// the probe is not built.
package graph

import (
	"testing"

	"github.com/ghostdriver/ghostdriver/internal/probe"
)

func TestMaxDRMMajorsIsTheProbes(t *testing.T) {
	if MaxDRMMajors != probe.MaxDRMMajors {
		t.Errorf("graph.MaxDRMMajors %d, the probe's (bpf/syscalls.c MAX_MAJORS) %d", MaxDRMMajors, probe.MaxDRMMajors)
	}
}
