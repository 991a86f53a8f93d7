// DRM clients of a process, from /proc/<pid>/fdinfo (Documentation/gpu/drm-usage-stats.rst).

package tenant

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// DRMClient is one open DRM file of a process.
type DRMClient struct {
	Fd         int
	Driver     string // drm-driver (mandatory: it is what makes an fdinfo a DRM one)
	ClientID   uint64 // drm-client-id
	HasID      bool
	ClientName string // drm-client-name (DRM_IOCTL_SET_CLIENT_NAME, 6.15+)
	PDev       string // drm-pdev: PCI address (or platform name) of the device
	Engines    []DRMEngine
}

// DRMEngine is one drm-engine-<name> line: busy time so far, and the engine's capacity.
type DRMEngine struct {
	Name     string
	BusyNs   uint64
	Capacity uint64 // drm-engine-capacity-<name>; 1 when absent
}

const (
	maxFdinfo     = 64 << 10
	maxDRMEngines = 64
)

// ParseFdinfo parses an fdinfo file; ok is false when it is not a DRM file (no drm-driver).
// Unknown keys are ignored; values are sanitised to printable UTF-8.
func ParseFdinfo(b []byte) (c DRMClient, ok bool) {
	if len(b) > maxFdinfo {
		b = b[:maxFdinfo]
	}
	capacity := map[string]uint64{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 1024), maxFdinfo)
	for sc.Scan() {
		k, v, found := strings.Cut(sc.Text(), ":")
		if !found || !strings.HasPrefix(k, "drm-") {
			continue
		}
		v = strings.TrimSpace(v)
		switch {
		case k == "drm-driver":
			c.Driver, ok = sanitize([]byte(v), 64), v != ""
		case k == "drm-client-id":
			if id, err := strconv.ParseUint(v, 10, 64); err == nil {
				c.ClientID, c.HasID = id, true
			}
		case k == "drm-client-name":
			c.ClientName = sanitize([]byte(v), 256)
		case k == "drm-pdev":
			c.PDev = sanitize([]byte(v), 64)
		case strings.HasPrefix(k, "drm-engine-capacity-"):
			if n, err := strconv.ParseUint(v, 10, 64); err == nil {
				capacity[k[len("drm-engine-capacity-"):]] = n
			}
		case strings.HasPrefix(k, "drm-engine-"):
			num, unit, _ := strings.Cut(v, " ")
			ns, err := strconv.ParseUint(num, 10, 64)
			if err != nil || unit != "ns" || len(c.Engines) == maxDRMEngines {
				continue
			}
			c.Engines = append(c.Engines, DRMEngine{Name: sanitize([]byte(k[len("drm-engine-"):]), 64), BusyNs: ns, Capacity: 1})
		}
	}
	for i := range c.Engines {
		if n, found := capacity[c.Engines[i].Name]; found {
			c.Engines[i].Capacity = n
		}
	}
	return c, ok
}

// fdScan is what one pass over /proc/<pid>/fd found.
type fdScan struct {
	drm      []DRMClient
	capLinks []string // NVIDIA capability files the process holds (MIG attribution)
}

// deviceLinkSkips are /dev nodes every process has and that are never GPUs.
var deviceLinkSkips = []string{"/dev/null", "/dev/zero", "/dev/random", "/dev/urandom", "/dev/pts/",
	"/dev/tty", "/dev/ptmx", "/dev/shm/", "/dev/console", "/dev/kmsg", "/dev/log"}

// scanFds lists the process's fds (at most maxFds), reads fdinfo only for device files,
// and keeps those whose fdinfo has drm-driver. Clients are de-duplicated by client id
// (dup'ed fds share one DRM file).
func scanFds(pidDir string, maxFds int) fdScan {
	var out fdScan
	d, err := os.Open(filepath.Join(pidDir, "fd"))
	if err != nil {
		return out
	}
	names, _ := d.Readdirnames(maxFds)
	d.Close()
	fds := make([]int, 0, len(names))
	for _, name := range names {
		if fd, err := strconv.Atoi(name); err == nil {
			fds = append(fds, fd)
		}
	}
	sort.Ints(fds) // lowest fd first: the client a process opened first
	seen := map[uint64]bool{}
	for _, fd := range fds {
		name := strconv.Itoa(fd)
		link, err := os.Readlink(filepath.Join(pidDir, "fd", name))
		if err != nil {
			continue
		}
		if strings.HasPrefix(link, "/dev/nvidia-caps/") || strings.HasPrefix(link, "/proc/driver/nvidia/capabilities/") {
			out.capLinks = append(out.capLinks, link)
			continue
		}
		if !strings.HasPrefix(link, "/dev/") || skipDeviceLink(link) {
			continue
		}
		b, err := readBounded(filepath.Join(pidDir, "fdinfo", name), maxFdinfo)
		if err != nil {
			continue
		}
		c, ok := ParseFdinfo(b)
		if !ok || (c.HasID && seen[c.ClientID]) {
			continue
		}
		c.Fd = fd
		if c.HasID {
			seen[c.ClientID] = true
		}
		out.drm = append(out.drm, c)
	}
	return out
}

func skipDeviceLink(link string) bool {
	for _, s := range deviceLinkSkips {
		if link == s || strings.HasSuffix(s, "/") && strings.HasPrefix(link, s) || s == "/dev/tty" && strings.HasPrefix(link, s) {
			return true
		}
	}
	return false
}
