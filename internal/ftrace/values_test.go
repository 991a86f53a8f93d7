package ftrace

import (
	"errors"
	"testing"

	"github.com/ghostdriver/ghostdriver/internal/event"
)

// DecodeValues reads the same table as Decode: the values of a line's arguments give the
// Event the line gives.
func TestDecodeValuesAsTheLine(t *testing.T) {
	const printk = "dev=%u, engine=%u:%u, ctx=%llu, seqno=%u, tail=%u"
	f, ok := FormatOf("i915_request_add", printk)
	if !ok {
		t.Fatal("i915_request_add's LTS format not in the table")
	}
	var want event.Event
	line := "  gem_exec-812  [002] 88.000000125: i915_request_add: dev=0, engine=1:2, ctx=42, seqno=7, tail=128"
	if !NewDecoder().Decode([]byte(line), 1, &want) {
		t.Fatal("the line does not decode")
	}
	d := NewDecoder()
	var got event.Event
	args := []Arg{{N: 0, Text: []byte("0")}, {N: 1, Text: []byte("1")}, {N: 2, Text: []byte("2")}, {N: 42}, {N: 7}, {N: 128}}
	for i := range args {
		if f.TextArg(i) != (args[i].Text != nil) {
			t.Errorf("argument %d: TextArg %v", i, f.TextArg(i))
		}
	}
	if err := d.DecodeValues(f, args, &got); err != nil {
		t.Fatal(err)
	}
	// The line's header fields are the caller's to set.
	want.Time, want.CPU, want.PID, want.TID, want.Comm = 0, 0, 0, 0, ""
	if got != want {
		t.Errorf("values %+v\nline   %+v", got, want)
	}
	if got.Ring != "1:2" || got.Fence != (event.FenceKey{Context: 42, Seqno: 7}) {
		t.Errorf("ring %q fence %v", got.Ring, got.Fence)
	}
	if st := d.Stats(); st.Events[event.I915RequestAdd] != 1 {
		t.Errorf("not counted: %+v", st.Events)
	}

	if err := d.DecodeValues(f, args[:2], &got); err == nil {
		t.Error("two values for six arguments decoded")
	}
	raw, ok := FormatOf("sys_enter", "NR %ld (%lx, %lx, %lx, %lx, %lx, %lx)")
	if !ok {
		t.Fatal("raw_syscalls sys_enter not in the table")
	}
	if err := d.DecodeValues(raw, make([]Arg, 7), &got); !errors.Is(err, ErrNotOurs) || d.Stats().Unknown["sys_enter"] != 1 {
		t.Errorf("NR 0 (read): %v, unknown %v", err, d.Stats().Unknown)
	}
	if _, ok := FormatOf("i915_request_add", "dev=%u engine=%s"); ok {
		t.Error("a print fmt the table does not have was read")
	}
	if _, ok := FormatOf("print", "%s"); ok {
		t.Error("a marker has no values to decode")
	}
}
