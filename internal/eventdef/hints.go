// What to tell someone whose capture or host has a driver's events but none that bounds
// a job: the driver's events the table decodes, and how to record them.

package eventdef

import (
	"sort"
	"strings"
)

// DriverOf is the driver of an event name: its row's, or the driver whose name prefixes
// it ("v3d_" for an event of v3d the table does not list).
func DriverOf(name string) (string, bool) {
	for _, e := range events {
		for _, n := range e.Names {
			if n.Name == name && e.Driver != "" {
				return e.Driver, true
			}
		}
	}
	for _, d := range driverNames() {
		if strings.HasPrefix(name, d+"_") {
			return d, true
		}
	}
	return "", false
}

// driverNames are the table's drivers, longest first (virtio_gpu before a shorter prefix).
func driverNames() []string {
	seen := map[string]bool{}
	var out []string
	for _, e := range events {
		if e.Driver != "" && !seen[e.Driver] {
			seen[e.Driver] = true
			out = append(out, e.Driver)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

// JobEvents are the driver's events that bound its jobs (rows with points), every name.
func JobEvents(driver string) []string {
	var out []string
	for _, e := range events {
		if e.Driver != driver || len(e.Points) == 0 {
			continue
		}
		for _, n := range e.Names {
			out = append(out, n.Name)
		}
	}
	return out
}

// systemOf is the TRACE_SYSTEM of a driver's rows ("" when none says).
func systemOf(driver string) string {
	for _, e := range events {
		if e.Driver == driver && e.System != "" {
			return e.System
		}
	}
	return ""
}

// RecordHint says, for one driver, which events bound its jobs and how to record them.
func RecordHint(driver string) string {
	rec := "trace-cmd record -e gpu_scheduler -e dma_fence"
	sys := systemOf(driver)
	if sys != "" {
		rec += " -e " + sys
	}
	rec += " (or `ghostdriver record`)"
	if ev := JobEvents(driver); len(ev) > 0 {
		return driver + "'s events that bound a job are " + strings.Join(ev, ", ") +
			" (with gpu_scheduler's and dma_fence's where the driver uses them): record them with " + rec
	}
	return "ghostdriver reads none of " + driver + "'s own events as a job's: its jobs come from gpu_scheduler:* and " +
		"dma_fence:* where the driver uses the DRM scheduler: record them with " + rec
}
