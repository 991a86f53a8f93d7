// process_vm_readv(2) for ProcessVM.

package appctx

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// ReadMemory implements MemReader with process_vm_readv(2).
func (ProcessVM) ReadMemory(pid uint32, addr uint64, buf []byte) error {
	if len(buf) == 0 {
		return nil
	}
	local := []unix.Iovec{{Base: &buf[0]}}
	local[0].SetLen(len(buf))
	remote := []unix.RemoteIovec{{Base: uintptr(addr), Len: len(buf)}}
	n, err := unix.ProcessVMReadv(int(pid), local, remote, 0)
	if err != nil {
		return fmt.Errorf("process_vm_readv pid %d at %#x: %w", pid, addr, err)
	}
	if n != len(buf) {
		return fmt.Errorf("pid %d at %#x: %w (%d of %d bytes)", pid, addr, ErrShortRead, n, len(buf))
	}
	return nil
}
