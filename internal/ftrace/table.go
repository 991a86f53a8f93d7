// The decoder's view of the one table of kernel events (internal/eventdef): every name
// an event is printed under, the Kind it becomes, and the print formats of every
// generation. Nothing about kernels lives here; this file only flattens the table into
// one entry per printed name.

package ftrace

import (
	"github.com/ghostdriver/ghostdriver/internal/event"
	"github.com/ghostdriver/ghostdriver/internal/eventdef"
)

// format is one print format of an event family (eventdef.Format).
type format struct {
	printk string
	args   string
	src    string
}

// family is a set of events that share their print formats across generations.
type family struct {
	name    string
	formats []format
}

// eventSpec is one event name as it appears in a trace line.
type eventSpec struct {
	name       string     // as printed after the timestamp
	tracepoint string     // Event.Name: the tracepoint's own name, when the line prints another
	kind       event.Kind // KindUnknown: known, deliberately not decoded (counted in Unknown)
	driver     string     // Event.Driver for driver-specific events
	system     string     // the TRACE_SYSTEM of a driver's own event ("" for the core's)
	fam        *family    // nil for markers and for known-but-unused events
	note       string     // the kernels that print the name, or why it is not decoded
}

// ioctlNR is the ioctl syscall number raw_syscalls events are filtered on.
const ioctlNR = eventdef.IoctlNR

// events is every event name the decoder knows, in table order.
var events = flatten(eventdef.Events())

// flatten makes one eventSpec per printed name; rows that share a family share it.
// Within a run of rows of one family, the older names of every row come before the
// current ones (i915's i915_gem_request_* before its i915_request_*), the order a
// recorder enables them in (DecodedTracepoints).
func flatten(rows []eventdef.Event) []eventSpec {
	fams := map[*eventdef.Family]*family{}
	var out []eventSpec
	for i := 0; i < len(rows); {
		j := i + 1
		for j < len(rows) && rows[j].Formats != nil && rows[j].Formats == rows[i].Formats {
			j++
		}
		for _, current := range []bool{false, true} {
			for _, r := range rows[i:j] {
				for k, n := range r.Names {
					if (k == len(r.Names)-1) == current {
						out = append(out, nameSpec(r, n, fams))
					}
				}
			}
		}
		i = j
	}
	return out
}

// nameSpec is the entry of name n of row r.
func nameSpec(r eventdef.Event, n eventdef.Name, fams map[*eventdef.Family]*family) eventSpec {
	var fam *family
	if r.Formats != nil {
		if fam = fams[r.Formats]; fam == nil {
			fam = &family{name: r.Formats.Name}
			for _, f := range r.Formats.Formats {
				fam.formats = append(fam.formats, format{f.Printk, f.Args, f.Src})
			}
			fams[r.Formats] = fam
		}
	}
	driver := r.Driver
	if r.Kind == event.KindUnknown {
		driver = ""
	}
	note := n.Kernels
	if note == "" {
		note = r.Note
	}
	return eventSpec{name: n.Name, tracepoint: r.Tracepoint, kind: r.Kind, driver: driver, system: r.System, fam: fam, note: note}
}
