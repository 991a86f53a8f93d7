//go:build !linux

// ProcessVM outside Linux: there is no process_vm_readv.

package appctx

import "errors"

// ReadMemory implements MemReader; reading another process's memory is Linux only.
func (ProcessVM) ReadMemory(uint32, uint64, []byte) error {
	return errors.New("process_vm_readv: Linux only")
}
