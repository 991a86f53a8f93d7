// Reading another process's memory. An interface so tests can serve fake memory.

package appctx

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
)

// MemReader reads len(buf) bytes at addr of process pid, all or nothing.
type MemReader interface {
	ReadMemory(pid uint32, addr uint64, buf []byte) error
}

// ErrShortRead is returned when the target's memory ended (or was unmapped) mid-read.
var ErrShortRead = errors.New("short read of process memory")

// ProcessVM reads with process_vm_readv(2): no ptrace stop, one syscall per read. It needs
// CAP_SYS_PTRACE (or the same uid and a permissive ptrace_scope) over the target.
type ProcessVM struct{}

// ProcMem reads through /proc/<pid>/mem (root, or ptrace access to the target). Slower
// than ProcessVM (open per read) but it works where process_vm_readv is filtered.
type ProcMem struct{ ProcRoot string }

// ReadMemory implements MemReader.
func (p ProcMem) ReadMemory(pid uint32, addr uint64, buf []byte) error {
	if addr > math.MaxInt64-uint64(len(buf)) {
		return fmt.Errorf("address %#x out of range", addr)
	}
	f, err := os.Open(filepath.Join(p.ProcRoot, strconv.FormatUint(uint64(pid), 10), "mem"))
	if err != nil {
		return err
	}
	defer f.Close()
	n, err := f.ReadAt(buf, int64(addr))
	if n == len(buf) {
		return nil
	}
	return fmt.Errorf("pid %d at %#x: %w (%d of %d bytes): %v", pid, addr, ErrShortRead, n, len(buf), err)
}
