//go:build linux && !amd64

package probe

// userThreadPointer would be the calling thread's user thread pointer (arch.h's
// TASK_USER_TP; on arm64 TPIDR_EL0, kept as thread.uw.tp_value). Go's arm64 runtime does not
// set it for its threads without cgo, and Go has no portable read of it: 0, and the tests
// that need one skip.
func userThreadPointer() uint64 { return 0 }
