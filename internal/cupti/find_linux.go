//go:build linux

// Finding and mapping channels: every process's descriptors are scanned for the
// library's memfd, which is then opened again through /proc/<pid>/fd/<n> (its own open
// file, same memory) and mapped shared.

package cupti

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// ErrForeignChannel: the header's pid is not the process the memfd was found in. A
// forked child inherits its parent's descriptors, the channel among them: that is
// the parent's channel, read through the parent.
var ErrForeignChannel = errors.New("a CUPTI channel in another process than the one that made it")

// Found is a channel's descriptor as Find saw it.
type Found struct {
	PID, FD int
	Path    string // <procRoot>/<pid>/fd/<fd>
}

// Find returns the descriptors of every process under procRoot whose link names the
// channel's memfd ("/memfd:ghostdriver-cupti", " (deleted)" after it as a memfd
// always has), in pid then fd order. Processes whose descriptors cannot be read (gone
// meanwhile, another user's without the privilege) are passed over; only an unreadable
// procRoot is an error.
func Find(procRoot string) ([]Found, error) { return find(procRoot, nil) }

// find is Find passing over the pids skip reports (those the poller already reads:
// their descriptors are not read again each rescan).
func find(procRoot string, skip func(pid int) bool) ([]Found, error) {
	ents, err := os.ReadDir(procRoot)
	if err != nil {
		return nil, fmt.Errorf("finding CUPTI channels: %w", err)
	}
	var out []Found
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 0 || skip != nil && skip(pid) {
			continue
		}
		dir := filepath.Join(procRoot, e.Name(), "fd")
		names, err := readDirNames(dir)
		if err != nil {
			continue
		}
		for _, n := range names {
			fd, err := strconv.Atoi(n)
			if err != nil {
				continue
			}
			p := filepath.Join(dir, n)
			if link, err := os.Readlink(p); err == nil && isChannelLink(link) {
				out = append(out, Found{PID: pid, FD: fd, Path: p})
			}
		}
	}
	slices.SortFunc(out, func(a, b Found) int {
		if a.PID != b.PID {
			return a.PID - b.PID
		}
		return a.FD - b.FD
	})
	return out, nil
}

func readDirNames(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
}

// isChannelLink: the name exactly, not a longer one that starts with it.
func isChannelLink(link string) bool {
	rest, ok := strings.CutPrefix(link, "/memfd:"+ChannelName)
	return ok && (rest == "" || rest == " (deleted)")
}

// Channel is one mapped channel.
type Channel struct {
	PID, FD int    // where it was found
	Path    string // <procRoot>/<pid>/fd/<fd>
	Ring    *Ring
	// Sealed: the memfd is sealed against shrinking (F_SEAL_SHRINK), by the library or
	// by OpenChannel. Unsealed, the process can still shrink it under the mapping; the
	// accesses through Channel and the Poller are guarded, a Ring used directly is not.
	Sealed bool
	// NSPID is the pid the process has in its own pid namespace: what getpid() returned
	// to the library, so what the header's pid must be.
	NSPID uint32

	procRoot string
	mem      []byte
	dev, ino uint64
}

