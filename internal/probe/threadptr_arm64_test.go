//go:build linux

package probe

// userThreadPointer would be the calling thread's TPIDR_EL0 (thread.uw.tp_value, arch.h's
// TASK_USER_TP). Go's arm64 runtime does not set it for its threads without cgo, and Go has
// no portable read of it: 0, the tests that need one skip.
func userThreadPointer() uint64 { return 0 }
