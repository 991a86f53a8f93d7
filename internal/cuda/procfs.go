package cuda

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
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

func parseMaps(data []byte, keep func(path string) bool) []mapping {
	var out []mapping
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		// start-end perms offset dev inode path
		f := strings.Fields(sc.Text())
		if len(f) < 6 || !strings.HasPrefix(f[5], "/") {
			continue
		}
		path := strings.Join(f[5:], " ")
		if keep != nil && !keep(path) {
			continue
		}
		lo, hi, ok := strings.Cut(f[0], "-")
		if !ok {
			continue
		}
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		off, err3 := strconv.ParseUint(f[2], 16, 64)
		if err1 != nil || err2 != nil || err3 != nil {
			continue
		}
		out = append(out, mapping{start: start, end: end, pgoff: off, path: path})
	}
	return out
}

// fileOffset translates a virtual address of process pid into (mapped path, file offset).
func fileOffset(procRoot string, pid int, addr uint64) (string, uint64, error) {
	data, err := os.ReadFile(filepath.Join(procRoot, strconv.Itoa(pid), "maps"))
	if err != nil {
		return "", 0, err
	}
	for _, m := range parseMaps(data, nil) {
		if m.start <= addr && addr < m.end {
			return m.path, addr - m.start + m.pgoff, nil
		}
	}
	return "", 0, fmt.Errorf("address %#x is in no file mapping of pid %d", addr, pid)
}

// scanLibraries walks every process's maps and returns the CUDA library files not in
// known (keyed by dev/inode), each once.
func scanLibraries(procRoot string, known map[[2]uint64]bool) []Library {
	ents, err := os.ReadDir(procRoot)
	if err != nil {
		return nil
	}
	seen := map[[2]uint64]bool{}
	var out []Library
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join(procRoot, e.Name(), "maps"))
		if err != nil || !bytes.Contains(data, []byte("libcuda")) {
			continue
		}
		for _, m := range parseMaps(data, func(p string) bool { _, ok := libraryLayer(p); return ok }) {
			layer, _ := libraryLayer(m.path)
			path := filepath.Join(procRoot, e.Name(), "root", m.path)
			var st syscall.Stat_t
			if err := syscall.Stat(path, &st); err != nil {
				continue
			}
			key := [2]uint64{uint64(st.Dev), st.Ino}
			if known[key] || seen[key] {
				continue
			}
			seen[key] = true
			out = append(out, Library{Layer: layer, Path: path, Mapped: m.path, Dev: key[0], Ino: key[1], PID: pid})
		}
	}
	return out
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
