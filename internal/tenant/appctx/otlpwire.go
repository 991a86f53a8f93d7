// Hand-rolled protobuf decoding of the OTEL_CTX payload (go.opentelemetry.io/proto/otlp is
// not in the module graph; the few messages involved are stable):
//
//	ProcessContext { Resource resource = 1; repeated KeyValue attributes = 2; }
//	Resource       { repeated KeyValue attributes = 1; uint32 dropped_attributes_count = 2; entity_refs = 3 (skipped) }
//	KeyValue       { string key = 1; AnyValue value = 2; }
//	AnyValue       { oneof: string 1, bool 2, int64 3, double 4, ArrayValue 5, KeyValueList 6, bytes 7 }
//	ArrayValue     { repeated AnyValue values = 1; }   KeyValueList { repeated KeyValue values = 1; }
//
// Unknown fields are skipped, as protobuf readers must; wrong wire types are errors.

package appctx

import (
	"fmt"
	"math"
	"strings"

	"github.com/ghostdriver/ghostdriver/internal/attr"
	"google.golang.org/protobuf/encoding/protowire"
)

// ProcessContext is the decoded OTEL_CTX payload.
type ProcessContext struct {
	// Resource is the SDK's resource, attribute order as published.
	Resource []attr.Attribute
	// DroppedAttributes is the resource's dropped_attributes_count.
	DroppedAttributes uint32
	// Extra are the additional attributes (field 2): where OTEP 4947's
	// threadlocal.schema_version and threadlocal.attribute_key_map live.
	Extra []attr.Attribute
}

// ThreadLocalSchema is what OTEP 4947 publishes in the process context.
type ThreadLocalSchema struct {
	// SchemaVersion, e.g. "tlsdesc_v1_dev"; empty when the process publishes no thread context.
	SchemaVersion string
	// KeyMap maps a record's key index to an attribute name.
	KeyMap []string
}

// Keys of OTEP 4947's thread-local reference data in the process context.
const (
	ThreadLocalSchemaKey = "threadlocal.schema_version"
	ThreadLocalKeyMapKey = "threadlocal.attribute_key_map"
)

// ThreadLocal extracts the OTEP 4947 reference data, looking in the extra attributes first
// and the resource second (early writers put it in the resource).
func (pc ProcessContext) ThreadLocal() ThreadLocalSchema {
	var s ThreadLocalSchema
	for _, attrs := range [][]attr.Attribute{pc.Resource, pc.Extra} {
		if v, ok := attr.Lookup(attrs, ThreadLocalSchemaKey); ok && v.Kind == attr.KindString {
			s.SchemaVersion = v.Str
		}
		if v, ok := attr.Lookup(attrs, ThreadLocalKeyMapKey); ok && v.Kind == attr.KindArray {
			s.KeyMap = s.KeyMap[:0]
			for _, e := range v.Array {
				s.KeyMap = append(s.KeyMap, e.Str) // non-strings leave a hole ("")
			}
		}
	}
	return s
}

const maxValueDepth = 8

// anyValueWireTypes is the wire type of each AnyValue oneof field, by field number.
var anyValueWireTypes = [...]protowire.Type{1: protowire.BytesType, 2: protowire.VarintType,
	3: protowire.VarintType, 4: protowire.Fixed64Type, 5: protowire.BytesType, 6: protowire.BytesType,
	7: protowire.BytesType}

// DecodeProcessContext decodes a payload. It is bounded by the payload (no allocation
// larger than the input) and by a nesting depth of 8.
func DecodeProcessContext(b []byte) (ProcessContext, error) {
	var pc ProcessContext
	if len(b) > MaxProcessContextPayload {
		return pc, fmt.Errorf("%w: payload of %d bytes", ErrProcessContext, len(b))
	}
	err := walk(b, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
		switch {
		case num == 1 && typ == protowire.BytesType:
			return walk(v, func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error {
				switch {
				case num == 1 && typ == protowire.BytesType:
					kv, err := decodeKeyValue(v, 0)
					if err != nil {
						return err
					}
					pc.Resource = append(pc.Resource, kv)
				case num == 2 && typ == protowire.VarintType:
					pc.DroppedAttributes = uint32(x)
				case num <= 2:
					return wireTypeErr("Resource", num, typ)
				}
				return nil
			})
		case num == 2 && typ == protowire.BytesType:
			kv, err := decodeKeyValue(v, 0)
			if err != nil {
				return err
			}
			pc.Extra = append(pc.Extra, kv)
		case num <= 2:
			return wireTypeErr("ProcessContext", num, typ)
		}
		return nil
	})
	if err != nil {
		return ProcessContext{}, err
	}
	return pc, nil
}

