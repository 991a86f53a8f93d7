// The tracefs events ("system/event") behind the loader's classic-tracepoint rungs, read
// from the hook table (hooks.go) and the programs' own attach targets: what a capture
// made with trace-cmd or Perfetto must enable to see what the live source sees (the
// README's recording lines are checked against it).

package probe

import (
	"fmt"

	"github.com/cilium/ebpf"
)

// TracefsEvents returns "system/event" for every tracepoint the default hook table can
// attach as a classic tracepoint, in table order, once each.
func TracefsEvents() ([]string, error) {
	cfg, err := DefaultConfig().withDefaults()
	if err != nil {
		return nil, err
	}
	specs := map[string]*ebpf.CollectionSpec{}
	var out []string
	seen := map[string]bool{}
	for _, d := range hookDefs(cfg) {
		if d.stage == StageIRQ && len(cfg.IRQNames) == 0 {
			continue // opt-in (Config.IRQNames), and no stage uses interrupts
		}
		for _, r := range d.rungs {
			spec, ok := specs[r.family]
			if !ok {
				load, known := familySpecs[r.family]
				if !known {
					return nil, fmt.Errorf("hook %s: unknown family %q", d.event, r.family)
				}
				if spec, err = load(); err != nil {
					return nil, fmt.Errorf("family %s: %w", r.family, err)
				}
				specs[r.family] = spec
			}
			for _, p := range r.progs {
				ps, ok := spec.Programs[p]
				if !ok {
					return nil, fmt.Errorf("hook %s: no program %s in family %s", d.event, p, r.family)
				}
				if ps.Type != ebpf.TracePoint || seen[ps.AttachTo] {
					continue
				}
				seen[ps.AttachTo] = true
				out = append(out, ps.AttachTo)
			}
		}
	}
	return out, nil
}
