//go:build !linux

// Channels are memfds found through /proc: Linux only. Elsewhere the ring and decoder
// still build (and their tests run); finding and mapping a channel says why not.

package cupti

import "errors"

var errNeedsLinux = errors.New("CUPTI channels need Linux: they are memfds found through /proc/<pid>/fd")

// Found is a channel's descriptor as Find saw it.
type Found struct {
	PID, FD int
	Path    string
}

// Channel is one mapped channel (never made here).
type Channel struct {
	PID, FD int
	Path    string
	Ring    *Ring
	Sealed  bool
	NSPID   uint32
}

// Find needs Linux.
func Find(procRoot string) ([]Found, error) { return nil, errNeedsLinux }

// OpenChannel needs Linux.
func OpenChannel(procRoot string, pid, fd int) (*Channel, error) { return nil, errNeedsLinux }

// Drain needs Linux.
func (c *Channel) Drain(fn func(Frame) error) (int, error) { return 0, errNeedsLinux }

// Gone needs Linux.
func (c *Channel) Gone() (string, error) { return "", errNeedsLinux }

// Close does nothing.
func (c *Channel) Close() error { return nil }