func decodeKeyValue(b []byte, depth int) (attr.Attribute, error) {
	var kv attr.Attribute
	err := walk(b, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
		switch {
		case num == 1 && typ == protowire.BytesType:
			kv.Key = utf8String(v)
		case num == 2 && typ == protowire.BytesType:
			val, err := decodeAnyValue(v, depth+1)
			if err != nil {
				return err
			}
			kv.Value = val
		case num <= 2:
			return wireTypeErr("KeyValue", num, typ)
		}
		return nil
	})
	return kv, err
}

func decodeAnyValue(b []byte, depth int) (attr.Value, error) {
	if depth > maxValueDepth {
		return attr.Value{}, fmt.Errorf("%w: values nested deeper than %d", ErrProcessContext, maxValueDepth)
	}
	var val attr.Value
	err := walk(b, func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error {
		if num < 1 || int(num) >= len(anyValueWireTypes) {
			return nil // a newer AnyValue variant: skip it
		}
		if anyValueWireTypes[num] != typ {
			return wireTypeErr("AnyValue", num, typ)
		}
		val = attr.Value{} // oneof: the last one wins
		switch num {
		case 1:
			val = attr.Value{Kind: attr.KindString, Str: utf8String(v)}
		case 2:
			val = attr.Value{Kind: attr.KindBool, Bool: x != 0}
		case 3:
			val = attr.Value{Kind: attr.KindInt, Int: int64(x)}
		case 4:
			val = attr.Value{Kind: attr.KindDouble, Double: math.Float64frombits(x)}
		case 7:
			val = attr.Value{Kind: attr.KindBytes, Bytes: append([]byte(nil), v...)}
		case 5:
			val.Kind = attr.KindArray
			return walk(v, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
				if num != 1 {
					return nil
				}
				if typ != protowire.BytesType {
					return wireTypeErr("ArrayValue", num, typ)
				}
				e, err := decodeAnyValue(v, depth+1)
				val.Array = append(val.Array, e)
				return err
			})
		case 6:
			val.Kind = attr.KindMap
			return walk(v, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
				if num != 1 {
					return nil
				}
				if typ != protowire.BytesType {
					return wireTypeErr("KeyValueList", num, typ)
				}
				kv, err := decodeKeyValue(v, depth+1)
				val.Map = append(val.Map, kv)
				return err
			})
		}
		return nil
	})
	return val, err
}

// walk calls fn for every field of message b. For bytes fields v is the payload, for
// varint and fixed fields x is the value. Groups and malformed input are errors.
func walk(b []byte, fn func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return fmt.Errorf("%w: %v", ErrProcessContext, protowire.ParseError(n))
		}
		b = b[n:]
		var (
			v []byte
			x uint64
		)
		switch typ {
		case protowire.VarintType:
			x, n = protowire.ConsumeVarint(b)
		case protowire.Fixed64Type:
			x, n = protowire.ConsumeFixed64(b)
		case protowire.Fixed32Type:
			var x32 uint32
			x32, n = protowire.ConsumeFixed32(b)
			x = uint64(x32)
		case protowire.BytesType:
			v, n = protowire.ConsumeBytes(b)
		default:
			return fmt.Errorf("%w: unsupported wire type %d", ErrProcessContext, typ)
		}
		if n < 0 {
			return fmt.Errorf("%w: %v", ErrProcessContext, protowire.ParseError(n))
		}
		b = b[n:]
		if err := fn(num, typ, v, x); err != nil {
			return err
		}
	}
	return nil
}

func wireTypeErr(msg string, num protowire.Number, typ protowire.Type) error {
	return fmt.Errorf("%w: %s field %d has wire type %d", ErrProcessContext, msg, num, typ)
}

func utf8String(b []byte) string { return strings.ToValidUTF8(string(b), "\uFFFD") }
