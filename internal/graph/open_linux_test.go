// Source selection details that need no privileges: the ioctl filter's NVIDIA majors.
package graph

import (
	"os"
	"slices"
	"testing"
)

// With the CUDA source in the graph, the majors of the NVIDIA devices CUDA work goes through (frontend,
// UVM) join the ioctl filter once each, with their ioctl types (so the kernel's type gate
// stays on); nvidia-caps and other NVIDIA devices do not.
func TestNvidiaMajorsJoinTheIoctlFilter(t *testing.T) {
	dir := t.TempDir()
	devices := "Character devices:\n  1 mem\n195 nvidia-frontend\n195 nvidiactl\n226 drm\n238 nvidia-uvm\n241 nvidia-caps\n" +
		"509 nvidia-nvswitch\n\nBlock devices:\n  7 loop\n"
	if err := os.WriteFile(dir+"/devices", []byte(devices), 0o644); err != nil {
		t.Fatal(err)
	}
	got, types := withNvidiaMajors([]uint32{226, 195}, dir)
	if !slices.Equal(got, []uint32{226, 195, 238}) {
		t.Errorf("majors = %v, want [226 195 238]", got)
	}
	if !slices.Equal(types[195], []uint8{'F', 'm'}) || !slices.Equal(types[238], []uint8{0}) || len(types) != 2 {
		t.Errorf("ioctl types = %v, want 195: F m, 238: 0", types)
	}
	if got, types := withNvidiaMajors([]uint32{226}, dir+"/missing"); !slices.Equal(got, []uint32{226}) || types != nil {
		t.Errorf("without /proc/devices: %v %v", got, types)
	}
	// The filter holds at most MaxDRMMajors: a full list is never overrun.
	full := []uint32{226, 1, 2, 3, 4, 5, 6, 7}
	if got, _ := withNvidiaMajors(full, dir); !slices.Equal(got, full) {
		t.Errorf("a full filter grew: %v", got)
	}
	g := &Graph{spec: Spec{ProcRoot: dir, Live: &LiveSpec{}}}
	if pc := g.probeConfig(); !slices.Equal(pc.DRMMajors, []uint32{226}) || pc.IoctlTypes != nil {
		t.Errorf("no CUDA source: majors %v types %v", pc.DRMMajors, pc.IoctlTypes)
	}
	g.spec.CUDA = &CUDASpec{}
	if pc := g.probeConfig(); !slices.Equal(pc.DRMMajors, []uint32{226, 195, 238}) || len(pc.IoctlTypes) != 2 {
		t.Errorf("CUDA source: majors %v types %v", pc.DRMMajors, pc.IoctlTypes)
	}
}
