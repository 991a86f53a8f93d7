package cuda

// The uprobe object holds no per-CPU scratch buffer (internal/bpflint).

import (
	"testing"

	"github.com/ghostdriver/ghostdriver/internal/bpflint"
)

func TestObjectHasNoPerCPUScratch(t *testing.T) {
	spec, err := loadCudaBPF()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range bpflint.PerCPUScratch(spec) {
		t.Errorf("per-CPU scratch %s", s)
	}
}
