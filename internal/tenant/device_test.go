// DRM devices from a sysfs tree shaped like the real one (testdata/sys): an AMD dGPU with
// a connector, an Intel SR-IOV virtual function bound to xe, a virtio-gpu under its PCI
// function.
package tenant

import (
	"reflect"
	"testing"

	"github.com/ghostdriver/ghostdriver/internal/attr"
)

func TestScanDevices(t *testing.T) {
	got, err := ScanDevices("testdata/sys")
	if err != nil {
		t.Fatal(err)
	}
	want := []Device{
		{Nodes: []string{"card0", "renderD128"}, Name: "0000:03:00.0", PCIAddress: "0000:03:00.0", Driver: "amdgpu", VendorID: 0x1002, Vendor: "AMD"},
		{Nodes: []string{"card1", "renderD129"}, Name: "0000:00:02.1", PCIAddress: "0000:00:02.1", Driver: "xe", SRIOVVF: true, VendorID: 0x8086, Vendor: "Intel"},
		{Nodes: []string{"card2", "renderD130"}, Name: "virtio1", PCIAddress: "0000:00:04.0", Driver: "virtio_gpu", VendorID: 0x1af4, Vendor: "Red Hat (virtio)"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %+v\nwant %+v", got, want)
	}
	wantAttrs := []attr.Attribute{attr.String(KeyHWType, "gpu"), attr.String(KeyDevice, "virtio1"),
		attr.String(KeyGPUPCIAddress, "0000:00:04.0"), attr.String(KeyGPUDriver, "virtio_gpu"),
		attr.String(KeyHWVendor, "Red Hat (virtio)"), attr.Bool(KeyGPUSRIOVVF, false)}
	if a := got[2].Attributes(); !reflect.DeepEqual(a, wantAttrs) {
		t.Errorf("virtio-gpu attributes %+v", a)
	}
	if _, err := ScanDevices("testdata/nonexistent"); err == nil {
		t.Error("missing sysfs accepted")
	}
}

func TestIsPCIAddress(t *testing.T) {
	for s, want := range map[string]bool{"0000:03:00.0": true, "10000:00:1f.7": true, "0000:03:00.8": false,
		"0000:03:00": false, "virtio1": false, "0000:0G:00.0": false, "pci0000:00": false} {
		if isPCIAddress(s) != want {
			t.Errorf("isPCIAddress(%q) != %v", s, want)
		}
	}
}
