package probe

import (
	"strings"
	"testing"

	"github.com/cilium/ebpf/asm"
)

// The syscalls object's link constants are what the loader sets: every immediate load of
// one gets its value; a name the loader would not set, or one no program reads, is refused.
func TestLinkConstsOfTheSyscallsObject(t *testing.T) {
	vals := map[string]uint64{"gd_cmd_gate": 1, "gd_cmd_types0": 0x11, "gd_cmd_types1": 1 << ('d' - 64),
		"gd_cmd_types2": 0x22, "gd_cmd_types3": 0x33, "gd_hash_inflight": 1}
	spec, err := loadSyscalls()
	if err != nil {
		t.Fatal(err)
	}
	if err := setLinkConsts(spec, vals); err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for pname, ps := range spec.Programs {
		for _, ins := range ps.Instructions {
			ref := ins.Reference()
			if !strings.HasPrefix(ref, linkConstPrefix) {
				continue
			}
			if !ins.IsConstantLoad(asm.DWord) || uint64(ins.Constant) != vals[ref] {
				t.Errorf("%s: %v reads %s as %#x, want %#x", pname, ins, ref, ins.Constant, vals[ref])
			}
			seen[ref]++
		}
	}
	for name := range vals {
		if seen[name] == 0 {
			t.Errorf("no instruction reads %s", name)
		}
	}
	// The ioctl programs read the gate; the exit programs read where slots are kept.
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

	missing := map[string]uint64{}
	for k, v := range vals {
		if k != "gd_cmd_types2" {
			missing[k] = v
		}
	}
	spec, _ = loadSyscalls()
	if err := setLinkConsts(spec, missing); err == nil || !strings.Contains(err.Error(), "gd_cmd_types2") {
		t.Errorf("a link constant left unset: err %v, want it named", err)
	}
	extra := map[string]uint64{"gd_no_such_constant": 1}
	for k, v := range vals {
		extra[k] = v
	}
	spec, _ = loadSyscalls()
	if err := setLinkConsts(spec, extra); err == nil || !strings.Contains(err.Error(), "gd_no_such_constant") {
		t.Errorf("a link constant no program reads: err %v, want it named", err)
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
