// What the CUDA source reads from procfs: the libcuda/libcudart files mapped by running
// processes (/proc/<pid>/maps, opened through each process's own root), and the NVIDIA
// driver's device majors and ioctl types (/proc/devices).

package cuda

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/ghostdriver/ghostdriver/internal/procfs"
)

// Library is one CUDA library file found mapped by some process. Uprobes attach to the
// file (its inode), so one attach covers every process that maps it, now or later.
type Library struct {
	Layer Layer
	// Path opens the file from this process: /proc/<pid>/root/<mapped path>, so that
	// libraries inside containers are reached through their own mount namespace.
	Path string
	// Mapped is the path as the process mapped it.
	Mapped string
	Dev    uint64
	Ino    uint64
	PID    int // a process that mapped it when it was found
}

// libraryLayer says which layer a mapped file name belongs to, if any: the driver is
// libcuda.so* (not libcudart, libcudnn, libcuda_…), the runtime libcudart.so*.
func libraryLayer(mapped string) (Layer, bool) {
	base := filepath.Base(mapped)
	switch {
	case strings.HasPrefix(base, "libcudart.so"):
		return Runtime, true
	case strings.HasPrefix(base, "libcuda.so"):
		return Driver, true
	}
	return 0, false
}

// mapping is one file-backed line of /proc/<pid>/maps.
type mapping struct {
	start, end, pgoff uint64
	path              string
}

// mapsBounds bound one read of a /proc/<pid>/maps file: the library scan reads every
// process's maps every RescanInterval, and a tenant decides how many mappings its
// processes have. Large JVMs have tens of thousands of mappings at ~100 bytes a line;
// what lies beyond a bound is not seen, and the read counts as truncated
// (Stats.MapsTruncated).
type mapsBounds struct {
	lines int
	bytes int64
}

var defaultMapsBounds = mapsBounds{lines: procfs.MaxMappings, bytes: 32 << 20}

// maxMapsLine: the kernel writes the fixed fields and a path of at most PATH_MAX (4096)
// plus " (deleted)"; a longer line is not a kernel's and ends the read as truncated.
const maxMapsLine = 16 << 10

var (
	// errMapsTruncated: a maps read stopped at one of its bounds.
	errMapsTruncated = errors.New("maps file exceeds the read bounds")
	// errNotMapped: an address is in no file mapping of the process.
	errNotMapped = errors.New("address in no file mapping")
)

// readMaps streams a maps file line by line (without the newline) into visit until visit
// returns false, the file ends, or a bound is reached (errMapsTruncated). Memory is one
// line buffer whatever the file's size.
func readMaps(path string, b mapsBounds, visit func(line []byte) bool) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, maxMapsLine)
	var size int64
	for lines := 0; ; lines++ {
		line, err := r.ReadSlice('\n')
		size += int64(len(line))
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			return fmt.Errorf("%w: a line longer than %d bytes", errMapsTruncated, maxMapsLine)
		case lines >= b.lines && len(line) > 0:
			return fmt.Errorf("%w: more than %d lines", errMapsTruncated, b.lines)
		case size > b.bytes:
			return fmt.Errorf("%w: more than %d bytes", errMapsTruncated, b.bytes)
		}
		if len(line) > 0 && !visit(bytes.TrimSuffix(line, []byte{'\n'})) {
			return nil
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// parseMapsLine parses a file-backed maps line with appctx's parser (the fuzzed one,
// which keeps a path's spaces); it reports false for anonymous and malformed lines.
func parseMapsLine(line []byte) (mapping, bool) {
	m, err := procfs.ParseMapsLine(string(line))
	if err != nil || !strings.HasPrefix(m.Path, "/") {
		return mapping{}, false
	}
	return mapping{start: m.Start, end: m.End, pgoff: m.Offset, path: m.Path}, true
}

// fileOffset translates a virtual address of process pid into (mapped path, file offset).
func fileOffset(procRoot string, pid int, addr uint64, b mapsBounds) (string, uint64, error) {
	var (
		found mapping
		ok    bool
	)
	err := readMaps(filepath.Join(procRoot, strconv.Itoa(pid), "maps"), b, func(line []byte) bool {
		m, file := parseMapsLine(line)
		ok = file && m.start <= addr && addr < m.end
		found = m
		return !ok
	})
	switch {
	case ok:
		return found.path, addr - found.start + found.pgoff, nil
	case err != nil:
		return "", 0, err
	}
	return "", 0, fmt.Errorf("%w: %#x in pid %d", errNotMapped, addr, pid)
}

// NvidiaMajors returns the character-device majors of the NVIDIA driver from
// /proc/devices: "nvidia-frontend" (195: /dev/nvidia*, /dev/nvidiactl), "nvidia-uvm",
// "nvidia-caps" (MIG capability nodes) and the other nvidia-* entries. Add them to the
// live source's device majors (probe.Config.DRMMajors) to see NVIDIA ioctls.
func NvidiaMajors(procDevices string) map[string]uint32 {
	out := map[string]uint32{}
	inChar := false
	for _, line := range strings.Split(procDevices, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "Character devices:":
			inChar = true
			continue
		case line == "Block devices:":
			inChar = false
			continue
		}
		if !inChar {
			continue
		}
		num, name, ok := strings.Cut(line, " ")
		if !ok || !strings.HasPrefix(name, "nvidia") {
			continue
		}
		if n, err := strconv.ParseUint(num, 10, 32); err == nil {
			out[name] = uint32(n)
		}
	}
	return out
}

// NvidiaIoctlTypes returns the _IOC_TYPE bytes of the ioctls of the NVIDIA character
// device registered under name in /proc/devices, for the DRM source's ioctl type gate.
// Only the devices CUDA work goes through are known: the frontend (major 195: nvidiactl
// and nvidia<N>, NV_IOCTL_MAGIC 'F'; nvidia-modeset, NVKMS 'm') and nvidia-uvm (its
// ioctls are plain numbers: UVM_INITIALIZE 0x30000001 and UVM_IOCTL_BASE(i) = i, type 0).
// Others (nvidia-caps, nvidia-nvswitch, nvidia-nvlink, …) report false.
func NvidiaIoctlTypes(name string) ([]uint8, bool) {
	switch name {
	case "nvidia", "nvidiactl", "nvidia-frontend":
		return []uint8{'F', 'm'}, true
	case "nvidia-uvm":
		return []uint8{0}, true
	}
	return nil, false
}
