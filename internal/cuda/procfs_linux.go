// The library scan's file identities: lstat of each mapped CUDA library through
// /proc/<pid>/root (the maps parsing is procfs.go's).

package cuda

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// scanLibraries walks every process's maps and returns the CUDA library files not in
// known (keyed by dev/inode), each once, and how many maps reads stopped at a bound.
// Files are identified with lstat: a symlink a tenant put at a mapped path is its own
// inode (and is refused when hooked), so it cannot claim the key of the file it points
// to.
func scanLibraries(procRoot string, known map[[2]uint64]bool, b mapsBounds) (out []Library, truncated int) {
	ents, err := os.ReadDir(procRoot)
	if err != nil {
		return nil, 0
	}
	seen := map[[2]uint64]bool{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		var found []mapping
		err = readMaps(filepath.Join(procRoot, e.Name(), "maps"), b, func(line []byte) bool {
			if !bytes.Contains(line, []byte("libcuda")) {
				return true
			}
			if m, ok := parseMapsLine(line); ok {
				if _, lib := libraryLayer(m.path); lib {
					found = append(found, m)
				}
			}
			return true
		})
		if errors.Is(err, errMapsTruncated) {
			truncated++ // what was read before the bound is still used
		}
		for _, m := range found {
			layer, _ := libraryLayer(m.path)
			path := filepath.Join(procRoot, e.Name(), "root", m.path)
			var st unix.Stat_t
			if err := unix.Lstat(path, &st); err != nil {
				continue
			}
			key := [2]uint64{st.Dev, st.Ino}
			if known[key] || seen[key] {
				continue
			}
			seen[key] = true
			out = append(out, Library{Layer: layer, Path: path, Mapped: m.path, Dev: key[0], Ino: key[1], PID: pid})
		}
	}
	return out, truncated
}
