// Optional metric dimensions (metadata.MetricsConfig.Dimensions): how each allowed key
// gets its value from a job. Tenant dimensions come from the enricher's Job.Resource and
// Job.Attrs; without an enricher (replay) only service.name and process.executable.name
// can have a value (the executable name from the main thread's comm).

package emit

import (
	"strings"

	"github.com/ghostdriver/ghostdriver/internal/assemble"
	"github.com/ghostdriver/ghostdriver/internal/metadata"
)

// dimensionValues maps every key of metadata.AllowedDimensions to its value extractor.
// An empty value leaves the attribute out of the data point.
var dimensionValues = map[string]func(*assemble.Job) string{
	metadata.AttrServiceName:           serviceName,
	metadata.AttrProcessExecutableName: executableName,
	metadata.AttrContainerID:           func(j *assemble.Job) string { return lookupStr(j.Resource, metadata.AttrContainerID) },
	metadata.AttrK8sPodUID:             func(j *assemble.Job) string { return lookupStr(j.Resource, metadata.AttrK8sPodUID) },
	metadata.AttrDRMClientName:         func(j *assemble.Job) string { return lookupStr(j.Attrs, metadata.AttrDRMClientName) },
}

// dimensionSep joins dimension values into one comparable series key.
const dimensionSep = "\x00"

// dimensions extracts the configured dimensions of a job, in configuration order.
type dimensions struct {
	keys []string
	get  []func(*assemble.Job) string
}

func newDimensions(keys []string) dimensions {
	d := dimensions{}
	for _, k := range keys {
		if f, ok := dimensionValues[k]; ok { // Validate rejected the others
			d.keys = append(d.keys, k)
			d.get = append(d.get, f)
		}
	}
	return d
}

// key returns the job's dimension values joined; "" (no allocation) when none configured.
func (d *dimensions) key(j *assemble.Job) string {
	switch len(d.get) {
	case 0:
		return ""
	case 1:
		return d.get[0](j)
	}
	vals := make([]string, len(d.get))
	for i, f := range d.get {
		vals[i] = f(j)
	}
	return strings.Join(vals, dimensionSep)
}

// values splits a key back into one value per configured dimension.
func (d *dimensions) values(key string) []string {
	switch len(d.keys) {
	case 0:
		return nil
	case 1:
		return []string{key}
	}
	return strings.Split(key, dimensionSep)
}
