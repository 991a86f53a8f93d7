// GPU devices from sysfs: /sys/class/drm/<node>/device → PCI function, driver, SR-IOV.

package tenant

import (
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Device is one DRM device (a card and its render node share one Device).
type Device struct {
	Nodes      []string // "card0", "renderD128"
	Name       string   // dev_name of the DRM device's parent: PCI address, "virtio0", "fd00000.gpu"
	PCIAddress string   // the PCI function (for virtio-gpu: the PCI device under the virtio device)
	Driver     string   // basename of device/driver
	SRIOVVF    bool     // the PCI function is an SR-IOV virtual function (has physfn)
	VendorID   uint16
	Vendor     string // hw.vendor, for the vendor ids in pciVendors
}

// pciVendors names the PCI vendor ids of GPUs and virtual GPUs (pci.ids).
var pciVendors = map[uint16]string{
	0x1002: "AMD",
	0x10de: "NVIDIA",
	0x8086: "Intel",
	0x1af4: "Red Hat (virtio)",
	0x1234: "QEMU",
	0x15ad: "VMware",
	0x1414: "Microsoft",
	0x5143: "Qualcomm",
	0x1ed5: "Moore Threads",
}

// ScanDevices reads every DRM card and render node under sysRoot/class/drm.
func ScanDevices(sysRoot string) ([]Device, error) {
	dir := filepath.Join(sysRoot, "class", "drm")
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	byPath := map[string]*Device{}
	var order []string
	for _, e := range ents {
		n := e.Name()
		if !isDRMNode(n) {
			continue // connectors ("card0-DP-1"), "version"
		}
		devPath, err := filepath.EvalSymlinks(filepath.Join(dir, n, "device"))
		if err != nil {
			continue
		}
		d := byPath[devPath]
		if d == nil {
			d = readDevice(devPath)
			byPath[devPath] = d
			order = append(order, devPath)
		}
		d.Nodes = append(d.Nodes, n)
	}
	out := make([]Device, 0, len(order))
	for _, p := range order {
		sort.Strings(byPath[p].Nodes)
		out = append(out, *byPath[p])
	}
	return out, nil
}

func isDRMNode(n string) bool {
	for _, p := range []string{"card", "renderD"} {
		if rest, ok := strings.CutPrefix(n, p); ok && rest != "" {
			_, err := strconv.Atoi(rest)
			return err == nil
		}
	}
	return false
}

// readDevice describes the device directory (symlinks resolved) of a DRM node.
func readDevice(devPath string) *Device {
	d := &Device{Name: filepath.Base(devPath)}
	if drv, err := os.Readlink(filepath.Join(devPath, "driver")); err == nil {
		d.Driver = filepath.Base(drv)
	}
	// The PCI function is the device itself or, for virtio-gpu, an ancestor.
	for p := devPath; p != "/" && p != "." && p != ""; p = filepath.Dir(p) {
		if isPCIAddress(filepath.Base(p)) {
			d.PCIAddress = filepath.Base(p)
			if _, err := os.Lstat(filepath.Join(p, "physfn")); err == nil {
				d.SRIOVVF = true
			}
			if b, err := readBounded(filepath.Join(p, "vendor"), 32); err == nil {
				if v, err := strconv.ParseUint(strings.TrimSpace(string(b)), 0, 16); err == nil {
					d.VendorID, d.Vendor = uint16(v), pciVendors[uint16(v)]
				}
			}
			break
		}
	}
	return d
}

// isPCIAddress: "0000:03:00.0" (domain may be longer than 4 hex digits on some hosts).
func isPCIAddress(s string) bool {
	dom, rest, ok := strings.Cut(s, ":")
	if !ok || len(dom) < 4 || len(rest) != 7 || rest[2] != ':' || rest[5] != '.' {
		return false
	}
	for _, c := range []byte(dom + rest[0:2] + rest[3:5]) {
		if !isLowerHex(c) {
			return false
		}
	}
	return rest[6] >= '0' && rest[6] <= '7'
}
