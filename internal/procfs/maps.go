// /proc/<pid>/maps lines: where a process's mappings (the OTEL_CTX mapping, the loaded ELF
// modules, the CUDA libraries) are.

package procfs

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Mapping is one line of /proc/<pid>/maps.
type Mapping struct {
	Start, End uint64
	Perms      string // "r-xp"
	Offset     uint64 // file offset of Start
	Dev        string // "fd:01"
	Inode      uint64
	Path       string // pathname or pseudo-name ("[heap]", "[anon:OTEL_CTX]"); may contain spaces
}

// MaxMappings bounds ParseMaps (large JVMs have tens of thousands of mappings).
const MaxMappings = 1 << 18

// ParseMaps parses a maps file. Malformed lines are an error (the kernel never writes
// them); more than MaxMappings lines is an error.
func ParseMaps(r io.Reader) ([]Mapping, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 64<<10) // PATH_MAX-bounded lines
	var out []Mapping
	for sc.Scan() {
		if len(out) == MaxMappings {
			return out, fmt.Errorf("more than %d mappings", MaxMappings)
		}
		m, err := ParseMapsLine(sc.Text())
		if err != nil {
			return out, err
		}
		out = append(out, m)
	}
	return out, sc.Err()
}

// ParseMapsLine parses "start-end perms offset dev inode   path".
func ParseMapsLine(line string) (Mapping, error) {
	var m Mapping
	rest := line
	field := func() string {
		rest = strings.TrimLeft(rest, " ")
		f, r, _ := strings.Cut(rest, " ")
		rest = r
		return f
	}
	rng, perms, off, dev, ino := field(), field(), field(), field(), field()
	lo, hi, ok := strings.Cut(rng, "-")
	var err1, err2, err3, err4 error
	m.Start, err1 = strconv.ParseUint(lo, 16, 64)
	m.End, err2 = strconv.ParseUint(hi, 16, 64)
	m.Offset, err3 = strconv.ParseUint(off, 16, 64)
	m.Inode, err4 = strconv.ParseUint(ino, 10, 64)
	if !ok || err1 != nil || err2 != nil || err3 != nil || err4 != nil || len(perms) != 4 || m.End < m.Start {
		return Mapping{}, fmt.Errorf("malformed maps line %q", line)
	}
	m.Perms, m.Dev = perms, dev
	m.Path = strings.TrimLeft(rest, " ")
	return m, nil
}
