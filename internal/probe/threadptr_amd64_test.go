//go:build linux

package probe

import (
	"syscall"
	"unsafe"
)

// userThreadPointer is the calling thread's FS base, which the kernel keeps as
// thread.fsbase (arch.h's TASK_USER_TP): arch_prctl(ARCH_GET_FS).
func userThreadPointer() uint64 {
	const archGetFS = 0x1003
	var fs uint64
	if _, _, e := syscall.RawSyscall(syscall.SYS_ARCH_PRCTL, archGetFS, uintptr(unsafe.Pointer(&fs)), 0); e != 0 {
		return 0
	}
	return fs
}
