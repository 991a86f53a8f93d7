package attr

import "testing"

func TestLookupAndAsString(t *testing.T) {
	attrs := []Attribute{
		String("service.name", "first"),
		Int("process.pid", 7),
		{Key: "nested", Value: Value{Kind: KindMap, Map: []Attribute{Bool("ok", true), {Key: "l", Value: Value{Kind: KindArray, Array: []Value{{Kind: KindDouble, Double: 0.5}, {Kind: KindBytes, Bytes: []byte("a\x00")}}}}}}},
		String("service.name", "second"), // a publisher repeated the key: the last one wins
	}
	if v, ok := Lookup(attrs, "service.name"); !ok || v.Str != "second" {
		t.Errorf("service.name = %+v, %v", v, ok)
	}
	if _, ok := Lookup(attrs, "absent"); ok {
		t.Error("absent key found")
	}
	if v, _ := Lookup(attrs, "process.pid"); v.AsString() != "7" {
		t.Errorf("pid %q", v.AsString())
	}
	if v, _ := Lookup(attrs, "nested"); v.AsString() != `{ok=true,l=[0.5,"a\x00"]}` {
		t.Errorf("nested %q", v.AsString())
	}
	if (Value{}).AsString() != "" {
		t.Error("empty value prints something")
	}
}
