// The JobEncoder's span attributes, in both encodings: the builder's own (spanmodel.go's
// tables, keys encoded once) and the tenant's (internal/attr values of any kind). They
// follow pcommon.Map's rules as the builder fills it: a key put again keeps its first
// position and takes the last value, in nested maps too (attrpdata.Put).

package emit

import (
	"encoding/base64"
	"encoding/binary"
	"math"
	"strconv"

	"github.com/ghostdriver/ghostdriver/internal/assemble"
	"github.com/ghostdriver/ghostdriver/internal/attr"
)

// spanAttr is one attribute: a string, int or bool of the builder's own (k: its key,
// encoded once), or a tenant attribute's value of any kind (val).
type spanAttr struct {
	key  string
	k    *attrKey
	kind attr.Kind
	str  string
	num  int64 // int; bool as 0 or 1
	val  *attr.Value
}

// attrKey is a key of the builder's own attributes with its encodings made once: the
// JSON KeyValue object's start and the protobuf KeyValue's key field.
type attrKey struct {
	name  string
	json  []byte // {"key":"name","value":
	proto []byte // field 1, the name
}

func newAttrKey(name string) *attrKey {
	return &attrKey{name: name, json: appendKeyValueStart(nil, name), proto: appendStringField(nil, 0xa, name)}
}

func strAttr(k *attrKey, v string) spanAttr {
	return spanAttr{key: k.name, k: k, kind: attr.KindString, str: v}
}

// jobAttrs appends the attributes of j's gpu.job span: the table's (spanmodel.go), then
// the tenant's, as the SpanBuilder puts them into its map.
func jobAttrs(dst []spanAttr, j *assemble.Job) []spanAttr {
	dst = appendOwnAttrs(dst, jobAttributes[:], j)
	for i := range j.Attrs {
		a := &j.Attrs[i]
		dst = putSpanAttr(dst, spanAttr{key: a.Key, kind: a.Value.Kind, val: &a.Value})
	}
	return dst
}

// putSpanAttr is pcommon.Map's put: a key already there keeps its place, with a's value.
func putSpanAttr(dst []spanAttr, a spanAttr) []spanAttr {
	for i := range dst {
		if dst[i].key == a.key {
			dst[i] = a
			return dst
		}
	}
	return append(dst, a)
}

// appendSpanAttrsJSON writes the attributes array (kv: the encoder's cache, or nil).
func appendSpanAttrsJSON(dst []byte, attrs []spanAttr, kv *kvCache) []byte {
	dst = append(dst, '[')
	for i := range attrs {
		a := &attrs[i]
		if i > 0 {
			dst = append(dst, ',')
		}
		if a.k != nil && a.kind == attr.KindString && kv != nil {
			dst = append(dst, kv.get(a.k, a.str)...)
			continue
		}
		if a.k != nil {
			dst = append(dst, a.k.json...)
		} else {
			dst = appendKeyValueStart(dst, a.key)
		}
		switch {
		case a.val != nil:
			dst = appendAttrValueJSON(dst, a.val)
		case a.kind == attr.KindString:
			dst = append(dst, `{"stringValue":`...)
			dst = append(appendString(dst, a.str), '}')
		case a.kind == attr.KindInt:
			dst = append(dst, `{"intValue":"`...)
			dst = append(strconv.AppendInt(dst, a.num, 10), '"', '}')
		case a.kind == attr.KindBool:
			dst = append(dst, `{"boolValue":`...)
			dst = append(strconv.AppendBool(dst, a.num != 0), '}')
		}
		dst = append(dst, '}')
	}
	return append(dst, ']')
}

// appendSpanAttrProto writes one KeyValue field with tag (kv: the encoder's cache, or
// nil).
func appendSpanAttrProto(dst []byte, tag byte, a *spanAttr, kv *kvCache) []byte {
	if a.k != nil {
		if a.kind == attr.KindString && kv != nil {
			return append(append(dst, tag), kv.get(a.k, a.str)...)
		}
		return appendOwnAttrProto(append(dst, tag), a)
	}
	var at, vat int
	dst, at = openMsg(dst, tag, 1)
	dst, vat = openMsg(dst, 0x12, 1)
	switch {
	case a.val != nil:
		dst = appendAttrValueProto(dst, a.val)
	case a.kind == attr.KindString:
		dst = appendStringField(dst, 0xa, a.str)
	case a.kind == attr.KindInt:
		dst = appendVarint(append(dst, 0x18), uint64(a.num))
	case a.kind == attr.KindBool:
		dst = append(dst, 0x10, byte(a.num))
	}
	dst = closeMsg(dst, vat, 1)
	if a.key != "" {
		dst = appendStringField(dst, 0xa, a.key)
	}
	return closeMsg(dst, at, 1)
}

