// The per-boot salt for span ids: dma_fence contexts restart at every boot, so ids derived
// from fence keys must be salted with something unique to the boot.

package probe

import (
	"hash/fnv"
	"os"
	"strings"
)

// BootSalt hashes /proc/sys/kernel/random/boot_id. It returns 0 (unsalted) when the file
// cannot be read, which only risks id collisions between jobs of different boots.
func BootSalt() uint64 {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return 0
	}
	h := fnv.New64a()
	h.Write([]byte(strings.TrimSpace(string(b))))
	return h.Sum64()
}
