//go:build !linux

// Opening tenant-controlled files outside Linux: there are no tenants' /proc trees to read.

package procfs

import (
	"errors"
	"os"
)

// OpenRegular opens a tenant-controlled regular file; Linux only.
func OpenRegular(string) (*os.File, error) { return nil, errors.New("OpenRegular: Linux only") }

// OpenRegularLink is OpenRegular following a last-component symlink; Linux only.
func OpenRegularLink(string) (*os.File, error) { return nil, errors.New("OpenRegularLink: Linux only") }
