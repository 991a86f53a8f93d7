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
// references one of its names, and returns the names some program reads. A program that
// reads a link constant vals does not name is an error (the object and the loader out of
// step); which names must be read is the caller's to check.
func setLinkConsts(spec *ebpf.CollectionSpec, vals map[string]uint64) (map[string]bool, error) {
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
				return nil, fmt.Errorf("program %s reads link constant %s, which the loader does not set", pname, ref)
			}
			ins.Constant = int64(v)
			used[ref] = true
		}
	}
	return used, nil
}
