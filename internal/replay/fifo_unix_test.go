//go:build unix

package replay

import "syscall"

// mkfifo makes the named pipe the pipe tests read (what trace_pipe behaves like).
func mkfifo(path string) error { return syscall.Mkfifo(path, 0o600) }
