// The Event's layout: the garbage collector's cost of copying events (event.go).
package event

import (
	"reflect"
	"testing"
	"unsafe"
)

// Every pointer-holding field comes before every other, so that the part of an Event the
// garbage collector scans and write-barriers when one is copied is the strings alone.
func TestEventPointersFirst(t *testing.T) {
	typ := reflect.TypeOf(Event{})
	var lastPtrEnd uintptr
	firstScalar := ""
	for i := 0; i < typ.NumField(); i++ {
		f := typ.Field(i)
		switch f.Type.Kind() {
		case reflect.String, reflect.Pointer, reflect.Slice, reflect.Map, reflect.Interface:
			if firstScalar != "" {
				t.Errorf("%s (holds a pointer) comes after %s: keep pointer fields first", f.Name, firstScalar)
			}
			lastPtrEnd = f.Offset + f.Type.Size()
		default:
			if firstScalar == "" {
				firstScalar = f.Name
			}
		}
	}
	if n := unsafe.Sizeof(Event{}); n > 336 {
		t.Errorf("Event is %d bytes, over 336: group the small fields", n)
	}
	t.Logf("Event: %d bytes, pointers in the first %d", unsafe.Sizeof(Event{}), lastPtrEnd)
}
