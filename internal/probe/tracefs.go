//go:build linux

// tracefs for the loader: the syscall tracepoints (sys_enter_ioctl / sys_exit_ioctl) and
// the classic-tracepoint rungs need it mounted while they are attached (event ids, format
// files); where it is not, the submit ioctls fall to raw_tp sys_enter/sys_exit, which run
// for every syscall of the host. So the loader mounts tracefs itself when nothing is
// mounted (unless Config.NoTracefsMount) and unmounts what it mounted as soon as its hooks
// are attached (an attached tracepoint does not need the mount), so that nothing is left
// mounted even when the process is killed. One mount per process, shared by the loaders
// of it that attach at the same time.

package probe

import (
	"fmt"
	"os"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// tracefsMountPoint is where the loader mounts tracefs (the kernel's own mount point,
// created by the kernel when tracefs is built in).
const tracefsMountPoint = "/sys/kernel/tracing"

var tracefsHeld struct {
	sync.Mutex
	users   int  // loaders holding a tracefs this process mounted
	mounted bool // this process mounted tracefsMountPoint
}

// mountTracefs and unmountTracefs are the system calls; tests count them.
var (
	mountTracefs   = func() error { return unix.Mount("nodev", tracefsMountPoint, "tracefs", 0, "") }
	unmountTracefs = func() error { return unix.Unmount(tracefsMountPoint, 0) }
)

// acquireTracefs makes tracefs available for this loader when it is not: it mounts it
// unless forbidden. It returns the report's one line on tracefs and whether this loader
// holds the mount (then release it with releaseTracefs).
func acquireTracefs(forbid bool) (line string, held bool) {
	tracefsHeld.Lock()
	defer tracefsHeld.Unlock()
	if tracefsHeld.mounted {
		tracefsHeld.users++
		return mountedByUs, true
	}
	if HaveTracefs() == nil {
		return "mounted", false
	}
	if forbid {
		return "not mounted; mounting it is forbidden by the configuration (mount_tracefs: false)", false
	}
	if busy, err := mountedAt(tracefsMountPoint); err == nil && busy != "" {
		// Something else (not tracefs) sits there: never stack a mount on it.
		return fmt.Sprintf("not mounted; %s holds a %s mount, not mounting over it", tracefsMountPoint, busy), false
	}
	if err := mountTracefs(); err != nil {
		return fmt.Sprintf("not mounted; mounting it at %s failed: %v", tracefsMountPoint, err), false
	}
	tracefsHeld.mounted = true
	tracefsHeld.users = 1
	return mountedByUs, true
}

// mountedByUs is the report's tracefs line when the loader mounted it.
const mountedByUs = "mounted by ghostdriver at " + tracefsMountPoint + " to attach, unmounted again"

// releaseTracefs drops one loader's hold; the last one unmounts what this process mounted.
func releaseTracefs() error {
	tracefsHeld.Lock()
	defer tracefsHeld.Unlock()
	if !tracefsHeld.mounted || tracefsHeld.users <= 0 {
		return nil
	}
	tracefsHeld.users--
	if tracefsHeld.users > 0 {
		return nil
	}
	tracefsHeld.mounted = false
	if err := unmountTracefs(); err != nil {
		return fmt.Errorf("unmounting the tracefs ghostdriver mounted at %s: %w", tracefsMountPoint, err)
	}
	return nil
}

// mountedAt returns the file system type mounted at dir ("" when none), from /proc/self/mounts.
func mountedAt(dir string) (string, error) {
	data, err := os.ReadFile("/proc/self/mounts")
	if err != nil {
		return "", err
	}
	fstype := ""
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 3 && f[1] == dir {
			fstype = f[2] // the last one listed is the one on top
		}
	}
	return fstype, nil
}
