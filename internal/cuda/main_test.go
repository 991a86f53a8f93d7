// The package's tests run stub workloads and count what the source saw from every process
// that maps a CUDA library (the source scans /proc): no other package's stub workload may
// run meanwhile (go test runs packages in parallel), so the package holds the shared
// lock of internal/cuda/cudatest exclusive while its tests run.
package cuda

import (
	"fmt"
	"os"
	"testing"

	"github.com/ghostdriver/ghostdriver/internal/cuda/cudatest"
)

func TestMain(m *testing.M) {
	release, err := cudatest.LockPackage()
	if err != nil {
		// A machine without a writable /tmp (the arm64 guest's initrd) runs nothing else.
		fmt.Fprintln(os.Stderr, "internal/cuda tests: no stub workload lock, running without:", err)
		release = func() {}
	}
	code := m.Run()
	release()
	os.Exit(code)
}
