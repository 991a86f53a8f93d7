//go:build linux

package probe

import (
	"strings"
	"testing"

	"github.com/cilium/ebpf/asm"
	"go.uber.org/zap"
)

// syscallsLinkConsts is a value for every link constant the syscalls object reads.
func syscallsLinkConsts() map[string]uint64 {
	vals := map[string]uint64{"gd_cmd_gate": 1, "gd_cmd_types0": 0x11, "gd_cmd_types1": 1 << ('d' - 64),
		"gd_cmd_types2": 0x22, "gd_cmd_types3": 0x33, "gd_hash_inflight": 1, "gd_ioctl_defer": 1,
		"gd_n_majors": 2, "gd_ctx_order0": 1, "gd_ctx_order1": 2}
	for i, m := range []uint64{226, 1, 3, 4, 5, 6, 7, 8} {
		vals["gd_major"+string(rune('0'+i))] = m
	}
	return vals
}

// The syscalls object's link constants are what the loader sets: every immediate load of
// one gets its value, and a constant the loader would not set is refused by name.
func TestLinkConstsOfTheSyscallsObject(t *testing.T) {
	vals := syscallsLinkConsts()
	spec, err := loadSyscalls()
	if err != nil {
		t.Fatal(err)
	}
	used, err := setLinkConsts(spec, vals)
	if err != nil {
		t.Fatal(err)
	}
	for name := range vals {
		if !used[name] {
			t.Errorf("no program reads %s", name)
		}
	}
	for pname, ps := range spec.Programs {
		for _, ins := range ps.Instructions {
			ref := ins.Reference()
			if !strings.HasPrefix(ref, linkConstPrefix) {
				continue
			}
			if !ins.IsConstantLoad(asm.DWord) || uint64(ins.Constant) != vals[ref] {
				t.Errorf("%s: %v reads %s as %#x, want %#x", pname, ins, ref, ins.Constant, vals[ref])
			}
		}
	}
	// The ioctl programs read the gate; the exits read where slots are kept.
	for _, p := range []string{"tp_sys_enter_ioctl", "raw_sys_enter"} {
		if !readsLinkConst(spec.Programs[p].Instructions, "gd_cmd_gate") {
			t.Errorf("%s does not read gd_cmd_gate", p)
		}
	}
	for _, p := range []string{"tp_sys_exit_ioctl", "raw_sys_exit"} {
		if !readsLinkConst(spec.Programs[p].Instructions, "gd_hash_inflight") {
			t.Errorf("%s does not read gd_hash_inflight", p)
		}
	}

	delete(vals, "gd_major5")
	spec, _ = loadSyscalls()
	if _, err := setLinkConsts(spec, vals); err == nil || !strings.Contains(err.Error(), "gd_major5") {
		t.Errorf("a link constant left unset: err %v, want it named", err)
	}
}

// The loader writes the configuration into the syscalls family's link constants (the
// majors in order, unused slots 0) and the deferral flag into every family's.
func TestLoaderSetsLinkConsts(t *testing.T) {
	cfg, err := DefaultConfig().withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	cfg.DRMMajors = []uint32{226, 195, 238}
	requireRoot(t) // creating the maps
	ld := newLoader(cfg, zap.NewNop())
	if err := ld.loadCommon(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ld.objs.close() })
	f, err := ld.family(famSyscalls)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]uint64{"gd_n_majors": 3, "gd_major0": 226, "gd_major1": 195, "gd_major2": 238, "gd_major3": 0,
		"gd_ioctl_defer": uint64(boolU32(ld.defersIoctls())), "gd_hash_inflight": uint64(boolU32(ld.hashInflight()))}
	seen := map[string]bool{}
	for pname, ps := range f.spec.Programs {
		for _, ins := range ps.Instructions {
			if v, ok := want[ins.Reference()]; ok {
				seen[ins.Reference()] = true
				if uint64(ins.Constant) != v {
					t.Errorf("%s reads %s as %d, want %d", pname, ins.Reference(), ins.Constant, v)
				}
			}
		}
	}
	for name := range want {
		if !seen[name] {
			t.Errorf("no program of the loaded family reads %s", name)
		}
	}
	fence, err := ld.family(famFence)
	if err != nil {
		t.Fatal(err)
	}
	if !readsLinkConst(fence.spec.Programs["rawtp_dma_fence_init"].Instructions, "gd_ioctl_defer") {
		t.Error("the fence family's init does not read gd_ioctl_defer (every reservation flushes a deferred ioctl entry)")
	}
}

func readsLinkConst(insns asm.Instructions, name string) bool {
	for _, ins := range insns {
		if ins.Reference() == name {
			return true
		}
	}
	return false
}
