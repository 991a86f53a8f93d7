// Attribute helpers: tenant attributes into pdata, and the process/thread naming rules
// shared by spans, resources and metric dimensions.

package emit

import (
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/ghostdriver/ghostdriver/internal/assemble"
	"github.com/ghostdriver/ghostdriver/internal/attr"
	"github.com/ghostdriver/ghostdriver/internal/attr/attrpdata"
	"github.com/ghostdriver/ghostdriver/internal/metadata"
)

// executableName is the process's name as far as the job tells it: the enricher's
// process.executable.name (basename of /proc/<pid>/exe) when it ran, else the kernel
// comm, which is the submitting *thread's* name and so the process's only when that
// thread is the main thread (TID == PID).
func executableName(j *assemble.Job) string {
	if v := lookupStr(j.Resource, metadata.AttrProcessExecutableName); v != "" {
		return v
	}
	if j.PID != 0 && j.TID == j.PID {
		return j.Comm
	}
	return ""
}

// serviceName is the enricher's service.name, else the executable name as far as known.
func serviceName(j *assemble.Job) string {
	if v := lookupStr(j.Resource, metadata.AttrServiceName); v != "" {
		return v
	}
	return executableName(j)
}

// lookupStr returns the value of key in attrs as a string ("" when absent).
func lookupStr(attrs []attr.Attribute, key string) string {
	if len(attrs) == 0 {
		return ""
	}
	if v, ok := attr.Lookup(attrs, key); ok {
		if v.Kind == attr.KindString {
			return v.Str
		}
		return v.AsString()
	}
	return ""
}

// putAttrs copies tenant attributes into m, replacing keys that are already there.
func putAttrs(m pcommon.Map, attrs []attr.Attribute) { attrpdata.Put(m, attrs) }
