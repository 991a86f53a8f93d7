// The event table's live hooks (internal/eventdef) against the compiled drivers object:
// every row with a hook has its tp_btf and classic programs, every program of the
// drivers family belongs to a row, and the compiled enum hook gives each row's hook the
// table's value (the objects were built from the header generated from this table).

package probe

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"

	"github.com/ghostdriver/ghostdriver/internal/eventdef"
)

func TestEventTableHooksAreTheDriversPrograms(t *testing.T) {
	spec, err := loadDrivers()
	if err != nil {
		t.Fatal(err)
	}
	rowOf := map[string]string{} // program → the row's hook event
	for _, e := range eventdef.Hooks() {
		h := e.Hook
		for _, p := range []string{h.BTFProgram(), h.ClassicProgram()} {
			if spec.Programs[p] == nil {
				t.Errorf("%s: no program %s in bpf/drivers.c", h.Event, p)
			}
			rowOf[p] = h.Event
		}
		if ps := spec.Programs[h.ClassicProgram()]; ps != nil && ps.AttachTo != e.System+"/"+h.Event {
			t.Errorf("%s: classic program attaches to %s, the table says %s/%s", h.Event, ps.AttachTo, e.System, h.Event)
		}
		if ps := spec.Programs[h.BTFProgram()]; ps != nil && (ps.Type != ebpf.Tracing || ps.AttachTo != h.Event) {
			t.Errorf("%s: tp_btf program is %v attached to %q", h.Event, ps.Type, ps.AttachTo)
		}
		found := false
		for _, n := range e.Names {
			found = found || n.Name == h.Event
		}
		if !found {
			t.Errorf("%s: the hook's event is none of the row's names", h.Event)
		}
	}
	for name := range spec.Programs {
		if rowOf[name] == "" {
			t.Errorf("program %s of bpf/drivers.c has no row in the event table", name)
		}
	}

	common, err := loadCommon() // the object whose BTF keeps enum hook (-type hook)
	if err != nil {
		t.Fatal(err)
	}
	var hook *btf.Enum
	if err := common.Types.TypeByName("hook", &hook); err != nil {
		t.Fatal(err)
	}
	values := map[string]uint64{}
	for _, v := range hook.Values {
		values[v.Name] = v.Value
	}
	for _, e := range eventdef.Hooks() {
		if v, ok := values[e.Hook.Enum()]; !ok || v != uint64(e.Hook.Value) {
			t.Errorf("%s: enum hook in the object has %d (present %v), the table %d", e.Hook.Enum(), v, ok, e.Hook.Value)
		}
		if info, ok := hookTable[commonHook(e.Hook.Value)]; !ok || info.kind != e.Kind || info.name != e.Hook.Event {
			t.Errorf("%s: hook table has %+v", e.Hook.Event, info)
		}
	}
}

// The committed bpf/include/driver_hooks.h is the table's (make generate writes it).
func TestDriverHooksHeaderIsGenerated(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", eventdef.CHeaderPath))
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != eventdef.CHeader() {
		t.Errorf("%s is stale: run make generate and commit it", eventdef.CHeaderPath)
	}
}
