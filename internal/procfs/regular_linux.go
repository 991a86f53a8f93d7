// Opening files that a tenant controls: regular files only, never blocking.

package procfs

import (
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// OpenRegular opens a regular file for reading whose path a tenant controls (a mapped
// file reached through /proc/<pid>/root). A tenant can replace the file behind a mapped
// path at any time: with a FIFO (a plain open blocks until a writer comes: the single
// worker reading it hangs), a device node (opening one can have side effects, and we
// open it as root outside the tenant's device cgroup), or a symlink out of its root. So
// the last component is resolved without following a symlink and opened O_PATH (no
// open of the object itself), its type checked, and only a regular file is then opened
// for reading, through /proc/self/fd (O_NONBLOCK, O_CLOEXEC). Anything else, a symlink
// included, is an error wrapping ErrNotRegular.
//
// Components before the last are followed: a tenant that swaps a directory for a symlink
// can point us at another regular file (of the host, resolved from our root), which is
// then parsed as hostile input like any of its own files.
func OpenRegular(path string) (*os.File, error) {
	return openRegular(path, unix.O_NOFOLLOW)
}

// OpenRegularLink is OpenRegular following a symlink in the last component: for the
// kernel's own links (/proc/<pid>/map_files/<range>, which a tenant cannot redirect) and
// for paths the operator configured.
func OpenRegularLink(path string) (*os.File, error) {
	return openRegular(path, 0)
}

func openRegular(path string, follow int) (*os.File, error) {
	pfd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC|follow, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(pfd)
	var st unix.Stat_t
	if err := unix.Fstat(pfd, &st); err != nil {
		return nil, &os.PathError{Op: "fstat", Path: path, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, fmt.Errorf("%s: %w (%s)", path, ErrNotRegular, fileType(st.Mode))
	}
	fd, err := unix.Open("/proc/self/fd/"+strconv.Itoa(pfd), unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}

func fileType(mode uint32) string {
	switch mode & unix.S_IFMT {
	case unix.S_IFIFO:
		return "fifo"
	case unix.S_IFCHR:
		return "character device"
	case unix.S_IFBLK:
		return "block device"
	case unix.S_IFSOCK:
		return "socket"
	case unix.S_IFDIR:
		return "directory"
	case unix.S_IFLNK:
		return "symlink"
	}
	return fmt.Sprintf("mode %#o", mode&unix.S_IFMT)
}
