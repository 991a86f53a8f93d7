// Per-process search for the module that defines the thread-context TLS symbol.

package appctx

import (
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/ghostdriver/ghostdriver/internal/procfs"
)

// TLSFinder finds and resolves a TLS symbol in running processes. ELF inspection results
// are cached per file (device, inode, path), so a library shared by many processes is
// parsed once. Safe for concurrent use.
type TLSFinder struct {
	ProcRoot string    // "/proc"
	Mem      MemReader // reads the relocated GOT slots
	Symbol   string    // ThreadContextSymbol when empty
	// MaxModules bounds the files examined per process (default 1024).
	MaxModules int

	mu    sync.Mutex
	files map[fileKey]fileResult
}

type fileKey struct {
	dev   string
	inode uint64
	path  string
}

type fileResult struct {
	mod TLSModule
	err error // ErrNoTLSSymbol for the common case
}

const maxCachedFiles = 4096

// Find returns the recipe for pid, or ErrNoTLSSymbol when no mapped module defines the
// symbol. The executable wins over libraries, as in symbol resolution.
func (f *TLSFinder) Find(pid uint32) (TLSAccess, error) {
	a, _, err := f.FindChanged(pid, 0)
	return a, err
}

// FindChanged is Find for a process whose modules were last searched as the set
// fingerprinted last (ModuleSet; 0: never): when its mapped modules are still that set,
// it returns ErrModulesUnchanged without opening any file. It also returns the set's
// fingerprint now (0 when the maps could not be read). The cost of an unchanged check is
// one read of /proc/<pid>/maps.
func (f *TLSFinder) FindChanged(pid uint32, last uint64) (TLSAccess, uint64, error) {
	pidDir := filepath.Join(f.ProcRoot, strconv.FormatUint(uint64(pid), 10))
	mf, err := os.Open(filepath.Join(pidDir, "maps"))
	if err != nil {
		return TLSAccess{}, 0, err
	}
	maps, err := procfs.ParseMaps(mf)
	mf.Close()
	if err != nil {
		return TLSAccess{}, 0, err
	}
	set := ModuleSet(maps)
	if last != 0 && set == last {
		return TLSAccess{}, set, ErrModulesUnchanged
	}
	a, err := f.findIn(pid, pidDir, maps)
	return a, set, err
}

// ErrModulesUnchanged: FindChanged found the same mapped modules as the last search.
var ErrModulesUnchanged = errors.New("mapped modules unchanged since the last search")

// ModuleSet fingerprints the modules a search examines (executable file mappings, by
// device, inode and path, in address order): a library mapped or unmapped since changes
// it. FNV-1a, never 0.
func ModuleSet(maps []procfs.Mapping) uint64 {
	h := uint64(14695981039346656037)
	add := func(s string) {
		for i := 0; i < len(s); i++ {
			h = (h ^ uint64(s[i])) * 1099511628211
		}
		h = (h ^ 0xff) * 1099511628211 // field separator
	}
	for _, mp := range maps {
		if !searchable(mp) {
			continue
		}
		add(mp.Dev)
		add(strconv.FormatUint(mp.Inode, 10))
		add(mp.Path)
	}
	if h == 0 {
		h = 1
	}
	return h
}

// searchable: a mapping a search examines (an executable mapping of a file).
func searchable(mp procfs.Mapping) bool {
	return mp.Inode != 0 && strings.HasPrefix(mp.Path, "/") && strings.Contains(mp.Perms, "x")
}

// findIn searches the parsed maps of pid.
func (f *TLSFinder) findIn(pid uint32, pidDir string, maps []procfs.Mapping) (TLSAccess, error) {
	exe, _ := os.Readlink(filepath.Join(pidDir, "exe"))
	exe = strings.TrimSuffix(exe, " (deleted)")
	symbol := f.Symbol
	if symbol == "" {
		symbol = ThreadContextSymbol
	}
	limit := f.MaxModules
	if limit <= 0 {
		limit = 1024
	}

	type found struct {
		path string
		mod  TLSModule
	}
	var hits []found
	seen := map[fileKey]bool{}
	for _, mp := range maps {
		k := fileKey{mp.Dev, mp.Inode, mp.Path}
		if !searchable(mp) || seen[k] {
			continue
		}
		seen[k] = true
		if len(seen) > limit {
			return TLSAccess{}, fmt.Errorf("more than %d mapped modules", limit)
		}
		mod, err := f.inspect(k, pidDir, mp, symbol)
		if err != nil {
			continue // not ELF, not ours, unreadable: not the defining module
		}
		hits = append(hits, found{mp.Path, mod})
	}
	if len(hits) == 0 {
		return TLSAccess{}, ErrNoTLSSymbol
	}
	pick := hits[0]
	isExe := func(p string) bool { return exe != "" && strings.TrimSuffix(p, " (deleted)") == exe }
	for _, h := range hits {
		if isExe(h.path) {
			pick = h
		}
	}
	pageSize := uint64(os.Getpagesize())
	bias, ok := LoadBias(maps, pick.path, pick.mod, pageSize)
	if !ok {
		return TLSAccess{}, fmt.Errorf("%w: no mapping of %s's first segment", ErrTLSUnresolved, pick.path)
	}
	read := func(addr uint64, buf []byte) error { return f.Mem.ReadMemory(pid, addr, buf) }
	a, err := ResolveTLS(pick.mod, isExe(pick.path), bias, DetectLibc(maps), read)
	a.Module = pick.path
	return a, err
}

func (f *TLSFinder) inspect(k fileKey, pidDir string, mp procfs.Mapping, symbol string) (TLSModule, error) {
	f.mu.Lock()
	r, ok := f.files[k]
	f.mu.Unlock()
	if ok {
		return r.mod, r.err
	}
	r.mod, r.err = inspectFile(pidDir, mp, symbol)
	f.mu.Lock()
	if f.files == nil || len(f.files) >= maxCachedFiles {
		f.files = map[fileKey]fileResult{}
	}
	f.files[k] = r
	f.mu.Unlock()
	return r.mod, r.err
}

// inspectFile opens the module through the process's root (its mount namespace), falling
// back to map_files (works for deleted files, needs CAP_SYS_ADMIN). The tenant can put
// anything at the mapped path by now, so only a regular file is opened (OpenRegular):
// a FIFO there would otherwise block the enrich worker for good.
func inspectFile(pidDir string, mp procfs.Mapping, symbol string) (TLSModule, error) {
	p := strings.TrimSuffix(mp.Path, " (deleted)")
	f, err := procfs.OpenRegular(filepath.Join(pidDir, "root", p))
	if err != nil {
		var err2 error
		f, err2 = procfs.OpenRegularLink(filepath.Join(pidDir, "map_files", fmt.Sprintf("%x-%x", mp.Start, mp.End)))
		if err2 != nil {
			return TLSModule{}, errors.Join(err, err2)
		}
	}
	defer f.Close()
	return InspectTLSFile(f, symbol)
}

// InspectTLSFile is InspectTLS over a file that may be hostile: any mapped file of any
// tenant can be crafted, and debug/elf is not hardened against adversarial input, so a
// panic inside it becomes an error here.
func InspectTLSFile(r io.ReaderAt, symbol string) (m TLSModule, err error) {
	defer func() {
		if p := recover(); p != nil {
			m, err = TLSModule{}, fmt.Errorf("malformed ELF: %v", p)
		}
	}()
	ef, err := elf.NewFile(r)
	if err != nil {
		return TLSModule{}, err
	}
	defer ef.Close()
	return InspectTLS(ef, symbol)
}
