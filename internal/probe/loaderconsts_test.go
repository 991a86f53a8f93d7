//go:build linux

package probe

// The seam between the loader and the objects' constants, checked on the embedded
// objects without root: a name or a size out of step otherwise shows only when a family
// is loaded into a kernel.

import (
	"maps"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/cilium/ebpf/asm"
	"go.uber.org/zap"

	"github.com/ghostdriver/ghostdriver/internal/ctxtier"
)

// Every family configured as the loader configures it (familySpec: the ring size, the
// load-time variables, the link-time constants; the fence filter on, to write it too):
// each link constant a program reads is one the loader sets (setLinkConsts refuses the
// others by name), read as the 64-bit immediate the loader writes, with the loader's
// value; each one the loader sets is read by some program (the syscalls family's by the
// syscalls family; gd_ioctl_defer by every family that reserves records); and each
// variable the loader sets exists at the size it writes (VariableSpec.Set refuses
// another size).
func TestLoaderConstantsMatchTheObjects(t *testing.T) {
	cfg, err := DefaultConfig().withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	cfg.FenceFilter = true
	ld := newLoader(cfg, zap.NewNop())
	readBy := map[string][]string{} // link constant → families reading it
	for _, name := range slices.Sorted(maps.Keys(familySpecs)) {
		spec, err := ld.familySpec(name)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		vals, _, err := ld.linkConsts(name)
		if err != nil {
			t.Fatal(err)
		}
		read := map[string]bool{}
		for pname, ps := range spec.Programs {
			for _, ins := range ps.Instructions {
				ref := ins.Reference()
				if !strings.HasPrefix(ref, linkConstPrefix) {
					continue
				}
				if !ins.IsConstantLoad(asm.DWord) {
					t.Errorf("%s/%s: %v reads %s, not as a 64-bit immediate", name, pname, ins, ref)
				} else if uint64(ins.Constant) != vals[ref] {
					t.Errorf("%s/%s: %s is %#x, the loader's value %#x", name, pname, ref, ins.Constant, vals[ref])
				}
				read[ref] = true
			}
		}
		for ref := range read {
			readBy[ref] = append(readBy[ref], name)
		}
		for ref := range vals {
			if !read[ref] && ref != "gd_ioctl_defer" {
				t.Errorf("%s: the loader sets link constant %s, which no program of the family reads", name, ref)
			}
		}
		if err := setFuncID(spec, 7); err != nil {
			t.Errorf("%s: func_id: %v", name, err)
		}
	}
	if len(readBy["gd_ioctl_defer"]) < 2 {
		t.Errorf("gd_ioctl_defer read by %v, want every family that reserves records", readBy["gd_ioctl_defer"])
	}
	// The variables the loader sets are in the objects it sets them in (familySpec
	// returned no error: wakeup_bytes in every family, fence_filter in fence's) and
	// func_id in the funcs family's.
	funcs, err := ld.familySpec(famFuncs)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := funcs.Variables[funcsVarFuncId]; !ok {
		t.Error("funcs object without func_id")
	}
	for _, name := range slices.Sorted(maps.Keys(familySpecs)) {
		spec, err := familySpecs[name]()
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := spec.Variables[commonVarWakeupBytes]; !ok {
			t.Errorf("%s object without %s", name, commonVarWakeupBytes)
		}
	}
}

// The default OBI pin path ends in the map the syscalls object reads OBI's contexts from.
func TestOBIMapPathNamesTheMap(t *testing.T) {
	if base := path.Base(ctxtier.OBIMapPath); base != syscallsMapTracesCtxV1 || DefaultOBIMapPath != ctxtier.OBIMapPath {
		t.Errorf("default OBI pin %s (probe: %s), the object's map %s", ctxtier.OBIMapPath, DefaultOBIMapPath, syscallsMapTracesCtxV1)
	}
}
