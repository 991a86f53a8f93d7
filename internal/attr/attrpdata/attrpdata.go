// Package attrpdata puts the stages' pdata-free attributes (internal/attr) into pcommon
// maps. It is the one conversion, used by emit for job spans and resources and by the
// CUDA path's resource hook; it lives apart from internal/attr so that the packages that
// only carry attributes (assemble, tenant, enrich) import no pdata.
package attrpdata

import (
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/ghostdriver/ghostdriver/internal/attr"
)

// Put copies attrs into m, in order: later keys of attrs overwrite earlier ones and keys
// already in m.
func Put(m pcommon.Map, attrs []attr.Attribute) {
	for i := range attrs {
		PutValue(m.PutEmpty(attrs[i].Key), attrs[i].Value)
	}
}

// PutValue sets dst to v (an empty value stays empty).
func PutValue(dst pcommon.Value, v attr.Value) {
	switch v.Kind {
	case attr.KindString:
		dst.SetStr(v.Str)
	case attr.KindBool:
		dst.SetBool(v.Bool)
	case attr.KindInt:
		dst.SetInt(v.Int)
	case attr.KindDouble:
		dst.SetDouble(v.Double)
	case attr.KindBytes:
		dst.SetEmptyBytes().FromRaw(v.Bytes)
	case attr.KindArray:
		s := dst.SetEmptySlice()
		s.EnsureCapacity(len(v.Array))
		for _, e := range v.Array {
			PutValue(s.AppendEmpty(), e)
		}
	case attr.KindMap:
		Put(dst.SetEmptyMap(), v.Map)
	}
}