// appendOwnAttrProto writes the length and content of a KeyValue of the builder's own
// (a.k set): its lengths are known before writing, so nothing is moved.
func appendOwnAttrProto(dst []byte, a *spanAttr) []byte {
	var value int // the AnyValue's length
	switch a.kind {
	case attr.KindString:
		value = 1 + varintLen(uint64(len(a.str))) + len(a.str)
	case attr.KindInt:
		value = 1 + varintLen(uint64(a.num))
	case attr.KindBool:
		value = 2
	}
	dst = appendVarint(dst, uint64(1+varintLen(uint64(value))+value+len(a.k.proto)))
	dst = appendVarint(append(dst, 0x12), uint64(value))
	switch a.kind {
	case attr.KindString:
		dst = appendStringField(dst, 0xa, a.str)
	case attr.KindInt:
		dst = appendVarint(append(dst, 0x18), uint64(a.num))
	case attr.KindBool:
		dst = append(dst, 0x10, byte(a.num))
	}
	return append(dst, a.k.proto...)
}

// appendAttrValueJSON writes a tenant attribute's value as attrpdata.PutValue would make
// it and AppendTracesJSON write it.
func appendAttrValueJSON(dst []byte, v *attr.Value) []byte {
	switch v.Kind {
	case attr.KindString:
		dst = append(dst, `{"stringValue":`...)
		dst = appendString(dst, v.Str)
	case attr.KindBool:
		dst = append(dst, `{"boolValue":`...)
		dst = strconv.AppendBool(dst, v.Bool)
	case attr.KindInt:
		dst = append(dst, `{"intValue":"`...)
		dst = strconv.AppendInt(dst, v.Int, 10)
		dst = append(dst, '"')
	case attr.KindDouble:
		dst = append(dst, `{"doubleValue":`...)
		dst = appendFloat(dst, v.Double)
	case attr.KindBytes:
		dst = append(dst, `{"bytesValue":"`...)
		dst = base64.StdEncoding.AppendEncode(dst, v.Bytes)
		dst = append(dst, '"')
	case attr.KindArray:
		dst = append(dst, `{"arrayValue":{`...)
		if len(v.Array) > 0 {
			dst = append(dst, `"values":[`...)
			for i := range v.Array {
				if i > 0 {
					dst = append(dst, ',')
				}
				dst = appendAttrValueJSON(dst, &v.Array[i])
			}
			dst = append(dst, ']')
		}
		dst = append(dst, '}')
	case attr.KindMap:
		dst = append(dst, `{"kvlistValue":{`...)
		if len(v.Map) > 0 {
			dst = append(dst, `"values":[`...)
			first := true
			for i := range v.Map {
				k, val, ok := mapEntry(v.Map, i)
				if !ok {
					continue
				}
				if !first {
					dst = append(dst, ',')
				}
				first = false
				dst = append(appendAttrValueJSON(appendKeyValueStart(dst, k), val), '}')
			}
			dst = append(dst, ']')
		}
		dst = append(dst, '}')
	default: // empty, or a kind attrpdata leaves empty
		dst = append(dst, '{')
	}
	return append(dst, '}')
}

// appendAttrValueProto writes the AnyValue fields of a tenant attribute's value.
func appendAttrValueProto(dst []byte, v *attr.Value) []byte {
	switch v.Kind {
	case attr.KindString:
		return appendStringField(dst, 0xa, v.Str)
	case attr.KindBool:
		b := byte(0)
		if v.Bool {
			b = 1
		}
		return append(dst, 0x10, b)
	case attr.KindInt:
		return appendVarint(append(dst, 0x18), uint64(v.Int))
	case attr.KindDouble:
		return binary.LittleEndian.AppendUint64(append(dst, 0x21), math.Float64bits(v.Double))
	case attr.KindArray:
		var at int
		dst, at = openMsg(dst, 0x2a, 1)
		for i := range v.Array {
			var vat int
			dst, vat = openMsg(dst, 0xa, 1)
			dst = appendAttrValueProto(dst, &v.Array[i])
			dst = closeMsg(dst, vat, 1)
		}
		return closeMsg(dst, at, 1)
	case attr.KindMap:
		var at int
		dst, at = openMsg(dst, 0x32, 1)
		for i := range v.Map {
			k, val, ok := mapEntry(v.Map, i)
			if !ok {
				continue
			}
			dst = appendSpanAttrProto(dst, 0xa, &spanAttr{key: k, kind: val.Kind, val: val}, nil)
		}
		return closeMsg(dst, at, 1)
	case attr.KindBytes:
		return appendBytesField(dst, 0x3a, v.Bytes)
	}
	return dst // empty: no field
}

// mapEntry is entry i of a map as attrpdata.Put leaves it: ok only at a key's first
// position, with the value of its last one.
func mapEntry(m []attr.Attribute, i int) (string, *attr.Value, bool) {
	k := m[i].Key
	for p := 0; p < i; p++ {
		if m[p].Key == k {
			return "", nil, false
		}
	}
	last := i
	for n := i + 1; n < len(m); n++ {
		if m[n].Key == k {
			last = n
		}
	}
	return k, &m[last].Value, true
}
