// Link-time constants (bpf/include/link_const.h): configuration written into the
// instructions that read it, instead of .rodata variables, on the paths every ioctl of
// the host runs.
package probe

import (
	"fmt"
	"strings"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
)

// linkConstPrefix starts the name of every link-time constant.
const linkConstPrefix = "gd_"

// setLinkConsts writes vals into every 64-bit immediate load of spec's programs that
// references one of its names. A program that reads a link constant vals does not name is
// an error (the object and the loader out of step), and so is a name no program reads.
func setLinkConsts(spec *ebpf.CollectionSpec, vals map[string]uint64) error {
	used := map[string]bool{}
	for pname, ps := range spec.Programs {
		for i := range ps.Instructions {
			ins := &ps.Instructions[i]
			ref := ins.Reference()
			if !strings.HasPrefix(ref, linkConstPrefix) || !ins.IsConstantLoad(asm.DWord) {
				continue
			}
			v, ok := vals[ref]
			if !ok {
				return fmt.Errorf("program %s reads link constant %s, which the loader does not set", pname, ref)
			}
			ins.Constant = int64(v)
			used[ref] = true
		}
	}
	for name := range vals {
		if !used[name] {
			return fmt.Errorf("no program reads link constant %s", name)
		}
	}
	return nil
}
