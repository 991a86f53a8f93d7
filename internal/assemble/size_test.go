// The job struct's size, which sets the memory of every pending and output job.
package assemble

import (
	"testing"
	"unsafe"
)

// A pending job is mostly its job struct (BENCHMARKS.md, memory per pending job), and every
// output job allocates one. With the 8-byte header Go puts on a pointerful object over
// 512 bytes, it must stay within 760 bytes to take the 768-byte size class, not 896.
func TestJobFitsItsSizeClass(t *testing.T) {
	if n := unsafe.Sizeof(job{}); n > 760 {
		t.Errorf("job is %d bytes: over 760, it is allocated in the 896-byte class", n)
	}
}
