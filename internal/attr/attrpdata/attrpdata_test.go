package attrpdata

import (
	"reflect"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/ghostdriver/ghostdriver/internal/attr"
)

// Every kind lands as the pcommon value of the same type, read back with pcommon's own
// AsRaw; a repeated key keeps the last value, and a key already in the map is replaced.
func TestPutEveryKind(t *testing.T) {
	m := pcommon.NewMap()
	m.PutStr("service.name", "before")
	Put(m, []attr.Attribute{
		attr.String("service.name", "trainer"),
		attr.Int("process.pid", 4242),
		attr.Bool("ml.distributed", true),
		{Key: "ml.lr", Value: attr.Value{Kind: attr.KindDouble, Double: 3e-4}},
		{Key: "blob", Value: attr.Value{Kind: attr.KindBytes, Bytes: []byte{0, 1, 2}}},
		{Key: "list", Value: attr.Value{Kind: attr.KindArray, Array: []attr.Value{{Kind: attr.KindString, Str: "a"}, {Kind: attr.KindInt, Int: 7}}}},
		{Key: "nested", Value: attr.Value{Kind: attr.KindMap, Map: []attr.Attribute{attr.String("a", "b"), attr.String("a", "c")}}},
		{Key: "empty"},
		attr.Int("process.pid", 4243),
	})
	want := map[string]any{
		"service.name":   "trainer",
		"process.pid":    int64(4243),
		"ml.distributed": true,
		"ml.lr":          3e-4,
		"blob":           []byte{0, 1, 2},
		"list":           []any{"a", int64(7)},
		"nested":         map[string]any{"a": "c"},
		"empty":          nil,
	}
	if got := m.AsRaw(); !reflect.DeepEqual(got, want) {
		t.Errorf("got  %#v\nwant %#v", got, want)
	}
	if v, _ := m.Get("blob"); v.Type() != pcommon.ValueTypeBytes {
		t.Errorf("blob is %s, want Bytes", v.Type())
	}
}