// OpenChannel maps the channel at procRoot/<pid>/fd/<fd> (read and write: the
// collector writes tail, control and its beat) and validates its header. The
// descriptor must be a regular, unlinked file of a channel's size, still the one that
// was stat'ed, and the header's pid must be the process's own; a channel inherited
// from a parent returns an error wrapping ErrForeignChannel.
func OpenChannel(procRoot string, pid, fd int) (*Channel, error) {
	path := filepath.Join(procRoot, strconv.Itoa(pid), "fd", strconv.Itoa(fd))
	// The process can put any file behind the number meanwhile: open only a regular
	// file (a FIFO would block, a device would be opened with the collector's rights),
	// and only the one stat'ed.
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return nil, fmt.Errorf("CUPTI channel %s: %w", path, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, fmt.Errorf("CUPTI channel %s: not a regular file (mode %#o)", path, st.Mode)
	}
	f, err := unix.Open(path, unix.O_RDWR|unix.O_CLOEXEC|unix.O_NONBLOCK|unix.O_NOCTTY, 0)
	if err != nil {
		return nil, fmt.Errorf("CUPTI channel %s: %w", path, err)
	}
	// The mapping keeps the memfd alive: the descriptor is not needed past mmap.
	defer unix.Close(f)
	c := &Channel{PID: pid, FD: fd, Path: path, procRoot: procRoot, dev: st.Dev, ino: st.Ino}
	ok := false
	defer func() {
		if !ok {
			c.Close()
		}
	}()
	if err := unix.Fstat(f, &st); err != nil {
		return nil, fmt.Errorf("CUPTI channel %s: %w", path, err)
	}
	if st.Dev != c.dev || st.Ino != c.ino || st.Nlink != 0 {
		return nil, fmt.Errorf("CUPTI channel %s: replaced while it was opened, or a file with a name (nlink %d), not a memfd", path, st.Nlink)
	}
	if link, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(f)); err == nil && !isChannelLink(link) {
		return nil, fmt.Errorf("CUPTI channel %s: opened %q, not the channel's memfd", path, link)
	}
	// Only shmem files (memfds, tmpfs) answer F_GET_SEALS. Sealing first, then the
	// size: once sealed it cannot get smaller than what fstat says. A memfd made
	// without MFD_ALLOW_SEALING refuses (F_SEAL_SEAL is set).
	seals, err := unix.FcntlInt(uintptr(f), unix.F_GET_SEALS, 0)
	if err != nil {
		return nil, fmt.Errorf("CUPTI channel %s: not a memfd (F_GET_SEALS: %w)", path, err)
	}
	c.Sealed = seals&unix.F_SEAL_SHRINK != 0
	if !c.Sealed {
		_, err = unix.FcntlInt(uintptr(f), unix.F_ADD_SEALS, unix.F_SEAL_SHRINK)
		c.Sealed = err == nil
	}
	if err := unix.Fstat(f, &st); err != nil {
		return nil, fmt.Errorf("CUPTI channel %s: %w", path, err)
	}
	if st.Size < HeaderSize+RingMin || st.Size > HeaderSize+RingMax {
		return nil, fmt.Errorf("CUPTI channel %s: size %d outside [%d, %d]", path, st.Size, HeaderSize+RingMin, HeaderSize+RingMax)
	}
	c.mem, err = unix.Mmap(f, 0, int(st.Size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("CUPTI channel %s: mmap: %w", path, err)
	}
	c.NSPID = nsPID(procRoot, pid)
	var hpid uint32
	if ferr := guard(func() {
		if c.Ring, err = NewRing(c.mem); err == nil {
			hpid = c.Ring.PID()
		}
	}); ferr != nil {
		err = ferr
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if hpid != c.NSPID {
		return nil, fmt.Errorf("%w: channel of pid %d found in pid %d (%s)", ErrForeignChannel, hpid, pid, path)
	}
	ok = true
	return c, nil
}

// nsPID is the last NSpid of procRoot/<pid>/status, the pid in the process's own
// namespace; pid itself where the kernel does not say (before 4.1) or the file is
// unreadable. A process in a container sees itself under a number of its namespace,
// and that is the number the library put in the header.
func nsPID(procRoot string, pid int) uint32 {
	b, err := os.ReadFile(filepath.Join(procRoot, strconv.Itoa(pid), "status"))
	if err == nil {
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			if rest, ok := bytes.CutPrefix(sc.Bytes(), []byte("NSpid:")); ok {
				f := bytes.Fields(rest)
				if len(f) > 0 {
					if n, err := strconv.ParseUint(string(f[len(f)-1]), 10, 32); err == nil {
						return uint32(n)
					}
				}
				break
			}
		}
	}
	return uint32(pid)
}

// Drain is Ring.Drain under the fault guard: a memfd shrunk under the mapping returns
// an error wrapping ErrFault (close the channel then) instead of crashing.
func (c *Channel) Drain(fn func(Frame) error) (n int, err error) {
	if ferr := guard(func() { n, err = c.Ring.Drain(fn) }); ferr != nil {
		return n, ferr
	}
	return n, err
}

// Gone says why the channel is no longer its process's, "" while it is: the process
// exited, the descriptor now names another file (closed; the number reused; the pid
// reused by a new process), or the header's pid changed. Records already in the ring
// are still there to drain: the mapping keeps the memfd alive.
func (c *Channel) Gone() (reason string, err error) {
	var st unix.Stat_t
	if err := unix.Stat(c.Path, &st); err != nil || st.Dev != c.dev || st.Ino != c.ino {
		if _, err := os.Stat(filepath.Join(c.procRoot, strconv.Itoa(c.PID))); err != nil {
			return "the process exited", nil
		}
		return "the descriptor was closed or replaced", nil
	}
	var hpid uint32
	if err := guard(func() { hpid = c.Ring.PID() }); err != nil {
		return "", err
	}
	if hpid != c.NSPID {
		return fmt.Sprintf("the header's pid is now %d", hpid), nil
	}
	return "", nil
}

// Close unmaps the channel (its descriptor was closed once mapped): the memfd is freed
// when the process has closed it too. The Ring is unusable after it.
func (c *Channel) Close() error {
	if c.mem == nil {
		return nil
	}
	err := unix.Munmap(c.mem)
	c.mem = nil
	return err
}
